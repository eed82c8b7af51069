/**
 * Requests refused with 503 whose insert is still on its way (postgresRefused.ts, `ABANDON`): one backend of the
 * store's pool is stopped (SIGSTOP) with an insert in it, the platform's retry comes meanwhile, and the backend
 * goes on (SIGCONT) only then. The late insert must not leave a job that nobody runs, and the retry must be a new
 * job held here, whatever the order. A real PostgreSQL (test/helpers/postgres.ts).
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../../src/runtask/server/log.js';
import { PostgresStore, SCHEMA } from '../../../src/runtask/server/postgres/postgres.js';
import * as sql from '../../../src/runtask/server/postgres/postgresStatements.js';
import { Output } from '../../../src/ui/output.js';
import { Capture } from '../../helpers/cli.js';
import { postgresPerFile } from '../../helpers/postgres.js';
import type { JobRecord } from '../../../src/runtask/server/store.js';
import { recordOf } from './store.contract.js';

const log = EventLog.for(new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }));
const server = postgresPerFile();

/** The store's two backends, both connected (each ran a statement at once). */
async function twoBackends(store: PostgresStore): Promise<number[]> {
  const ran = await Promise.all(
    [0, 1].map(() => store.run('SELECT pg_backend_pid() AS pid, pg_sleep(0.3)', [])),
  );
  const pids = ran.map(({ rows }) => Number(rows[0]!.pid));
  expect(new Set(pids).size).toBe(2);
  return pids;
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
      const url = await server.freshDatabase('refused');
      const store = await openStore(url);
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const store1 = (r: ReturnType<typeof recordOf>) =>
        role === 'accept' ? store.accept(r) : store.queue.enqueue(r);
      let stopped: number | undefined;
      try {
        const pids = await twoBackends(store);
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

/** A store as the tests use it: a lease of a minute, short statement timeouts, two connections, no retry round. */
function openStore(url: string): Promise<PostgresStore> {
  return PostgresStore.open({
    url,
    log,
    leaseMs: 60_000,
    statementTimeoutMs: 1000,
    poolSize: 2,
    retryEveryMs: 200_000,
  });
}

describe('PostgreSQL: a refused insert that landed, whose retry reached another instance', () => {
  for (const role of ['accept', 'enqueue'] as const) {
    it(`${role}: the retry answered as a duplicate keeps the row, which runs`, async () => {
      const url = await server.freshDatabase('refused');
      const [a, b] = [await openStore(url), await openStore(url)];
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const put = (store: PostgresStore, r: ReturnType<typeof recordOf>) =>
        role === 'accept' ? store.accept(r) : store.queue.enqueue(r);
      let stopped: number | undefined;
      try {
        stopped = (await twoBackends(a))[0]!;
        process.kill(stopped, 'SIGSTOP');
        // As a job records itself when accepted: its check not started (a taker runs it).
        const [x, y] = [
          { ...recordOf('job-x'), checkStartedAt: null },
          { ...recordOf('job-y'), checkStartedAt: null },
        ];
        const outcomes = await Promise.all([put(a, x), put(a, y)]);
        expect([...outcomes].sort()).toEqual(['accepted', 'unsaved']);
        const victim = outcomes[0] === 'unsaved' ? x : y;
        // The refused insert lands; A cannot store its tombstone yet (A alone cut off, say).
        process.kill(stopped, 'SIGCONT');
        await settledBackend(admin, stopped);
        stopped = undefined;
        // The platform's retry reaches B: a duplicate of the row that landed, answered 200.
        expect(await put(b, recordOf(victim.id))).toBe('duplicate');
        // A reaches the database again: the row is kept for somebody to run, not abandoned.
        expect(await a.refused.settled(victim.id)).toBe(true);
        const row = await admin.query<{ state: string; holder: string | null }>(
          `SELECT state, holder FROM ${SCHEMA}.jobs WHERE id = $1`,
          [victim.id],
        );
        expect(row.rows).toEqual([{ state: role === 'accept' ? 'held' : 'queued', holder: null }]);
        const taken = role === 'accept' ? await b.takeOver() : await b.queue.claim(5);
        const mine = taken.find((r) => r.id === victim.id);
        expect(mine).toMatchObject({ acceptedAt: victim.acceptedAt, checkStartedAt: null });
        expect(b.heldJobs()).toContain(victim.id);
      } finally {
        if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
        await admin.end();
        await a.release({ crash: true });
        await b.release({ crash: true });
      }
    }, 60_000);
  }
});

describe('PostgreSQL: attempts refused one after another', () => {
  it('an earlier refused attempt landing after a later one was revived and refused does nothing', async () => {
    const url = await server.freshDatabase('refused');
    const store = await openStore(url);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { queueName: q, holder: h } = store;
      const [a1, a2, a3] = [recordOf('job-n'), recordOf('job-n'), recordOf('job-n')];
      const insert = (r: JobRecord) => store.run(sql.ACCEPT, [q, r.id, JSON.stringify(r), h, 60]);
      // a1 refused while its insert stalls: its tombstone. a2 takes the tombstone over, then is refused too.
      await store.run(sql.ABANDON, [q, a1.id, a1.acceptedAt, h]);
      expect((await insert(a2)).rows).toHaveLength(1);
      await store.run(sql.ABANDON, [q, a2.id, a2.acceptedAt, h]);
      // a1's insert lands only now: it finds a1 named still, and changes nothing.
      expect((await insert(a1)).rows).toEqual([]);
      const row = await admin.query<{ state: string; refused: unknown }>(
        `SELECT state, refused FROM ${SCHEMA}.jobs WHERE id = $1`,
        [a1.id],
      );
      expect(row.rows).toEqual([
        {
          state: 'abandoned',
          refused: [
            { acceptedAt: a1.acceptedAt, holder: h },
            { acceptedAt: a2.acceptedAt, holder: h },
          ],
        },
      ]);
      // The next retry is a new job, held here.
      expect(await store.accept(a3)).toBe('accepted');
      expect(store.heldJobs()).toEqual([a3.id]);
    } finally {
      await admin.end();
      await store.release({ crash: true });
    }
  }, 60_000);
});
