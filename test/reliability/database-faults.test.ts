/**
 * The run task integrator on a PostgreSQL database that fails while checks run: two instances on one database
 * of a real server this file starts (one cluster for the file), the checks on the first, the second ready to take
 * over whatever the first lets go.
 *
 *   - frozen: every server process stopped with SIGSTOP (connections open, nothing answers), then SIGCONT. The
 *     final callbacks of the checks that finish meanwhile are delivered while it is frozen; /healthz answers 503
 *     and a new request is refused with 503 while a statement is overdue; /metrics answers; the log says so;
 *     the checks still waiting for a slot start once it answers again;
 *   - a short outage: the server shut down right before the checks' final callbacks, and started again (well
 *     inside the lease): the ends not stored are tried again until stored, so the other instance never takes
 *     those jobs over.
 *
 * In both: every accepted job gets exactly one final callback, no handler runs twice, and once every job is
 * completed in the database (then nobody can take one over) no access token is left there.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA, routeQueue } from '../../src/runtask/server/postgres/postgres.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { POST_PLAN_REQUEST } from '../runtask/documented-payloads.js';
import { bytesOf, post, requestFor, startTestIntegrator, type TestIntegrator } from '../runtask/helpers.js';
import { TestPlatform, statusOf } from '../runtask/platform.js';

let server: TestPostgres;
let platform: TestPlatform;
let databases = 0;
const started: TestIntegrator[] = [];

beforeAll(async () => {
  [server, platform] = await Promise.all([startPostgres(), TestPlatform.start()]);
}, 120_000);
afterEach(async () => {
  for (const t of started.splice(0)) await t.cleanup();
});
afterAll(async () => {
  await platform?.close();
  await server?.stop();
});

/**
 * Short timeouts and retries (options), so that a hang is noticed in a second rather than in several; not so
 * short that a statement on a busy machine (tests run side by side) would count as overdue.
 */
const TIMEOUTS = { statementTimeoutMs: 3000, connectTimeoutMs: 2000, overdueMs: 1000, retryEveryMs: 200 };

async function instance(url: string, leaseMs: number, maxJobs: number): Promise<TestIntegrator> {
  const t = await startTestIntegrator(platform, {
    databaseUrl: url,
    leaseMs,
    maxJobs,
    databaseTimeouts: TIMEOUTS,
    storeRetryMs: TIMEOUTS.retryEveryMs,
  });
  started.push(t);
  return t;
}

async function query<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Waits until every job of the queue is completed (then no instance can take one over), and returns the data.
 * The tombstones of requests refused with 503 (`abandoned`) are no jobs.
 */
