/**
 * Stopping and starting again. SIGTERM (the CLI's signal): new requests get 503, running checks get `--grace`,
 * then every unfinished job (running or queued) is reported failed ("integrator stopped") and the command exits
 * 0. A restart with the same `--state-dir` delivers a final result the previous process had not delivered, and
 * reports `failed` for a check that was cut short (it does not run the handler again).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/main.js';
import { RESTARTED_MESSAGE } from '../../../src/runtask/server/jobs.js';
import { Capture, LineCapture } from '../../helpers/cli.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import {
  HANDLER_COMMAND,
  KEY,
  bytesOf,
  journaled,
  journaledIds,
  post,
  requestFor,
  integratorsPerTest,
  startTestIntegrator,
} from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';
import { tempDir } from '../../helpers/tmp.js';

const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);
let dir: string;

beforeAll(() => {
  dir = tempDir();
});

function journalFiles(stateDir: string): string[] {
  return journaledIds(stateDir);
}

describe('SIGTERM', () => {
  it('refuses new requests, waits --grace, reports unfinished jobs as failed, exits 0', async () => {
    const stateDir = join(dir, 'sigterm');
    const stdout = new LineCapture();
    const stderr = new Capture();
    const controller = new AbortController();
    const exit = run({
      argv: [
        'runtask',
        'serve',
        '--json',
        '--port',
        '0',
        '--exec',
        HANDLER_COMMAND,
        '--platform-host',
        platform.url,
        '--grace',
        // The late request and /healthz below must land within it: 3 s, so that a stalled machine cannot close
        // the server under them first.
        '3s',
        '--max-jobs',
        '1',
        '--state-dir',
        stateDir,
        '--heartbeat',
        '2m',
      ],
      env: { PATH: process.env.PATH, TEST_PLATFORM_URL: platform.url, RUNTASK_HMAC_KEY: KEY },
      cwd: dir,
      homeDir: dir,
      stdout,
      stderr,
      stdinIsTTY: false,
      signal: controller.signal,
    });
    const startLine = JSON.parse(await stdout.firstLine) as {
      url: string;
      hmac: boolean;
      platformHosts: string[];
    };
    expect(startLine).toMatchObject({ hmac: true, platformHosts: [platform.url] });
    const running = requestFor(POST_PLAN_REQUEST, platform);
    const queued = requestFor(POST_PLAN_REQUEST, platform);
    platform.release(running.run_id, { hang: true });
    await post(startLine.url, bytesOf(running));
    await platform.waitForHandler(running.run_id);
    await post(startLine.url, bytesOf(queued));
    await platform.waitForCallbacks(queued.task_result_id, 'running');

    controller.abort('SIGTERM');
    await new Promise((resolve) => setImmediate(resolve));
    const late = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(startLine.url, bytesOf(late))).status).toBe(503);
    expect((await fetch(new URL('/healthz', startLine.url))).status).toBe(503);

    expect(await exit).toBe(0);
    for (const request of [running, queued]) {
      const final = platform.callbacks(request.task_result_id).at(-1)!;
      expect(statusOf(final)).toBe('failed');
      expect(JSON.stringify(final.json)).toContain('integrator stopped');
    }
    expect(platform.callbacks(late.task_result_id)).toEqual([]);
    expect(journalFiles(stateDir)).toEqual([]);
    // Not a TTY: one JSON object per line, and no secret in any of them.
    const lines = stderr.text.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).toContain('serve.stopped');
    expect(stderr.text).not.toContain(running.access_token as string);
    expect(stderr.text).not.toContain(KEY);
  });
});

describe('restart with the same --state-dir', () => {
  it('runs a job whose check never started (it waited for a slot), and reports the started one failed', async () => {
    const stateDir = join(dir, 'restart-never-started');
    const first = await startIntegrator({ stateDir, maxJobs: 1 });
    const [running, waiting] = [
      requestFor(POST_PLAN_REQUEST, platform),
      requestFor(POST_PLAN_REQUEST, platform),
    ];
    platform.release(running.run_id, { hang: true });
    await post(first.integrator.url, bytesOf(running));
    await platform.waitForHandler(running.run_id);
    await post(first.integrator.url, bytesOf(waiting));
    await platform.waitFor((r) => r.path.includes(waiting.task_result_id) && statusOf(r) === 'running');
    expect(journaled(stateDir).get(running.task_result_id)?.checkStartedAt).toEqual(expect.any(String));
    expect(journaled(stateDir).get(waiting.task_result_id)).toMatchObject({ checkStartedAt: null });
    await first.integrator.destroy();

    const second = await startIntegrator({ stateDir });
    const [failed] = await platform.waitForCallbacks(running.task_result_id, 'failed');
    expect(failed!.json).toMatchObject({ data: { attributes: { message: RESTARTED_MESSAGE } } });
    await platform.waitForHandler(waiting.run_id);
    platform.release(waiting.run_id, { stdout: 'checked after the restart\n', exitCode: 0 });
    await platform.waitForCallbacks(waiting.task_result_id, 'passed');
    await second.integrator.jobs.idle();
    expect(journalFiles(stateDir)).toEqual([]);
    for (const request of [running, waiting]) {
      const runs = platform.requests.filter(
        (r) => r.path === '/handler/start' && (r.json as { key: string }).key === request.run_id,
      );
      expect(runs).toHaveLength(1);
    }
  });

  it('reports a check that was cut short as failed, without running it again', async () => {
    const stateDir = join(dir, 'restart-accepted');
    const first = await startIntegrator({ stateDir });
    const request = requestFor(POST_PLAN_REQUEST, platform);
    platform.release(request.run_id, { hang: true });
    await post(first.integrator.url, bytesOf(request));
    await platform.waitForHandler(request.run_id);
    expect(journalFiles(stateDir)).toEqual([request.task_result_id]);
    expect(statSync(join(stateDir, 'journal.jsonl')).mode & 0o777).toBe(0o600);
    const record = journaled(stateDir).get(request.task_result_id)!;
    expect(record).toMatchObject({ phase: 'accepted', id: request.task_result_id });
    expect(record.request.access_token).toBe(request.access_token);

    await first.integrator.destroy(); // as a crash: nothing reported, journal left behind
    expect(platform.callbacks(request.task_result_id).map(statusOf)).toEqual(['running']);

    const second = await startIntegrator({ stateDir });
    const [final] = await platform.waitForCallbacks(request.task_result_id, 'failed');
    expect(final!.json).toEqual({
      data: { type: 'task-results', attributes: { status: 'failed', message: RESTARTED_MESSAGE } },
    });
    await second.integrator.jobs.idle();
    expect(journalFiles(stateDir)).toEqual([]);
    expect(
      platform.requests.filter(
        (r) => r.path === '/handler/start' && (r.json as { key: string }).key === request.run_id,
      ),
    ).toHaveLength(1);
  });

  it('delivers a final result the previous process could not deliver', async () => {
    const stateDir = join(dir, 'restart-reporting');
    const first = await startIntegrator({ stateDir, callbackTimeoutMs: 60_000 });
    const request = requestFor(POST_PLAN_REQUEST, platform);
    await post(first.integrator.url, bytesOf(request));
    await platform.waitForCallbacks(request.task_result_id, 'running');
    platform.script(
      request.task_result_id,
      Array.from({ length: 10_000 }, () => ({ status: 503 })),
    );
    platform.release(request.run_id, { stdout: JSON.stringify({ status: 'passed', message: 'all good' }) });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
    const record = journaled(stateDir).get(request.task_result_id)!;
    expect(record).toMatchObject({ phase: 'reporting', result: { status: 'passed', message: 'all good' } });

    await first.integrator.destroy();
    platform.clearScript(request.task_result_id);
    const delivered = platform.callbacks(request.task_result_id).length;
    const second = await startIntegrator({ stateDir });
    await second.integrator.jobs.idle();
    const after = platform.callbacks(request.task_result_id).slice(delivered);
    expect(after).toHaveLength(1);
    expect(after[0]!.json).toEqual({
      data: { type: 'task-results', attributes: { status: 'passed', message: 'all good' } },
    });
    expect(journalFiles(stateDir)).toEqual([]);
  });

  it('refuses a state dir that another running integrator holds', async () => {
    const stateDir = join(dir, 'locked');
    await startIntegrator({ stateDir });
    await expect(startTestIntegrator(platform, { stateDir })).rejects.toThrow(
      /in use by another running integrator/,
    );
  });
});
