/**
 * The plan JSON (307) and the configuration version (302) as the platform serves them: with the run's access
 * token only, each to a short-lived blob link that needs no token. Read by a test integrator that holds the token
 * (runtask serve deliberately never hands it to its handlers: their token-less download gets 401).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startRunTaskPlatform } from '../../../src/emulator/runtask/platform.js';
import { defaultConfigurationVersion, defaultPlanJson, tarGz } from '../../../src/runtask/send/defaults.js';
import { freePort, sendCli, sendFast, startServe } from './helpers.js';
import { doc, startFakeIntegrator, type IntegratorTools } from './integrators.js';
import { tempDir } from '../../helpers/tmp.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

interface Fetched {
  status: number;
  location: string | null;
  bytes: Buffer;
}

async function get(url: string, token?: string): Promise<Fetched> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const response = await fetch(url, { redirect: 'manual', headers });
  return {
    status: response.status,
    location: response.headers.get('location'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** Lists and reads a .tar.gz with the real tar binary. */
function untar(bytes: Buffer): { names: string[]; mainTf: string } {
  const file = join(dir, `cv-${Math.random()}.tar.gz`);
  writeFileSync(file, bytes);
  const list = spawnSync('tar', ['-tzf', file], { encoding: 'utf8' });
  const main = spawnSync('tar', ['-xzOf', file, 'main.tf'], { encoding: 'utf8' });
  expect(list.status).toBe(0);
  return { names: list.stdout.trim().split('\n'), mainTf: main.stdout };
}

describe('an integrator with the access token', () => {
  it('follows the 307 (plan JSON) and the 302 (configuration version); the blob links need no token', async () => {
    const seen: Record<string, Fetched> = {};
    const fake = await startFakeIntegrator(async (request, tools) => {
      const token = String(request.json.access_token);
      seen.planNoToken = await get(String(request.json.plan_json_api_url));
      seen.plan = await get(String(request.json.plan_json_api_url), token);
      seen.planBlob = await get(seen.plan.location!);
      seen.cvNoToken = await get(String(request.json.configuration_version_download_url));
      seen.cvWrongToken = await get(String(request.json.configuration_version_download_url), 'x.atlasv1.y');
      seen.cv = await get(String(request.json.configuration_version_download_url), token);
      seen.cvBlob = await get(seen.cv.location!);
      await tools.patch(doc('passed'));
    });
    try {
      const result = await sendFast(fake.url, {}, { json: true });
      expect(result.exitCode).toBe(0);
      const origin = new URL(String(fake.received[0]!.json.task_result_callback_url)).origin;
      expect(seen.planNoToken!.status).toBe(401);
      expect(seen.plan!.status).toBe(307);
      expect(seen.plan!.location).toMatch(
        new RegExp(`^${origin}/_archivist/v1/object/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`),
      );
      expect(seen.planBlob!.status).toBe(200);
      expect(JSON.parse(seen.planBlob!.bytes.toString('utf8'))).toMatchObject({
        format_version: '1.2',
        resource_changes: [{ address: 'terraform_data.example', change: { actions: ['create'] } }],
      });
      expect([seen.cvNoToken!.status, seen.cvWrongToken!.status]).toEqual([401, 401]);
      expect(seen.cv!.status).toBe(302);
      expect(seen.cv!.location).toContain(`${origin}/_archivist/v1/object/`);
      expect(seen.cvBlob!.status).toBe(200);
      expect(untar(seen.cvBlob!.bytes)).toEqual({
        names: ['main.tf'],
        mainTf: 'resource "terraform_data" "example" {\n  input = "hello"\n}\n',
      });
      expect(
        (result.report!.downloads as Array<{ what: string; http: number }>).map((d) => `${d.what} ${d.http}`),
      ).toEqual([
        'plan-json 401',
        'plan-json 307',
        'blob 200',
        'configuration-version 401',
        'configuration-version 401',
        'configuration-version 302',
        'blob 200',
      ]);
    } finally {
      await fake.close();
    }
  });

  it('a request to a path the platform does not serve (a Go integrator reading its run) is in the timeline and --json (issue 33)', async () => {
    let runStatus: number | undefined;
    const integrator = async (request: { json: Record<string, unknown> }, tools: IntegratorTools) => {
      const origin = new URL(String(request.json.task_result_callback_url)).origin;
      const run = `${origin}/api/v2/runs/${String(request.json.run_id)}?include=plan`;
      runStatus = (await get(run, String(request.json.access_token))).status;
      await tools.patch(doc('passed'));
    };
    const fake = await startFakeIntegrator(integrator);
    const json = await startFakeIntegrator(integrator);
    try {
      const text = await sendFast(fake.url);
      expect(text.exitCode).toBe(0);
      expect(runStatus).toBe(404);
      expect(text.stdout).toMatch(
        /unserved {3}GET \/api\/v2\/runs\/run-\w+ → 404: not a path the local platform serves \(it serves the callback, the plan JSON, the configuration version and \/api\/v2\/ping\); a real platform may answer it\n/,
      );
      const report = (await sendFast(json.url, {}, { json: true })).report!;
      const unserved = report.unserved as Array<Record<string, unknown>>;
      expect(unserved.map(({ method, path, http }) => ({ method, path, http }))).toEqual([
        { method: 'GET', path: `/api/v2/runs/${String(json.received[0]!.json.run_id)}`, http: 404 },
      ]);
      expect(typeof unserved[0]!.at).toBe('number');
      // A verdict that fails says so in its hint: the 404 may be why the check went another way.
      const expecting = await startFakeIntegrator(integrator);
      const failing = await sendFast(expecting.url, { expect: 'failed' });
      await expecting.close();
      expect(failing.exitCode).toBe(1);
      expect(failing.stderr).toMatch(
        /The integrator also requested GET \/api\/v2\/runs\/run-\w+, which the local platform does not serve \(404, "unserved" in the timeline and the --json report\): a real platform may answer it\./,
      );
    } finally {
      await fake.close();
      await json.close();
    }
  });

  it('serves --config-version byte for byte', async () => {
    const file = join(dir, 'config.tar.gz');
    const archive = await tarGz([{ name: 'modules/x.tf', content: Buffer.from('# x\n') }], new Date(0));
    writeFileSync(file, archive);
    let blob: Buffer | undefined;
    const fake = await startFakeIntegrator(async (request, tools) => {
      const cv = await get(
        String(request.json.configuration_version_download_url),
        String(request.json.access_token),
      );
      blob = (await get(cv.location!)).bytes;
      await tools.patch(doc('passed'));
    });
    try {
      const result = await sendFast(fake.url, { configVersion: file, stage: 'pre_plan' });
      expect(result.exitCode).toBe(0);
      expect(blob?.equals(readFileSync(file))).toBe(true);
      expect(untar(blob!).names).toEqual(['modules/x.tf']);
    } finally {
      await fake.close();
    }
  });
});