async function completed(url: string, jobs: number): Promise<string> {
  for (;;) {
    const rows = await query<{ state: string; data: string }>(
      url,
      `SELECT state, record::text AS data FROM ${SCHEMA}.jobs WHERE queue = '${routeQueue(undefined)}' AND state <> 'abandoned'`,
    );
    if (rows.length === jobs && rows.every((row) => row.state === 'completed')) {
      return rows.map((row) => row.data).join('\n');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function healthz(t: TestIntegrator): Promise<{ status: number; text: string }> {
  const response = await fetch(new URL('/healthz', t.integrator.url));
  return { status: response.status, text: await response.text() };
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The invariants: one final callback per accepted job, no handler twice, no token left in the database. */
function expectOneFinalEach(requests: ReturnType<typeof requestFor>[], table: string): void {
  for (const request of requests) {
    const finals = platform
      .callbacks(request.task_result_id)
      .filter((c) => ['passed', 'failed'].includes(statusOf(c) ?? ''));
    expect(finals.map(statusOf), request.task_result_id).toEqual(['passed']);
    const runs = platform.requests.filter(
      (r) => r.path === '/handler/start' && (r.json as { key: string }).key === request.run_id,
    );
    expect(runs, request.run_id).toHaveLength(1);
    expect(table).not.toContain(String(request.access_token));
  }
}

describe('a database that hangs (every server process stopped)', () => {
  it('final callbacks go out, /healthz and new requests say 503 while it hangs; one final each, no handler twice', async () => {
    await server.createDatabase(`frozen_${++databases}`);
    const url = server.urlOf(`frozen_${databases}`);
    // A lease far longer than the freeze: nothing here is a takeover's to fix.
    const [a] = [await instance(url, 60_000, 4), await instance(url, 60_000, 4)];
    const requests = Array.from({ length: 6 }, () => requestFor(POST_PLAN_REQUEST, platform));
    for (const request of requests) expect((await post(a.integrator.url, bytesOf(request))).status).toBe(200);
    const [running, waiting] = [requests.slice(0, 4), requests.slice(4)];
    await Promise.all(running.map((r) => platform.waitForHandler(r.run_id)));

    server.freeze();
    try {
      for (const r of running) platform.release(r.run_id, { stdout: 'checked\n', exitCode: 0 });
      // Delivered while nothing answers in the database.
      await Promise.all(running.map((r) => platform.waitForCallbacks(r.task_result_id, 'passed')));
      const failing = await until(
        () => healthz(a),
        (h) => h.status === 503,
      );
      expect(JSON.parse(failing.text)).toMatchObject({
        status: 'degraded',
        store: { kind: 'postgres', status: 'failing', lastProblem: { code: 'ETIMEDOUT' } },
      });
      // Codes only: the database's address is in the log, not in an unauthenticated answer.
      expect(failing.text).not.toContain(`127.0.0.1:${server.port}`);
      const late = requestFor(POST_PLAN_REQUEST, platform);
      const refused = await post(a.integrator.url, bytesOf(late));
      expect(refused.status).toBe(503);
      const metrics = await fetch(new URL('/metrics', a.integrator.url));
      expect(metrics.status).toBe(200);
      await metrics.text();
      expect(a.events.find((e) => e.event === 'store.failed')?.fields).toMatchObject({ code: 'ETIMEDOUT' });
      // The checks waiting for a slot have not started: their start cannot be stored.
      for (const r of waiting)
        expect(platform.callbacks(r.task_result_id).map(statusOf)).not.toContain('passed');
      expect(platform.callbacks(late.task_result_id)).toEqual([]);
    } finally {
      server.thaw();
    }

    await Promise.all(waiting.map((r) => platform.waitForHandler(r.run_id)));
    for (const r of waiting) platform.release(r.run_id, { stdout: 'checked\n', exitCode: 0 });
    const table = await completed(url, requests.length);
    await until(
      () => healthz(a),
      (h) => h.status === 200,
    );
    await a.waitForEvent('store.restored');
    expectOneFinalEach(requests, table);
  }, 120_000);
});

describe('a short database outage around final callbacks', () => {
  it('the ends are stored once it is back, the leases kept: the other instance takes nothing over; one final each', async () => {
    await server.createDatabase(`outage_${++databases}`);
    const url = server.urlOf(`outage_${databases}`);
    // The outage (a shutdown, the finals, a start) stays well inside the lease.
    const [a, b] = [await instance(url, 10_000, 8), await instance(url, 10_000, 8)];
    const requests = Array.from({ length: 8 }, () => requestFor(POST_PLAN_REQUEST, platform));
    for (const request of requests) expect((await post(a.integrator.url, bytesOf(request))).status).toBe(200);
    await Promise.all(requests.map((r) => platform.waitForHandler(r.run_id)));
    // Six finish while the database is down; two are still running when it is back.
    const [early, late] = [requests.slice(0, 6), requests.slice(6)];

    await server.halt();
    try {
      for (const r of early) platform.release(r.run_id, { stdout: 'checked\n', exitCode: 0 });
      await Promise.all(early.map((r) => platform.waitForCallbacks(r.task_result_id, 'passed')));
      // Their ends were tried (and failed) while it was down.
      await until(
        () => Promise.resolve(a.integrator.jobs.counts()),
        (counts) => counts.reporting === 0,
      );
    } finally {
      await server.start();
    }
    for (const r of late) platform.release(r.run_id, { stdout: 'checked\n', exitCode: 0 });

    const table = await completed(url, requests.length);
    expect(b.events.filter((e) => e.event === 'store.took_over')).toEqual([]);
    expectOneFinalEach(requests, table);
    expect(a.integrator.jobs.storeHealth()).toMatchObject({ unsaved: 0 });
  }, 120_000);
});
