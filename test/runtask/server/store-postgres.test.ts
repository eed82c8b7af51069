/**
 * The job-store contract (store.contract.ts) against PostgreSQL (postgres.ts, through pg-boss), on a real server
 * this file starts on 127.0.0.1 (test/helpers/postgres.ts): a database of its own per case, leases of 2 s.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLog } from '../../../src/runtask/server/log.js';
import { PostgresStore, SCHEMA } from '../../../src/runtask/server/postgres.js';
import { Output } from '../../../src/ui/output.js';
import { Capture } from '../../helpers/cli.js';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { describeJobStore } from './store.contract.js';

const log = EventLog.for(new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }));
let server: TestPostgres;
let databases = 0;

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describeJobStore({
  name: 'PostgreSQL (pg-boss)',
  shared: true,
  async fresh() {
    const database = `contract_${++databases}`;
    await server.createDatabase(database);
    const url = server.urlOf(database);
    return {
      open: ({ leaseMs = 60_000, renews = true } = {}) =>
        // Renewing often (a lease has to go 3 s unrenewed on a loaded machine before it is lost by mistake).
        PostgresStore.open({ url, log, leaseMs, heartbeatMs: renews ? 250 : 2_000_000_000 }),
      async dump() {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          const { rows } = await client.query<{ text: string }>(
            `SELECT coalesce(data::text, '') || ' ' || coalesce(output::text, '') AS text FROM ${SCHEMA}.job
             UNION ALL
             SELECT coalesce(data::text, '') || ' ' || coalesce(output::text, '') FROM ${SCHEMA}.archive`,
          );
          return rows.map((row) => row.text).join('\n');
        } finally {
          await client.end();
        }
      },
    };
  },
});

describe('PostgreSQL: starting', () => {
  it('instances starting together on a new database all start: one creates the schema and the queue', async () => {
    for (let round = 0; round < 4; round++) {
      const database = `together_${round}`;
      await server.createDatabase(database);
      const url = server.urlOf(database);
      const opened = await Promise.allSettled([1, 2, 3].map(() => PostgresStore.open({ url, log })));
      for (const result of opened) if (result.status === 'fulfilled') await result.value.release();
      expect(opened.map((result) => (result.status === 'rejected' ? String(result.reason) : 'ok'))).toEqual([
        'ok',
        'ok',
        'ok',
      ]);
    }
  });

  it('creates the schema on the first start and finds it on the next (one version row, the queue once)', async () => {
    await server.createDatabase('restart');
    const url = server.urlOf('restart');
    for (let start = 0; start < 2; start++) await (await PostgresStore.open({ url, log })).release();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const versions = await client.query(`SELECT version FROM ${SCHEMA}.version`);
      const queues = await client.query<{ name: string }>(`SELECT name FROM ${SCHEMA}.queue`);
      expect(versions.rows).toHaveLength(1);
      expect(queues.rows.map((row) => row.name)).toEqual(['runtask-jobs']);
    } finally {
      await client.end();
    }
  });
});
