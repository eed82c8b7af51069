/**
 * The job-store contract (store.contract.ts) against PostgreSQL (postgres.ts, its own table), on a real server
 * this file starts on 127.0.0.1 (test/helpers/postgres.ts): a database of its own per case, leases of 2 s.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../../src/runtask/server/log.js';
import { PostgresStore, QUEUE, SCHEMA } from '../../../src/runtask/server/postgres/postgres.js';
import { SCHEMA_VERSION, migrate } from '../../../src/runtask/server/postgres/postgresSchema.js';
import { clock, type JobRecord } from '../../../src/runtask/server/store.js';
import { Output } from '../../../src/ui/output.js';
import { Capture } from '../../helpers/cli.js';
import { postgresPerFile } from '../../helpers/postgres.js';
import { describeJobStore, recordOf } from './store.contract.js';

const log = EventLog.for(new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }));
const server = postgresPerFile();

describeJobStore({
  name: 'PostgreSQL',
  shared: true,
  async fresh() {
    const url = await server.freshDatabase('contract');
    return {
      open: ({ leaseMs = 60_000, renews = true } = {}) =>
        // Renewing often (a lease has to go 3 s unrenewed on a loaded machine before it is lost by mistake).
        PostgresStore.open({ url, log, leaseMs, heartbeatMs: renews ? 250 : 2_000_000_000 }),
      async dump() {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          const { rows } = await client.query<{ text: string }>(
            `SELECT record::text AS text FROM ${SCHEMA}.jobs`,
          );
          return rows.map((row) => row.text).join('\n');
        } finally {
          await client.end();
        }
      },
    };
  },
});

/** Three stores opened at once on `url`, then released: 'ok' for each that started, else why it did not. */
async function startTogether(url: string): Promise<string[]> {
  const opened = await Promise.allSettled([1, 2, 3].map(() => PostgresStore.open({ url, log })));
  for (const result of opened) if (result.status === 'fulfilled') await result.value.release();
  return opened.map((result) => (result.status === 'rejected' ? String(result.reason) : 'ok'));
}

describe('PostgreSQL: starting', () => {
  it('instances starting together on a new database all start: one creates the schema and the queue', async () => {
    for (let round = 0; round < 4; round++) {
      expect(await startTogether(await server.freshDatabase('together'))).toEqual(['ok', 'ok', 'ok']);
    }
  });

  it('instances starting together all start where transactions default to repeatable read', async () => {
    for (let round = 0; round < 3; round++) {
      const database = `repeatable_${round}`;
      await server.createDatabase(database);
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      try {
        await admin.query(`ALTER DATABASE ${database} SET default_transaction_isolation = 'repeatable read'`);
      } finally {
        await admin.end();
      }
      expect(await startTogether(server.urlOf(database))).toEqual(['ok', 'ok', 'ok']);
    }
  });

  it('creates the schema on the first start and finds it on the next (one version row, the queue once)', async () => {
    await server.createDatabase('restart');
    const url = server.urlOf('restart');
    for (let start = 0; start < 2; start++) await (await PostgresStore.open({ url, log })).release();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const versions = await client.query(`SELECT version FROM ${SCHEMA}.schema_version`);
      const queues = await client.query<{ name: string }>(`SELECT name FROM ${SCHEMA}.queues`);
      expect(versions.rows).toHaveLength(1);
      expect(queues.rows.map((row) => row.name)).toEqual(['runtask-jobs']);
    } finally {
      await client.end();
    }
  });
});

describe('PostgreSQL: the schema and its migrations', () => {
  /** Runs `work` on a client of `url`. */
  async function onClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }
  const versionRow = (client: pg.Client) =>
    client
      .query<{ version: number; migrated_at: Date }>(
        `SELECT version, migrated_at FROM ${SCHEMA}.schema_version`,
      )
      .then((result) => result.rows);

  it('a database at version 0 is migrated to the current version; a second start changes nothing', async () => {
    await server.createDatabase('migrations');
    const url = server.urlOf('migrations');
    await onClient(url, async (client) => {
      expect(await migrate(client, [QUEUE])).toEqual({ from: 0, to: SCHEMA_VERSION });
      const first = await versionRow(client);
      expect(first.map((row) => row.version)).toEqual([SCHEMA_VERSION]);
      expect(await migrate(client, [QUEUE])).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
      expect(await versionRow(client)).toEqual(first);
    });
    const store = await PostgresStore.open({ url, log });
    try {
      expect(await store.accept(recordOf('after-migration'))).toBe('accepted');
    } finally {
      await store.release();
    }
    await onClient(url, async (client) => {
      expect((await versionRow(client)).map((row) => row.version)).toEqual([SCHEMA_VERSION]);
    });
  });

  it('a schema made beforehand for a user who may not create schemas will do', async () => {
    await server.createDatabase('made_beforehand');
    await onClient(server.urlOf('made_beforehand'), async (client) => {
      await client.query(`CREATE ROLE runtask_owner LOGIN PASSWORD 'owner-pw'`);
      await client.query(`REVOKE CREATE ON DATABASE made_beforehand FROM PUBLIC`);
      await client.query(`CREATE SCHEMA ${SCHEMA} AUTHORIZATION runtask_owner`);
    });
    const url = server
      .urlOf('made_beforehand')
      .replace(`postgres:${server.password}@`, 'runtask_owner:owner-pw@');
    const store = await PostgresStore.open({ url, log });
    try {
      expect(await store.accept(recordOf('owned'))).toBe('accepted');
    } finally {
      await store.release();
    }
  });

  it('a database at a newer version than this CLI knows is refused with a clear message, and left as it is', async () => {
    await server.createDatabase('newer');
    const url = server.urlOf('newer');
    await (await PostgresStore.open({ url, log })).release();
    await onClient(url, (client) =>
      client.query(`UPDATE ${SCHEMA}.schema_version SET version = version + 1`),
    );
    await expect(PostgresStore.open({ url, log })).rejects.toThrow(
      `cannot use the database ${server.urlOf('newer').replace(server.password, '***')}: its job store schema ` +
        `${SCHEMA} is at version ${SCHEMA_VERSION + 1}, newer than this version of provider knows (${SCHEMA_VERSION})`,
    );
    await onClient(url, async (client) => {
      expect((await versionRow(client)).map((row) => row.version)).toEqual([SCHEMA_VERSION + 1]);
    });
  });
});

