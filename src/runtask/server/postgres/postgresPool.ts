/**
 * Opening the PostgreSQL job store's database: its settings, the queue names, and the connection pool that the
 * stores of one instance share, with the timeouts of databaseFaults.ts on every connection and the schema brought
 * up to date (postgresSchema.ts) before the first job. A database that cannot be used is a usage error naming it
 * without its password.
 */
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import { hostname } from 'node:os';
import pg from 'pg';
import { UsageError } from '../../../errors.js';
import { poolSettings, settleWithin, type DatabaseTimeouts } from './databaseFaults.js';
import type { EventLog } from '../log.js';
import { NewerSchemaError, SCHEMA, migrate, type Migration } from './postgresSchema.js';
import { passwordsOf, redactDatabaseUrl, withoutPasswords } from '../redact.js';

/** The one queue of the integrator's jobs. */
export const QUEUE = 'runtask-jobs';

/** Settings of the PostgreSQL store. */
export interface PostgresStoreOptions extends DatabaseTimeouts {
  /** `postgres://user:password@host:port/database` (never logged with its password). */
  url: string;
  log: EventLog;
  /** How long a job stays held by an instance that stopped renewing it (default 60 s; whole seconds). */
  leaseMs?: number;
  /** How often the leases are renewed (default a third of the lease). */
  heartbeatMs?: number;
  /** How often the manager asks for jobs to take over (default a quarter of the lease, at most 10 s). */
  takeOverEveryMs?: number;
  /**
   * How long a lease seen past must stay so before the job is taken over (default a third of the lease, at least
   * three `retryEveryMs`): time for a holder that is alive to renew once the database answers again.
   */
  lapseWaitMs?: number;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** How often a worker with free slots asks for queued jobs (default 1 s). */
  pollEveryMs?: number;
  /** The queue (default `runtask-jobs`; `--routes` gives each route one, see `routeQueue`). */
  queue?: string;
}

/**
 * The queue of a route: `runtask-jobs` for `/` and for the single route without a routes file, else
 * `runtask-jobs_<name>`, `name` being the route's folder name (readable, unique through its hash: routing.ts).
 */
export function routeQueue(name: string | undefined): string {
  return name === undefined ? QUEUE : `${QUEUE}_${name}`;
}

/** What the stores of one instance share: the pool, and who holds their jobs. */
export interface Shared {
  pool: pg.Pool;
  /** This instance, as `holder` of its jobs (host, process, and a random part for stores in one process). */
  holder: string;
  /** The stores sharing `pool`: the last one released ends it. */
  users: number;
  /** The sockets of the pool's connections, for `endPool`. */
  sockets: Set<Socket>;
}

/**
 * Ends the pool: its connections close once their statements are answered, or at once after `withinMs` (their
 * sockets destroyed): a database that hangs, which answers neither a statement nor a goodbye, must not hold the
 * process.
 */
export async function endPool(shared: Shared, withinMs: number): Promise<void> {
  const ended = shared.pool.end().catch(() => undefined);
  if (
    (await settleWithin(
      ended.then(() => true),
      withinMs,
      false,
    )) === false
  ) {
    for (const socket of shared.sockets) socket.destroy();
    await ended;
  }
}

/** The name connections carry in `pg_stat_activity`. */
const APPLICATION_NAME = 'provider runtask serve';

/** Brings the schema up to date on one connection of `pool` (destroyed if it failed). */
async function migrateOn(pool: pg.Pool, queues: readonly string[]): Promise<Migration> {
  const client = await pool.connect();
  try {
    const migration = await migrate(client, queues);
    client.release();
    return migration;
  } catch (error) {
    client.release(!(error instanceof NewerSchemaError));
    throw error;
  }
}

/**
 * The pool of `options.poolSize` connections, for one store per queue of `queues`, once the schema is up to
 * date (a migration logged) and the queues are registered.
 * `onError` gets the errors of idle connections (a server gone away). Throws a UsageError when the database
 * cannot be used (the pool ended).
 */
export async function openPool(
  options: PostgresStoreOptions,
  queues: readonly string[],
  onError: (error: unknown) => void,
): Promise<Shared> {
  const sockets = new Set<Socket>();
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    application_name: APPLICATION_NAME,
    // Timeouts on every connection: a database that hangs fails statements instead of holding them forever.
    ...poolSettings(options),
    // The sockets as node-postgres makes them (it starts TLS over one itself), known here to end them at once.
    stream: () => {
      const socket = new Socket();
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      return socket;
    },
  });
  pool.on('error', onError);

  let migration: Migration;
  try {
    migration = await migrateOn(pool, queues);
  } catch (error) {
    await pool.end().catch(() => undefined);
    const detail = withoutPasswords(String((error as Error)?.message ?? error), passwordsOf(options.url));
    throw new UsageError(`cannot use the database ${redactDatabaseUrl(options.url)}: ${detail}`, {
      hint:
        error instanceof NewerSchemaError
          ? 'Run that newer version of provider on every instance: a schema is never rolled back.'
          : `Check --database-url (or RUNTASK_DATABASE_URL): the server must be reachable and the user allowed to create the schema ${SCHEMA} (or own it).`,
    });
  }
  if (migration.from < migration.to) {
    const where = redactDatabaseUrl(options.url);
    options.log.info(
      'store.migrated',
      `job store schema ${SCHEMA}: version ${migration.from} → ${migration.to}`,
      {
        database: where,
        from: migration.from,
        to: migration.to,
      },
    );
  }
  const holder = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  return { pool, holder, users: queues.length, sockets };
}
