/**
 * The `--exec` handler contract: a JSON result on stdout decides; without one, exit code 0 is passed and
 * anything else failed with the last line as the message; an unusable JSON result fails the task; a handler
 * past `--timeout` is killed with everything it started and reported failed; `--max-jobs` queues the rest.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findJsonResult, lastLine } from '../../../src/runtask/server/handler/handlerResult.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { bytesOf, integratorsPerTest, post, requestFor, type TestIntegrator } from '../helpers.js';
import { TestPlatform, statusOf, type HandlerOrders } from '../platform.js';

const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);
/** The test's integrator, for `finalFor`. */
let t: TestIntegrator;

/** Runs one request with these handler orders and returns the final callback's attributes. */
async function finalFor(orders: HandlerOrders): Promise<{ status: string; message?: string; url?: string }> {
  const request = requestFor(POST_PLAN_REQUEST, platform);
  platform.release(request.run_id, orders);
  expect((await post(t.integrator.url, bytesOf(request))).status).toBe(200);
  const final = await platform.waitFor(
    (r) => r.path.includes(request.task_result_id) && ['passed', 'failed'].includes(statusOf(r) ?? ''),
  );
  return (final.json as { data: { attributes: { status: string; message?: string } } }).data.attributes;
}

/** True once the process is gone (or a zombie waiting for init to reap it). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') === true;
  } catch {
    return true;
  }
}

describe('reading the result', () => {
  it('exit code 0 → passed, with the last line as the message', async () => {
    t = await startIntegrator();
    expect(await finalFor({ stdout: 'checking 12 resources\nno findings\n\n', exitCode: 0 })).toEqual({
      status: 'passed',
      message: 'no findings',
    });
  });

  it('another exit code → failed, with the last line (stdout, else stderr) as the message', async () => {
    t = await startIntegrator();
    expect(await finalFor({ stdout: 'bucket is public\n', exitCode: 3 })).toEqual({
      status: 'failed',
      message: 'bucket is public',
    });
    expect(await finalFor({ stderr: 'policy file missing\n', exitCode: 2 })).toEqual({
      status: 'failed',
      message: 'policy file missing',
    });
    expect(await finalFor({ exitCode: 7 })).toEqual({
      status: 'failed',
      message: 'The check failed (exit code 7).',
    });
  });

  it('a JSON result decides, whatever the exit code; logging lines before it are fine', async () => {
    t = await startIntegrator();
    const json = { status: 'passed', message: '4 passed', url: 'https://checks.example.com/r/1' };
    expect(await finalFor({ stdout: JSON.stringify(json), exitCode: 1 })).toEqual(json);
    expect(
      await finalFor({ stdout: `starting\n${JSON.stringify({ ...json, status: 'failed' })}\n` }),
    ).toEqual({
      ...json,
      status: 'failed',
    });
  });

  it('an unusable JSON result fails the task and says why', async () => {
    t = await startIntegrator();
    const bad = await finalFor({ stdout: JSON.stringify({ status: 'running', message: 'hm' }), exitCode: 0 });
    expect(bad.status).toBe('failed');
    expect(bad.message).toContain('status must be one of passed, failed');
    const noId = await finalFor({
      stdout: JSON.stringify({ status: 'passed', outcomes: [{ description: 'x' }] }),
      exitCode: 0,
    });
    expect(noId).toMatchObject({ status: 'failed' });
    expect(noId.message).toContain('outcomes[0].id is missing');
  });

  it('finds the JSON result in stdout, and the last line otherwise', () => {
    expect(findJsonResult('{"status":"passed"}')).toEqual({ status: 'passed' });
    expect(findJsonResult('{\n  "status": "failed"\n}\n')).toEqual({ status: 'failed' });
    expect(findJsonResult('log line\n{"status":"failed","message":"m"}')).toEqual({
      status: 'failed',
      message: 'm',
    });
    expect(findJsonResult('log line\n{"level":"info"}')).toBeUndefined();
    expect(findJsonResult('plain text')).toBeUndefined();
    expect(lastLine('a\r\nb\r\n\r\n')).toBe('b');
  });

  it('a command that cannot be run → failed', async () => {
    t = await startIntegrator({ exec: './definitely-not-a-command-here' });
    const request = requestFor(POST_PLAN_REQUEST, platform);
    await post(t.integrator.url, bytesOf(request));
    const [final] = await platform.waitForCallbacks(request.task_result_id, 'failed');
    expect(JSON.stringify(final!.json)).toContain('not found');
  });
});

describe('limits on handlers', () => {
  it('kills a handler past --timeout, with the processes it started, and reports failed', async () => {
    // Long enough for the handler to start its child on a loaded machine before the kill (with 400 ms it was
    // sometimes killed first, and the test waited for a child that never came).
    t = await startIntegrator({ timeoutMs: 2000, timeoutText: '2s', killGraceMs: 300 });
    const request = requestFor(POST_PLAN_REQUEST, platform);
    platform.release(request.run_id, { hang: true, spawnChild: true });
    await post(t.integrator.url, bytesOf(request));
    const report = await platform.waitForHandler(request.run_id);
    const child = await platform.waitForChild(request.run_id);
    const [final] = await platform.waitForCallbacks(request.task_result_id, 'failed');
    expect(final!.json).toEqual({
      data: {
        type: 'task-results',
        attributes: { status: 'failed', message: 'The check did not finish within 2s and was stopped.' },
      },
    });
    expect(gone(report.pid)).toBe(true);
    // SIGTERM went to the whole group at once; give init a moment to reap the orphan.
    for (let i = 0; i < 100 && !gone(child); i++) await new Promise((r) => setTimeout(r, 20));
    expect(gone(child)).toBe(true);
    await t.integrator.jobs.idle();
    expect(t.leftovers()).toEqual([]);
  });

  it('runs at most --max-jobs handlers at once; the rest queue and say so', async () => {
    t = await startIntegrator({ maxJobs: 1 });
    const first = requestFor(POST_PLAN_REQUEST, platform);
    const second = requestFor(POST_PLAN_REQUEST, platform);
    await post(t.integrator.url, bytesOf(first));
    await platform.waitForHandler(first.run_id);
    await post(t.integrator.url, bytesOf(second));
    const [queued] = await platform.waitForCallbacks(second.task_result_id, 'running');
    expect(JSON.stringify(queued!.json)).toContain('Queued');
    expect(t.integrator.jobs.counts()).toEqual({ queued: 1, running: 1, reporting: 0 });
    expect(
      platform.requests.some(
        (r) => r.path === '/handler/start' && (r.json as { key: string }).key === second.run_id,
      ),
    ).toBe(false);

    platform.release(first.run_id, { exitCode: 0 });
    await platform.waitForHandler(second.run_id);
    platform.release(second.run_id, { exitCode: 0 });
    await platform.waitForCallbacks(second.task_result_id, 'passed');
    const starts = platform.requests
      .filter((r) => r.path === '/handler/start')
      .map((r) => (r.json as { key: string }).key);
    expect(starts.indexOf(second.run_id)).toBeGreaterThan(starts.indexOf(first.run_id));
    const firstFinal = platform.callbacks(first.task_result_id).find((r) => statusOf(r) === 'passed')!;
    const secondStart = platform.requests.find(
      (r) => r.path === '/handler/start' && (r.json as { key: string }).key === second.run_id,
    )!;
    expect(secondStart.at).toBeGreaterThanOrEqual(firstFinal.at - 50);
  });
});