describe('PostgreSQL: the queue of fronts and workers', () => {
  const record = (id: string): JobRecord => ({
    version: 1,
    id,
    acceptedAt: new Date().toISOString(),
    phase: 'accepted',
    checkStartedAt: null,
    request: { task_result_id: id, access_token: `token-of-${id}` },
  });

  it('a queued job is one job, claimed by one worker, in order; never started, it is not taken over', async () => {
    const url = await server.freshDatabase('queue');
    const [front, a, b] = await Promise.all(
      [1, 2, 3].map(() => PostgresStore.open({ url, log, leaseMs: 2000 })),
    );
    try {
      expect(await front!.queue.enqueue(record('q1'))).toBe('accepted');
      expect(await front!.queue.enqueue(record('q1'))).toBe('duplicate');
      expect(await front!.queue.enqueue(record('q2'))).toBe('accepted');
      expect(await front!.queue.enqueue(record('q3'))).toBe('accepted');
      expect(await a!.queue.depth()).toBe(3);
      // Queued jobs are for workers to claim as their slots free up, not for a takeover.
      expect(await b!.takeOver()).toEqual([]);

      const claimedByA = await a!.queue.claim(2);
      const claimedByB = await b!.queue.claim(5);
      expect(claimedByA.map((r) => [r.id, r.phase])).toEqual([
        ['q1', 'accepted'],
        ['q2', 'accepted'],
      ]);
      expect(claimedByB.map((r) => r.id)).toEqual(['q3']);
      expect(await a!.queue.claim(5)).toEqual([]);
      expect(await front!.queue.depth()).toBe(0);
      expect(a!.heldJobs().sort()).toEqual(['q1', 'q2']);
      expect(front!.heldJobs()).toEqual([]);
    } finally {
      await Promise.all([front, a, b].map((s) => s!.release()));
    }
  });

  it('a queued job’s progress is due to one caller per interval', async () => {
    const url = await server.freshDatabase('queue');
    const [a, b] = await Promise.all([1, 2].map(() => PostgresStore.open({ url, log })));
    try {
      await a!.queue.enqueue(record('p1'));
      // Not due before the interval has passed since it was queued.
      expect(await a!.queue.dueForProgress(60_000)).toEqual([]);
      // Queued an hour ago (written so, rather than waited for).
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`UPDATE ${SCHEMA}.jobs SET created_at = now() - interval '1 hour'`);
      await client.end();
      const due = await Promise.all([a!.queue.dueForProgress(60_000), b!.queue.dueForProgress(60_000)]);
      expect(due.flat().map((r) => r.id)).toEqual(['p1']);
      expect(due.flat()[0]!.request).toMatchObject({ access_token: 'token-of-p1' });
      // Just reported: not due again within the interval.
      expect(await b!.queue.dueForProgress(60_000)).toEqual([]);
      // Claimed, it is its worker's to report.
      expect((await b!.queue.claim(1)).map((r) => r.id)).toEqual(['p1']);
      expect(await a!.queue.dueForProgress(1)).toEqual([]);
    } finally {
      await Promise.all([a, b].map((s) => s!.release()));
    }
  });
});

