/**
 * The job-store contract (store.contract.ts) against PostgreSQL (postgres.ts, through pg-boss), on a real server
 * this file starts on 127.0.0.1 (test/helpers/postgres.ts): a database of its own per case, leases of 2 s.
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
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
        PostgresStore.open({ url, log, leaseMs, ...(renews ? {} : { heartbeatMs: 2_000_000_000 }) }),
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
