/**
 * `provider runtask send` as a command: every flag checked before anything listens or is sent (exit 2, saying
 * what to do), `--json` printing one document even then, and the help listing the command's options.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { sendFast } from '../../runtask/send/helpers.js';
import { startFakeIntegrator } from '../../runtask/send/integrators.js';
import { tempDir } from '../../helpers/tmp.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
  writeFileSync(join(dir, 'not-json.json'), '{"format_version": ');
  writeFileSync(join(dir, 'plan.json'), '{"format_version":"1.2"}');
});

const URL = 'http://127.0.0.1:9/';

describe('flags → exit 2, nothing sent', () => {
  it.each([
    ['no URL', [], /missing required argument 'integrator-url'/],
    [
      'a URL that is not http(s)',
      ['ftp://x/'],
      /the integrator URL must be an http:\/\/ or https:\/\/ URL, got "ftp:\/\/x\/"/,
    ],
    [
      'an unknown stage',
      [URL, '--stage', 'post-plan'],
      /--stage must be one of pre_plan, post_plan, pre_apply, post_apply, got "post-plan"/,
    ],
    [
      'an unknown enforcement level',
      [URL, '--enforcement', 'hard'],
      /--enforcement must be one of mandatory, advisory/,
    ],
    ['an unknown --expect', [URL, '--expect', 'errored'], /--expect must be one of passed, failed/],
    [
      '--expect with --verification',
      [URL, '--verification', '--expect', 'passed'],
      /--expect does not apply to --verification/,
    ],
    ['a bad duration', [URL, '--progress-window', 'soon'], /--progress-window is not a valid duration/],
    ['a bad port', [URL, '--port', '70000'], /--port must be a whole number between 0 and 65535/],
    ['--hmac-key-env naming an unset variable', [URL, '--hmac-key-env', 'NOPE'], /NOPE is not set/],
    ['a missing key file', [URL, '--hmac-key-file', 'nope.key'], /cannot read the HMAC key file/],
    [
      'a missing plan file',
      [URL, '--plan-json', 'nope.json'],
      /cannot read --plan-json .*nope\.json: ENOENT/,
    ],
    [
      'a plan that is not JSON',
      [URL, '--plan-json', 'not-json.json'],
      /--plan-json not-json\.json is not JSON/,
    ],
    [
      'a missing configuration version',
      [URL, '--config-version', 'nope.tar.gz'],
      /cannot read --config-version/,
    ],
    [
      'a bad --public-url',
      [URL, '--public-url', 'localhost:9000'],
      /--public-url must be an http:\/\/ or https:\/\/ URL/,
    ],
  ])('%s', async (_name, args, message) => {
    const result = await runCli(['runtask', 'send', ...args], { cwd: dir });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('a platform port already in use', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as AddressInfo;
    try {
      const result = await runCli(['runtask', 'send', URL, '--port', String(port)]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(`the local platform cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
      expect(result.stderr).toContain('pick another --port');
    } finally {
      busy.close();
    }
  });

  it('--json still prints one document', async () => {
    const result = await runCli(['runtask', 'send', URL, '--stage', 'nope', '--json'], { cwd: dir });
    expect(result.exitCode).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: 'usage' } });
  });
});

describe('the command', () => {
  it('is in the help with its options', async () => {
    const result = await runCli(['runtask', 'send', '--help']);
    expect(result.exitCode).toBe(0);
    for (const flag of [
      '--stage',
      '--hmac-key-env',
      '--hmac-key-file',
      '--plan-json',
      '--config-version',
      '--enforcement',
      '--no-outcomes',
      '--verification',
      '--expect',
      '--progress-window',
      '--max-duration',
      '--host',
      '--port',
      '--public-url',
    ]) {
      expect(result.stdout).toContain(flag);
    }
  });

  it('warns that pre_plan carries no plan, and puts --public-url in the request', async () => {
    // No callback: the made-up public host does not exist (and no test reaches the network).
    const fake = await startFakeIntegrator(() => undefined);
    try {
      const result = await sendFast(fake.url, {
        stage: 'pre_plan',
        planJson: join(dir, 'plan.json'),
        publicUrl: 'http://platform.example:9000/',
        progressWindow: '300ms',
      });
      expect(result.stderr).toContain(
        'warning: --plan-json is not served at pre_plan: that stage carries no plan',
      );
      const request = fake.received[0]!.json;
      expect(String(request.task_result_callback_url)).toMatch(
        /^http:\/\/platform\.example:9000\/api\/v2\/task-results\//,
      );
      expect(result.exitCode).toBe(6);
    } finally {
      await fake.close();
    }
  });

  it('Ctrl-C while waiting: the timeline so far, then exit 130', async () => {
    const controller = new AbortController();
    const fake = await startFakeIntegrator(() => controller.abort('SIGINT'));
    try {
      const result = await runCli(['runtask', 'send', fake.url], { signal: controller.signal });
      expect(result.exitCode).toBe(130);
      expect(result.stdout).toMatch(/request {4}POST .*\n/);
      expect(result.stdout).toMatch(/result {5}pending\nINTERRUPTED {2}stopped before the end\n$/);
      expect(result.stderr).toContain('error: interrupted while the run task was under way');
    } finally {
      await fake.close();
    }
  });
});