describe('PostgreSQL: takeovers and claims', () => {
  /** Runs `text` on the database at `url` (the test's hand on the clock: leases and notes moved into the past). */
  async function sql(url: string, text: string): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  }
  const reporting = (record: JobRecord): JobRecord => ({
    ...record,
    phase: 'reporting',
    result: { status: 'passed', message: 'all good' },
  });

  it('never of its own jobs; another’s only once its lease stayed past and unrenewed; a lost job’s claim is refused', async () => {
    const url = await server.freshDatabase('takeover');
    // The holder renews nothing by itself (a paused process); the wait after a lapse is long, moved by hand. Its
    // lease is long (the leases past are moved by hand): the claim it renews must still last after the round trips.
    const holder = await PostgresStore.open({ url, log, leaseMs: 600_000, heartbeatMs: 2_000_000_000 });
    const other = await PostgresStore.open({ url, log, leaseMs: 2000, lapseWaitMs: 600_000 });
    try {
      const mine = recordOf('mine');
      const renewed = recordOf('renewed');
      expect(await holder.accept(mine)).toBe('accepted');
      expect(await holder.accept(renewed)).toBe('accepted');
      expect(holder.heldUntil(mine.id)).toBeGreaterThan(clock());
      expect(other.heldUntil(mine.id)).toBe(Number.NEGATIVE_INFINITY);
      await sql(url, `UPDATE ${SCHEMA}.jobs SET lease_until = now() - interval '10 minutes'`);

      // Its own jobs, lease past or not, are the holder's to renew, never to take over.
      expect(await holder.takeOver()).toEqual([]);
      // The other instance notes the lapse, and takes nothing yet.
      expect(await other.takeOver()).toEqual([]);
      expect(await other.takeOver()).toEqual([]);
      // The holder claims one job's final (its lease renewed with it) before the wait is over.
      expect(await holder.report(reporting(renewed))).toBe('stored');
      // 11 minutes go by for the leases still past (the wait is 10): their lapse and its note move back.
      await sql(
        url,
        `UPDATE ${SCHEMA}.jobs SET lease_until = lease_until - interval '11 minutes',
           lapse_seen_at = lapse_seen_at - interval '11 minutes' WHERE lease_until < now()`,
      );
      // The wait is over: the job still past is taken, the renewed one is not.
      expect(await other.takeOver()).toEqual([mine]);
      expect(await other.takeOver()).toEqual([]);

      // The holder wakes: its claim of the lost job is refused, so it sends nothing; it still holds the other.
      expect(await holder.report(reporting(mine))).toBe('lost');
      expect(holder.heldUntil(mine.id)).toBe(Number.NEGATIVE_INFINITY);
      expect(holder.heldUntil(renewed.id)).toBeGreaterThan(clock());
      expect(other.heldUntil(mine.id)).toBeGreaterThan(clock());
    } finally {
      await holder.release({ crash: true });
      await other.release();
    }
  });
  it('a renewal never moves a lease backwards (a write sent later gave it more)', async () => {
    const url = await server.freshDatabase('renew');
    const store = await PostgresStore.open({ url, log, leaseMs: 60_000, heartbeatMs: 250 });
    try {
      const job = recordOf('renewed-late');
      expect(await store.accept(job)).toBe('accepted');
      // A write sent after a renewal that is still on its way gave the lease more than the renewal will.
      await sql(url, `UPDATE ${SCHEMA}.jobs SET lease_until = now() + interval '1 hour'`);
      const after = clock();
      // A renewal sent after that is answered (this process then counts its lease from after it)…
      while (store.heldUntil(job.id) <= after + 60_000) await new Promise((r) => setTimeout(r, 50));
      // …and left the longer lease as it was.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ later: boolean }>(
          `SELECT lease_until > now() + interval '30 minutes' AS later FROM ${SCHEMA}.jobs`,
        );
        expect(rows).toEqual([{ later: true }]);
      } finally {
        await client.end();
      }
    } finally {
      await store.release({ crash: true });
    }
  });
});

describe('PostgreSQL: the connection pool (--database-pool)', () => {
  /** Connections the integrator's stores hold to `database` now. */
  async function connections(database: string): Promise<number> {
    const client = new pg.Client({ connectionString: server.urlOf('postgres') });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'provider runtask serve'`,
        [database],
      );
      return rows[0]!.n;
    } finally {
      await client.end();
    }
  }
  const record = (id: string): JobRecord => ({
    version: 1,
    id,
    acceptedAt: new Date().toISOString(),
    phase: 'accepted',
    checkStartedAt: null,
    request: { task_result_id: id },
  });

  it('holds at most its size of connections however many statements are sent at once', async () => {
    for (const [poolSize, most] of [
      [2, 2],
      [10, 10],
    ] as const) {
      const database = `pool_${poolSize}`;
      await server.createDatabase(database);
      const store = await PostgresStore.open({ url: server.urlOf(database), log, poolSize });
      try {
        const ids = Array.from({ length: 12 }, (_, i) => `pool-${poolSize}-${i}`);
        expect(new Set(await Promise.all(ids.map((id) => store.queue.enqueue(record(id)))))).toEqual(
          new Set(['accepted']),
        );
        const held = await connections(database);
        expect(held).toBeLessThanOrEqual(most);
        // Twelve statements at once open more than two connections where the pool allows it.
        if (poolSize > 2) expect(held).toBeGreaterThan(2);
      } finally {
        await store.release();
      }
    }
  });
});
