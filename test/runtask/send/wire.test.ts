/**
 * What `runtask send` puts on the wire, captured at a test receiver: the platform's headers, a signature equal
 * to what the real `openssl dgst -sha512 -hmac` prints over the exact bytes received (an empty header without a
 * key), and the documented fields of each stage in the documented order.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  POST_PLAN_REQUEST,
  PRE_PLAN_REQUEST,
  SIGNATURE_VECTOR,
  VERIFICATION_REQUEST,
} from '../documented-payloads.js';
import { KEY, sendFast } from './helpers.js';
import { doc, startFakeIntegrator, type FakeIntegrator, type Received } from './integrators.js';
import { tempDir } from '../../helpers/tmp.js';

/** The signature as the documented command computes it, by the real openssl binary. */
function openssl(body: Buffer | string, key: string): string {
  const run = spawnSync('openssl', ['dgst', '-sha512', '-hmac', key], { input: body });
  expect(run.status).toBe(0);
  return run.stdout.toString('utf8').trim().split('= ').pop()!;
}

let integrator: FakeIntegrator | undefined;
afterEach(async () => {
  await integrator?.close();
  integrator = undefined;
});

/** Sends one request to a receiver that answers 200 and reports `passed`; resolves with what it received. */
async function capture(
  args: Parameters<typeof sendFast>[1],
  env: Record<string, string> = {},
): Promise<Received> {
  integrator = await startFakeIntegrator(async (request, tools) => {
    if (request.json.access_token !== 'test-token') await tools.patch(doc('passed'));
  });
  const result = await sendFast(integrator.url, args, { env });
  expect(result.exitCode).toBe(0);
  expect(integrator.received).toHaveLength(1);
  return integrator.received[0]!;
}

const DOCUMENTED_ORDER = Object.keys(POST_PLAN_REQUEST);
const typeOf = (value: unknown): string => (value === null ? 'null' : typeof value);

it('the openssl parsing reproduces the documented signature vector', () => {
  expect(openssl(SIGNATURE_VECTOR.body, SIGNATURE_VECTOR.key)).toBe(SIGNATURE_VECTOR.signature);
});

describe('each stage', () => {
  it.each(['pre_plan', 'post_plan', 'pre_apply', 'post_apply'])(
    '%s: the platform headers, an openssl-equal signature, the documented fields in order',
    async (stage) => {
      const received = await capture({ stage }, { RUNTASK_HMAC_KEY: KEY });
      const names = received.rawHeaders.filter((_, i) => i % 2 === 0);
      expect(names).toEqual(expect.arrayContaining(['Content-Type', 'User-Agent', 'X-TFC-Task-Signature']));
      expect(names.map((n) => n.toLowerCase()).sort()).toEqual(
        ['connection', 'content-length', 'content-type', 'host', 'user-agent', 'x-tfc-task-signature'].sort(),
      );
      expect(received.headers['content-type']).toBe('application/json');
      expect(received.headers['user-agent']).toBe('TFC/1.0 (+https://app.terraform.io; TFC)');
      expect(received.headers['content-length']).toBe(String(received.body.length));
      const signature = received.headers['x-tfc-task-signature'];
      expect(signature).toMatch(/^[0-9a-f]{128}$/);
      expect(signature).toBe(openssl(received.body, KEY));

      const request = received.json;
      const expected =
        stage === 'pre_plan' ? DOCUMENTED_ORDER.filter((k) => k !== 'plan_json_api_url') : DOCUMENTED_ORDER;
      expect(Object.keys(request)).toEqual(expected);
      if (stage === 'pre_plan')
        expect(expected).toEqual(expect.arrayContaining(Object.keys(PRE_PLAN_REQUEST)));
      for (const key of expected) {
        expect([key, typeOf(request[key])]).toEqual([
          key,
          typeOf(POST_PLAN_REQUEST[key as keyof typeof POST_PLAN_REQUEST]),
        ]);
      }
      expect(request).toMatchObject({
        payload_version: 1,
        stage,
        capabilities: { outcomes: true },
        task_result_enforcement_level: 'mandatory',
        is_speculative: false,
        workspace_working_directory: '',
      });
      const origin = new URL(integrator!.url).origin.replace(/:\d+$/, '');
      expect(request.access_token).toMatch(/^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{67}$/);
      expect(request.task_result_id).toMatch(/^taskrs-[A-Za-z0-9]{16}$/);
      expect(request.run_id).toMatch(/^run-[A-Za-z0-9]{16}$/);
      expect(request.task_result_callback_url).toMatch(
        new RegExp(`^${origin}:\\d+/api/v2/task-results/[0-9a-f-]{36}/callback$`),
      );
      expect(request.configuration_version_download_url).toBe(
        `${new URL(String(request.task_result_callback_url)).origin}/api/v2/configuration-versions/${String(request.configuration_version_id)}/download`,
      );
      if (stage !== 'pre_plan')
        expect(request.plan_json_api_url).toMatch(/\/api\/v2\/plans\/plan-[A-Za-z0-9]{16}\/json-output$/);
      expect(received.body.toString('utf8')).toBe(JSON.stringify(request));
    },
  );
});

describe('options on the wire', () => {
  it('without a key, X-TFC-Task-Signature is sent and empty', async () => {
    const received = await capture({});
    expect(received.rawHeaders).toContain('X-TFC-Task-Signature');
    expect(received.headers['x-tfc-task-signature']).toBe('');
  });

  it('--hmac-key-file signs with the file key (one trailing newline dropped)', async () => {
    const file = join(tempDir('key'), 'key');
    writeFileSync(file, 'file key with spaces\n');
    const received = await capture({ hmacKeyFile: file });
    expect(received.headers['x-tfc-task-signature']).toBe(openssl(received.body, 'file key with spaces'));
  });

  it('--no-outcomes and --enforcement advisory', async () => {
    const received = await capture({ outcomes: false, enforcement: 'advisory' });
    expect(received.json).toMatchObject({
      capabilities: { outcomes: false },
      task_result_enforcement_level: 'advisory',
    });
  });

  it('--verification sends the registration request: test-token, stage and enforcement "test", signed', async () => {
    const received = await capture({ verification: true }, { RUNTASK_HMAC_KEY: KEY });
    expect(received.json).toMatchObject({
      payload_version: 1,
      access_token: 'test-token',
      stage: 'test',
      task_result_enforcement_level: 'test',
      organization_name: 'test-org',
      workspace_name: 'test-workspace',
    });
    expect(Object.keys(received.json)).toEqual(expect.arrayContaining(Object.keys(VERIFICATION_REQUEST)));
    expect(received.headers['x-tfc-task-signature']).toBe(openssl(received.body, KEY));
  });
});
