/**
 * The integrator's state dir going wrong, with `node bin/provider.cjs runtask serve` spawned as a user runs it.
 * While it serves: the folder removed while a check runs (a temp cleaner) → the check still reports, the folder,
 * its lock and the job records come back, /healthz and the log say so; the folder unwritable → new requests get
 * 503 with Retry-After before any 200 (the platform retries), checks already accepted still report, and requests
 * are accepted again once the folder can be written. At start: an empty or garbage `integrator.lock` and job
 * records of the wrong shape are set aside (named in the log) instead of ending the start with exit 1; a lock
 * held by a live other process still refuses the start.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RESTARTED_MESSAGE } from '../../../src/runtask/server/jobs.js';
import { POST_PLAN_REQUEST, PRE_PLAN_REQUEST } from '../documented-payloads.js';
import { HANDLER_COMMAND, KEY, bytesOf, journaledIds, post, requestFor, sign } from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';
import {
  ensureBuilt,
  replaceWithFile,
  spawnServe,
  spawnServeExpectingExit,
  type ServeProcess,
} from '../serveProcess.js';
import { tempDir } from '../../helpers/tmp.js';

const platform = TestPlatform.perFile();
let dir: string;
const running: ServeProcess[] = [];

beforeAll(() => {
  ensureBuilt();
  dir = tempDir();
}, 120_000);
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exit;
  }
});

async function serve(stateDir: string): Promise<ServeProcess> {
  const p = await spawnServe({
    platform,
    stateDir,
    exec: HANDLER_COMMAND,
    key: KEY,
    cwd: dir,
    args: ['--max-jobs', '2', '--grace', '1s', '--callback-timeout', '20s'],
  });
  running.push(p);
  return p;
}

function jobFiles(stateDir: string): string[] {
  return journaledIds(stateDir);
}

async function finalOf(p: ServeProcess, taskResultId: string): Promise<string | undefined> {
  const final = await p.orExit(
    platform.waitFor(
      (r) =>
        r.method === 'PATCH' &&
        r.path.includes(taskResultId) &&
        ['passed', 'failed'].includes(statusOf(r) ?? ''),
    ),
  );
  return statusOf(final);
}

describe('runtask serve when its state dir fails while it serves', () => {
  it('keeps serving when the state dir is removed while a check runs: the check reports, the folder comes back, /healthz says so', async () => {
    const stateDir = join(dir, 'removed');
    const p = await serve(stateDir);
    const request = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(p.url, bytesOf(request))).status).toBe(200);
    await p.orExit(platform.waitForHandler(request.run_id));
    expect(jobFiles(stateDir)).toEqual([request.task_result_id]);

    // A temp cleaner; it tries again if the integrator's check re-creates a file while it removes (ENOTEMPTY).
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 5 });
    platform.release(request.run_id, { stdout: JSON.stringify({ status: 'passed', message: 'fine' }) });
    expect(await finalOf(p, request.task_result_id)).toBe('passed');
    expect(platform.callbacks(request.task_result_id).filter((r) => statusOf(r) !== 'running')).toHaveLength(
      1,
    );

    const restored = await p.waitForEvent('journal.restored');
    expect(restored).toMatchObject({ level: 'info', recreated: true });
    expect(p.events().find((l) => l.event === 'journal.failed')).toMatchObject({
      level: 'error',
      code: 'ENOENT',
    });
    const health = await p.health();
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');
    expect(health.body.store).toMatchObject({ status: 'ok', problems: 1, lastProblem: { code: 'ENOENT' } });
    // The folder and the lock are back, and the lock names this process.
    expect(JSON.parse(readFileSync(join(stateDir, 'integrator.lock'), 'utf8'))).toMatchObject({
      pid: p.child.pid,
    });

    // And it goes on taking jobs, journaled in the re-created folder.
    const next = requestFor(PRE_PLAN_REQUEST, platform);
    platform.release(next.run_id, { hang: true });
    expect((await post(p.url, bytesOf(next))).status).toBe(200);
    await p.orExit(platform.waitForHandler(next.run_id));
    expect(jobFiles(stateDir)).toEqual([next.task_result_id]);
    expect(await p.stop()).toEqual({ code: 0, signal: null });
    expect(await finalOf(p, next.task_result_id)).toBe('failed');
    expect(p.stderr()).not.toContain(String(request.access_token));
    expect(p.stderr()).not.toContain(KEY);
  }, 90_000);

  it('refuses new requests with 503 and Retry-After while the state dir cannot be written, reports the checks it accepted, and accepts again once it can', async () => {
    const stateDir = join(dir, 'unwritable');
    const p = await serve(stateDir);
    const first = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(p.url, bytesOf(first))).status).toBe(200);
    await p.orExit(platform.waitForHandler(first.run_id));

    // A file where the folder was: nothing can be written there, by root either.
    replaceWithFile(stateDir);
    const refused = requestFor(PRE_PLAN_REQUEST, platform);
    const body = bytesOf(refused);
    const response = await p.orExit(
      fetch(p.url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-tfc-task-signature': sign(body) },
      }),
    );
    const text = await response.text();
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(text).toContain('state dir');
    expect(text).not.toContain(String(refused.access_token));
    const health = await p.health();
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'degraded', store: { status: 'failing' } });
    expect(['ENOTDIR', 'EEXIST']).toContain((health.body.store!.lastProblem as { code: string }).code);

    // The check accepted before still runs and reports.
    platform.release(first.run_id, { stdout: JSON.stringify({ status: 'passed', message: 'fine' }) });
    expect(await finalOf(p, first.task_result_id)).toBe('passed');

    // The folder can be written again: the next health check re-creates it, and requests are accepted.
    rmSync(stateDir);
    const healed = await p.health();
    expect(healed.status).toBe(200);
    expect(healed.body.store).toMatchObject({ status: 'ok' });
    const again = requestFor(PRE_PLAN_REQUEST, platform);
    platform.release(again.run_id, { stdout: JSON.stringify({ status: 'passed' }) });
    expect((await post(p.url, bytesOf(again))).status).toBe(200);
    expect(await finalOf(p, again.task_result_id)).toBe('passed');
    expect(platform.callbacks(refused.task_result_id)).toEqual([]);
    expect(await p.stop()).toEqual({ code: 0, signal: null });
    expect(jobFiles(stateDir)).toEqual([]);
  }, 90_000);
});

describe('runtask serve whose removed state dir another integrator took', () => {
  it('stops journaling there: refuses new requests with 503, still reports what it accepted, and leaves the other lock and folder alone', async () => {
    const stateDir = join(dir, 'taken');
    const p = await serve(stateDir);
    const first = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(p.url, bytesOf(first))).status).toBe(200);
    await p.orExit(platform.waitForHandler(first.run_id));

    // A cleaner removes the folder and another integrator (here: this live test process) starts there at once,
    // before this one notices: the folder is back, with the other's lock. "Before this one notices" is made
    // sure of by stopping it meanwhile: its check each second could otherwise fall in the gap and re-create the
    // folder and its own lock first (the other then yields to it, as it should, but that is another test).
    const otherLock = JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }) + '\n';
    p.child.kill('SIGSTOP');
    try {
      rmSync(stateDir, { recursive: true, force: true });
      mkdirSync(stateDir, { mode: 0o700 });
      writeFileSync(join(stateDir, 'integrator.lock'), otherLock);
    } finally {
      p.child.kill('SIGCONT');
    }

    const taken = await p.waitForEvent('journal.taken');
    expect(taken).toMatchObject({ level: 'error', pid: process.pid });
    const health = await p.health();
    expect(health.status).toBe(503);
    expect(health.body.store).toMatchObject({ status: 'failing', lastProblem: { code: 'ETAKEN' } });
    const refused = requestFor(PRE_PLAN_REQUEST, platform);
    expect((await post(p.url, bytesOf(refused))).status).toBe(503);

    platform.release(first.run_id, { stdout: JSON.stringify({ status: 'passed', message: 'fine' }) });
    expect(await finalOf(p, first.task_result_id)).toBe('passed');
    expect(platform.callbacks(refused.task_result_id)).toEqual([]);
    expect(await p.stop()).toEqual({ code: 0, signal: null });
    // Nothing of this integrator's was written into the other's folder, and its lock is untouched.
    expect(readdirSync(stateDir)).toEqual(['integrator.lock']);
    expect(readFileSync(join(stateDir, 'integrator.lock'), 'utf8')).toBe(otherLock);
  }, 90_000);
});

describe('runtask serve starting on a torn state dir', () => {
  it.each([
    ['empty', ''],
    ['cut short', '{"pid":12'],
    ['null', 'null'],
    ['without a pid', '{"startedAt":"2026-01-01T00:00:00Z"}'],
    ['binary', '\u0000\u00ff\u00fe garbage'],
  ])('starts on an integrator.lock that is %s, setting it aside with a log line', async (_name, content) => {
    const stateDir = join(dir, `lock-${Math.random().toString(36).slice(2)}`);
    mkdirSync(stateDir, { mode: 0o700 });
    writeFileSync(join(stateDir, 'integrator.lock'), content, { mode: 0o600 });
    const p = await serve(stateDir);
    // Set aside before it listens: logged before serve.started, or not at all.
    await p.waitForEvent('serve.started');
    const aside = p.events().find((l) => l.event === 'journal.set_aside')!;
    expect(aside).toMatchObject({ level: 'warn', file: 'integrator.lock' });
    expect(String(aside.moved_to)).toMatch(/^integrator\.lock\.corrupt-/);
    expect(readFileSync(join(stateDir, String(aside.moved_to)), 'latin1')).toBe(
      Buffer.from(content).toString('latin1'),
    );
    expect(JSON.parse(readFileSync(join(stateDir, 'integrator.lock'), 'utf8'))).toMatchObject({
      pid: p.child.pid,
    });
    expect((await p.health()).status).toBe(200);
    expect(await p.stop()).toEqual({ code: 0, signal: null });
  });

  it('sets aside journal lines of the wrong shape, with a log line, and recovers the good record', async () => {
    const stateDir = join(dir, 'records');
    mkdirSync(stateDir, { mode: 0o700 });
    const good = requestFor(POST_PLAN_REQUEST, platform);
    const record = (id: string, patch: Record<string, unknown>): string =>
      JSON.stringify({
        version: 1,
        id,
        acceptedAt: new Date().toISOString(),
        phase: 'accepted',
        request: good,
        checkStartedAt: new Date().toISOString(),
        ...patch,
      });
    const bad: Record<string, string> = {
      torn: record('torn', {}).slice(0, 40),
      null: 'null',
      acceptedat: record('acceptedat', { acceptedAt: 12 }),
      request: record('request', { request: null }),
      phase: record('phase', { phase: 'finished' }),
      result: record('result', { phase: 'reporting', result: { status: 'maybe' } }),
      started: record('started', { checkStartedAt: undefined }),
      id: record('bad id!', {}),
    };
    const lines = [...Object.values(bad), record(good.task_result_id, {})];
    writeFileSync(join(stateDir, 'journal.jsonl'), lines.join('\n') + '\n', { mode: 0o600 });

    const p = await serve(stateDir);
    const final = await p.orExit(platform.waitForCallbacks(good.task_result_id, 'failed'));
    expect(final[0]!.json).toEqual({
      data: { type: 'task-results', attributes: { status: 'failed', message: RESTARTED_MESSAGE } },
    });
    const asides = p.events().filter((l) => l.event === 'journal.set_aside');
    expect(asides).toHaveLength(1);
    expect(asides[0]).toMatchObject({ level: 'warn', file: 'journal.jsonl' });
    expect(String(asides[0]!.reason)).toMatch(/^8 line\(s\) that are not job records \(/);
    for (const why of [
      'not JSON',
      'no valid acceptedAt',
      'an unknown phase',
      'no valid checkStartedAt',
      'no valid id',
    ])
      expect(String(asides[0]!.reason)).toContain(why);
    const movedTo = join(stateDir, String(asides[0]!.moved_to));
    expect(readFileSync(movedTo, 'utf8')).toBe(Object.values(bad).join('\n') + '\n');
    expect(await p.stop()).toEqual({ code: 0, signal: null });
    expect(jobFiles(stateDir)).toEqual([]);
  });

  it('still refuses a state dir whose lock names another live process (exit 2)', async () => {
    const stateDir = join(dir, 'held');
    mkdirSync(stateDir, { mode: 0o700 });
    // This test process is alive and is not the integrator.
    writeFileSync(join(stateDir, 'integrator.lock'), JSON.stringify({ pid: process.pid }) + '\n');
    const result = await spawnServeExpectingExit({
      platform,
      stateDir,
      exec: HANDLER_COMMAND,
      key: KEY,
      cwd: dir,
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/in use by another running integrator \(pid \d+\)/);
    expect(JSON.parse(readFileSync(join(stateDir, 'integrator.lock'), 'utf8'))).toEqual({ pid: process.pid });
  });
});
