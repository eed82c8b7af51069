/**
 * Two `runtask serve` processes (the built program) on one database of a real PostgreSQL server this file starts,
 * with 3 s leases; the checks run on the first (A), the second (B) is there to take over whatever A lets go.
 *
 *   - pause: A stopped with SIGSTOP while its 6 handlers run, past its lease: B takes the jobs over and reports
 *     them failed; the handlers finish meanwhile; then SIGCONT. A no longer holds the jobs: it sends nothing for
 *     them (before the fix, A sent `passed` after B's `failed` for each).
 *   - hang: every process of the database server stopped with SIGSTOP for 20 s while A's 6 checks finish
 *     and a new request arrives, then SIGCONT. The finals go out once A has claimed them; nobody takes A's jobs
 *     over, A neither (before the fix, A delivered during the hang, then took its own delivered jobs over and sent
 *     second finals). The request answered 503 during the hang leaves nothing behind: the platform's retry is
 *     accepted as a new job (before the fix, the insert that was answered 503 had been stored after all, so the
 *     retry was a duplicate and the stored copy ran later on its own). At the thaw the refused insert and its
 *     tombstone run in either order (a race this case once lost now and then): the tombstone holds in both.
 *
 * In both: every accepted job gets exactly one final callback, and no handler runs twice.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TAKEN_OVER_MESSAGE } from '../../src/runtask/server/jobs.js';
import { SCHEMA } from '../../src/runtask/server/postgres/postgres.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { POST_PLAN_REQUEST } from '../runtask/documented-payloads.js';
import { HANDLER_COMMAND, KEY, bytesOf, post, requestFor } from '../runtask/helpers.js';
import { TestPlatform, statusOf, type Recorded } from '../runtask/platform.js';
import { ensureBuilt, spawnServe, type ServeProcess } from '../runtask/serveProcess.js';

let server: TestPostgres;
let platform: TestPlatform;
const running: ServeProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  [server, platform] = await Promise.all([startPostgres(), TestPlatform.start()]);
}, 120_000);
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
    }
    await p.exit;
  }
});
afterAll(async () => {
  await platform?.close();
  await server?.stop();
});

/** One `runtask serve` on the database at `url`: 3 s lease, 6 slots, the default database timeout (10 s). */
async function serve(url: string, name: string): Promise<ServeProcess> {
  const dir = tempDir(name);
  const p = await spawnServe({
    platform,
    stateDir: `${dir}/state`,
    exec: HANDLER_COMMAND,
    key: KEY,
    cwd: dir,
    args: ['--lease', '3s', '--max-jobs', '6', '--grace', '1s', '--callback-timeout', '60s'],
    env: { RUNTASK_DATABASE_URL: url },
  });
  running.push(p);
  return p;
}

const finals = (id: string): Recorded[] =>
  platform.callbacks(id).filter((c) => ['passed', 'failed'].includes(statusOf(c) ?? ''));
const messageOf = (r: Recorded): unknown =>
  (r.json as { data?: { attributes?: { message?: unknown } } }).data?.attributes?.message;
const handlerRuns = (runId: string | undefined): number =>
  platform.requests.filter((r) => r.path === '/handler/start' && (r.json as { key: string }).key === runId)
    .length;