describe('through runtask serve', () => {
  it('the handler gets the plan JSON from serve, but no token: its own configuration download gets 401', async () => {
    const port = await freePort();
    const out = tempDir('out', { parent: dir });
    const serve = await startServe(port, { env: { SEND_TEST_OUT: out, SEND_TEST_PROBE_CV: '1' } });
    try {
      const result = await sendCli(serve.url, port, ['--stage', 'post_plan']);
      expect(result.exitCode).toBe(0);
      const seen = JSON.parse(readFileSync(join(out, 'post_plan.json'), 'utf8')) as {
        plan: string;
        cvWithoutToken: number;
        payload: Record<string, unknown>;
      };
      expect(seen.plan).toBe(JSON.stringify(JSON.parse(seen.plan), null, 2) + '\n');
      expect(seen.cvWithoutToken).toBe(401);
      expect(seen.payload).not.toHaveProperty('access_token');
      expect(result.stdout).toContain('download   GET plan JSON → 307');
      expect(result.stdout).toContain('download   GET configuration version → 401: no token');
    } finally {
      await serve.stop();
    }
  });
});

describe('the links', () => {
  it('live one minute: the plan JSON link answers 403 after that, and a fresh 307 gives a new one', async () => {
    let clock = 1_700_000_000_000;
    const platform = await startRunTaskPlatform({
      progressWindowMs: 60_000,
      maxDurationMs: 60_000,
      now: () => clock,
    });
    try {
      const task = platform.issueRun({
        stage: 'post_plan',
        enforcement: 'mandatory',
        outcomesOffered: true,
        organization: 'org',
        workspace: 'ws',
        planJson: defaultPlanJson(new Date(clock)),
        configurationVersion: await defaultConfigurationVersion(new Date(clock)),
      });
      const plan = await get(task.issued.planJsonApiUrl!, task.issued.accessToken);
      expect(plan.status).toBe(307);
      clock += 59_000;
      expect((await get(plan.location!)).status).toBe(200);
      clock += 2_000;
      const expired = await get(plan.location!);
      expect(expired.status).toBe(403);
      expect(expired.bytes.toString('utf8')).toContain('not a valid download link, or it has expired');
      const again = await get(task.issued.planJsonApiUrl!, task.issued.accessToken);
      expect((await get(again.location!)).status).toBe(200);
      const forged = plan.location!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      expect((await get(forged)).status).toBe(403);
    } finally {
      await platform.close();
    }
  });

  it('pre_plan has no plan: its token cannot read one (404)', async () => {
    const platform = await startRunTaskPlatform({ progressWindowMs: 60_000, maxDurationMs: 60_000 });
    try {
      const now = new Date();
      const setup = {
        enforcement: 'mandatory',
        outcomesOffered: true,
        organization: 'o',
        workspace: 'w',
      } as const;
      const files = {
        planJson: defaultPlanJson(now),
        configurationVersion: await defaultConfigurationVersion(now),
      };
      const prePlan = platform.issueRun({ ...setup, ...files, stage: 'pre_plan' });
      const postPlan = platform.issueRun({ ...setup, ...files, stage: 'post_plan' });
      expect(prePlan.issued.planJsonApiUrl).toBeUndefined();
      expect((await get(postPlan.issued.planJsonApiUrl!, prePlan.issued.accessToken)).status).toBe(404);
      expect((await get(postPlan.issued.planJsonApiUrl!, postPlan.issued.accessToken)).status).toBe(307);
      expect((await get(`${platform.url}/api/v2/ping`)).status).toBe(204);
    } finally {
      await platform.close();
    }
  });
});
