/**
 * Requests refused with 503 whose insert is still on its way (postgresRefused.ts, `ABANDON`): one backend of the
 * store's pool is stopped (SIGSTOP) with an insert in it, the platform's retry comes meanwhile, and the backend
 * goes on (SIGCONT) only then. The late insert must not leave a job that nobody runs, and the retry must be a new
 * job held here, whatever the order. A real PostgreSQL (test/helpers/postgres.ts).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLog } from '../../../src/runtask/server/log.js';
import { PostgresStore, SCHEMA } from '../../../src/runtask/server/postgres.js';
import { Output } from '../../../src/ui/output.js';
import { Capture } from '../../helpers/cli.js';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { recordOf } from './store.contract.js';

const log = EventLog.for(new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }));
let server: TestPostgres;
let databases = 0;

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

/** The store's two backends, both connected (each ran a statement), and a client of the test's own. */
async function twoBackends(store: PostgresStore, admin: pg.Client, database: string): Promise<number[]> {
  await Promise.all([store.run('SELECT pg_sleep(0.3)', []), store.run('SELECT pg_sleep(0.3)', [])]);
  const { rows } = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    [database],
  );
  expect(rows).toHaveLength(2);
  return rows.map((row) => Number(row.pid));
}

/** Resolves once backend `pid` no longer runs a statement (its late insert carried out, or not). */
async function settledBackend(admin: pg.Client, pid: number): Promise<void> {
  for (;;) {
    const { rows } = await admin.query<{ state: string }>(
      `SELECT state FROM pg_stat_activity WHERE pid = $1`,
      [pid],
    );
    if (rows[0]?.state !== 'active') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('PostgreSQL: a request refused with 503 while its insert is stalled', () => {
  for (const role of ['accept', 'enqueue'] as const) {
    it(`${role}: the insert landing after the tombstone does nothing; the retry is a new job`, async () => {
      const database = `refused_${++databases}`;
      await server.createDatabase(database);
      const url = server.urlOf(database);
      const store = await PostgresStore.open({
        url,
        log,
        leaseMs: 60_000,
        statementTimeoutMs: 1000,
        poolSize: 2,
        retryEveryMs: 200_000,
      });
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const store1 = (r: ReturnType<typeof recordOf>) =>
        role === 'accept' ? store.accept(r) : store.queue.enqueue(r);
      let stopped: number | undefined;
      try {
        const pids = await twoBackends(store, admin, database);
        stopped = pids[0]!;
        process.kill(stopped, 'SIGSTOP');
        const [a, b] = [recordOf('job-a'), recordOf('job-b')];
        // One of the two inserts waits in the stopped backend: refused (the platform gets 503).
        const outcomes = await Promise.all([store1(a), store1(b)]);
        expect([...outcomes].sort()).toEqual(['accepted', 'unsaved']);
        const victim = outcomes[0] === 'unsaved' ? a : b;
        // The platform's retry comes while the insert is still stalled: the tombstone is stored.
        expect(await store.refused.settled(victim.id)).toBe(true);
        process.kill(stopped, 'SIGCONT');
        await settledBackend(admin, stopped);
        stopped = undefined;
        const landed = await admin.query<{ state: string }>(
          `SELECT state FROM ${SCHEMA}.jobs WHERE id = $1`,
          [victim.id],
        );
        expect(landed.rows.map((row) => row.state)).toEqual(['abandoned']);

        const retry = recordOf(victim.id);
        expect(await store1(retry)).toBe('accepted');
        const row = await admin.query<{ state: string; acceptedAt: string }>(
          `SELECT state, record->>'acceptedAt' AS "acceptedAt" FROM ${SCHEMA}.jobs WHERE id = $1`,
          [victim.id],
        );
        expect(row.rows).toEqual([
          { state: role === 'accept' ? 'held' : 'queued', acceptedAt: retry.acceptedAt },
        ]);
        if (role === 'accept') expect(store.heldJobs()).toContain(victim.id);
        else expect((await store.queue.claim(5)).map((r) => r.id).sort()).toEqual(['job-a', 'job-b']);
      } finally {
        if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
        await admin.end();
        await store.release({ crash: true });
      }
    }, 60_000);
  }
});