/** Resolves once `p` has no job left (its /healthz counts). */
async function idle(p: ServeProcess): Promise<void> {
  for (;;) {
    const { body } = await p.health();
    if (Object.values(body.jobs).every((n) => n === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves once the jobs `ids` are all completed in the jobs table at `url`. */
async function completed(url: string, ids: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${SCHEMA}.jobs WHERE id = ANY($1) AND state = 'completed'`,
        [ids],
      );
      if (rows[0]!.n === ids.length) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await client.end();
  }
}

/** Resolves once `p`'s /healthz answers 200 (its store works). */
async function healthy(p: ServeProcess): Promise<void> {
  while ((await p.health()).status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
}

describe('an instance paused past its lease (SIGSTOP, then SIGCONT)', () => {
  it('the other instance reports its jobs; woken up, it sends nothing for them: one final each', async () => {
    await server.createDatabase('paused');
    const url = server.urlOf('paused');
    const [a, b] = [await serve(url, 'a'), await serve(url, 'b')];
    const requests = Array.from({ length: 6 }, () => requestFor(POST_PLAN_REQUEST, platform));
    for (const request of requests) expect((await post(a.url, bytesOf(request))).status).toBe(200);
    await a.orExit(Promise.all(requests.map((r) => platform.waitForHandler(r.run_id))));

    a.child.kill('SIGSTOP');
    try {
      // B takes each job over once A's lease ran out, and reports it failed (its check had started).
      const taken = await Promise.all(
        requests.map((r) => b.orExit(platform.waitForCallbacks(r.task_result_id, 'failed'))),
      );
      for (const [final] of taken) expect(messageOf(final!)).toBe(TAKEN_OVER_MESSAGE);
      // A's handlers finish while A is stopped: it reads their results once it wakes.
      for (const r of requests) platform.release(r.run_id, { stdout: 'checked\n', exitCode: 0 });
    } finally {
      a.child.kill('SIGCONT');
    }

    // A learns that each job is another's (its renewal or its claim is refused), and ends it without a word.
    await Promise.all(
      requests.map((r) => a.waitForEvent('store.lease_lost', (l) => l.job === r.task_result_id)),
    );
    await a.orExit(idle(a));
    await b.orExit(idle(b));
    expect(await a.stop()).toEqual({ code: 0, signal: null });
    expect(await b.stop()).toEqual({ code: 0, signal: null });

    for (const request of requests) {
      expect(finals(request.task_result_id).map(statusOf), request.task_result_id).toEqual(['failed']);
      // Nothing at all from A after B's final.
      expect(platform.callbacks(request.task_result_id).map(statusOf).at(-1)).toBe('failed');
      expect(handlerRuns(request.run_id), request.run_id).toBe(1);
    }
    expect(a.events().filter((l) => l.event === 'callback.sent' && l.status !== 'running')).toEqual([]);
  }, 120_000);
});

describe('a database that hangs for three leases while checks finish', () => {
  it('one final each, nobody takes a job over, and a request answered 503 leaves nothing behind', async () => {
    await server.createDatabase('hang');
    const url = server.urlOf('hang');
    const [a, b] = [await serve(url, 'a'), await serve(url, 'b')];
    const requests = Array.from({ length: 6 }, () => requestFor(POST_PLAN_REQUEST, platform));
    for (const request of requests) expect((await post(a.url, bytesOf(request))).status).toBe(200);
    await a.orExit(Promise.all(requests.map((r) => platform.waitForHandler(r.run_id))));

    const late = requestFor(POST_PLAN_REQUEST, platform);
    server.freeze();
    let refused: { status: number };
    try {
      // Its insert is sent on a connection of the frozen server; no answer in 10 s: 503.
      const answer = post(a.url, bytesOf(late));
      for (const r of requests) platform.release(r.run_id, { stdout: 'checked\n', exitCode: 0 });
      refused = await answer;
      // 20 s from the freeze, as the review's run had it: the leases ran out on the database's clock meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
    } finally {
      server.thaw();
    }
    expect(refused.status).toBe(503);

    await Promise.all(requests.map((r) => a.orExit(platform.waitForCallbacks(r.task_result_id, 'passed'))));
    // Once every job is completed in the database, nobody can take one over: their finals are all there are.
    await completed(
      url,
      requests.map((r) => r.task_result_id),
    );
    for (const request of requests) {
      expect(finals(request.task_result_id).map(statusOf), request.task_result_id).toEqual(['passed']);
    }
    // The platform sends the refused request again once the integrator is healthy: a new job, run once.
    await a.orExit(healthy(a));
    expect((await post(a.url, bytesOf(late))).status).toBe(200);
    const retried = await Promise.race(
      ['job.accepted', 'request.duplicate'].map((name) =>
        a.waitForEvent(name, (l) => l.job === late.task_result_id),
      ),
    );
    expect(retried.event).toBe('job.accepted');
    await a.orExit(platform.waitForHandler(late.run_id));
    platform.release(late.run_id, { stdout: 'checked\n', exitCode: 0 });
    await a.orExit(platform.waitForCallbacks(late.task_result_id, 'passed'));
    await a.orExit(idle(a));
    // Past a takeover's reach: every job completed once A stops (its ends stored, nothing left held).
    expect(await a.stop()).toEqual({ code: 0, signal: null });
    expect(await b.stop()).toEqual({ code: 0, signal: null });

    for (const request of [...requests, late]) {
      expect(finals(request.task_result_id).map(statusOf), request.task_result_id).toEqual(['passed']);
      expect(handlerRuns(request.run_id), request.run_id).toBe(1);
    }
    expect(a.events().filter((l) => l.event === 'request.duplicate')).toEqual([]);
    for (const p of [a, b]) expect(p.events().filter((l) => l.event === 'store.took_over')).toEqual([]);
  }, 120_000);
});
