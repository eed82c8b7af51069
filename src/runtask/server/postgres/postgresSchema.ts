/**
 * The PostgreSQL job store's own schema, `provider_runtask`, and the migrations that make it: numbered steps,
 * each applied once, in order, by the first instance that starts with a version of this CLI that knows it.
 *
 * The version a database is at lives in `provider_runtask.schema_version` (one row; no row, or no table, is
 * version 0). `migrate` runs in one transaction under a transaction-scoped advisory lock of its own, so that
 * instances starting together on a new database take turns: the first creates the schema, the others find it
 * made and change nothing. A database at a newer version than this CLI knows is refused rather than used: its
 * tables may mean something this version does not know.
 *
 * Nothing here touches a table the integrator did not create.
 */
import type pg from 'pg';

/** The schema of the integrator's tables. */
export const SCHEMA = 'provider_runtask';

/** The transaction lock under which one instance at a time checks and migrates the schema. */
const MIGRATION_LOCK = 'provider-runtask:schema';

/**
 * The migrations, the first one being version 1. Append only: a migration released is never edited, a change is
 * a new one (it runs on databases that already have the earlier ones).
 */
export const MIGRATIONS: readonly string[] = [
  // 1: the queues and the jobs (an `abandoned` job: the tombstone of requests refused with 503, ABANDON in
  // postgresStatements.ts).
  `CREATE TABLE ${SCHEMA}.queues (
     name text PRIMARY KEY,
     created_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE TABLE ${SCHEMA}.jobs (
     queue text NOT NULL REFERENCES ${SCHEMA}.queues (name),
     id text NOT NULL,
     seq bigint GENERATED ALWAYS AS IDENTITY,
     state text NOT NULL CHECK (state IN ('queued', 'held', 'completed', 'abandoned')),
     record jsonb NOT NULL,
     holder text,
     lease_until timestamptz,
     fence integer NOT NULL DEFAULT 0,
     created_at timestamptz NOT NULL DEFAULT now(),
     progress_at timestamptz,
     finished_at timestamptz,
     lapse_seen_at timestamptz, -- when another instance first saw a held lease run out (a takeover waits after it)
     refused jsonb NOT NULL DEFAULT '[]', -- the attempts refused with 503 (ABANDON), kept across revivals
     retried_at timestamptz, -- when a retry was answered as a duplicate of this row (it is then never abandoned)
     PRIMARY KEY (queue, id),
     CHECK (state <> 'held' OR lease_until IS NOT NULL)
   );
   CREATE INDEX jobs_queued ON ${SCHEMA}.jobs (queue, seq) WHERE state = 'queued';
   CREATE INDEX jobs_held ON ${SCHEMA}.jobs (queue, lease_until) WHERE state = 'held';
   CREATE INDEX jobs_completed ON ${SCHEMA}.jobs (queue, finished_at) WHERE state IN ('completed', 'abandoned');`,
];

/** The schema version this CLI writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** A database whose schema is newer than this CLI knows. */
export class NewerSchemaError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `its job store schema ${SCHEMA} is at version ${found}, newer than this version of provider knows ` +
        `(${known}): a newer provider migrated it; run that version, or a later one, on every instance`,
    );
    this.name = 'NewerSchemaError';
  }
}

/** What `migrate` found and left. */
export interface Migration {
  from: number;
  to: number;
}

/** The version a database is at: 0 when the version table has no row. */
async function versionOf(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${SCHEMA}.schema_version`);
  return rows[0]?.version ?? 0;
}

/**
 * Creates the schema and its version table when missing. Only what is missing: `CREATE SCHEMA IF NOT EXISTS` asks
 * for the right to create schemas even when the schema exists, and a schema made for the integrator beforehand
 * by an administrator must do.
 */
async function createVersionTable(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ schema: boolean; versions: boolean }>(
    `SELECT to_regnamespace($1) IS NOT NULL AS schema, to_regclass($2) IS NOT NULL AS versions`,
    [SCHEMA, `${SCHEMA}.schema_version`],
  );
  if (rows[0]!.versions) return;
  if (!rows[0]!.schema) await client.query(`CREATE SCHEMA ${SCHEMA}`);
  await client.query(
    `CREATE TABLE ${SCHEMA}.schema_version (
       single boolean PRIMARY KEY DEFAULT true CHECK (single),
       version integer NOT NULL,
       migrated_at timestamptz NOT NULL DEFAULT now()
     )`,
  );
}

/**
 * Brings the schema to `SCHEMA_VERSION` (idempotent) and registers `queues`, in one transaction under the
 * migration lock. Throws `NewerSchemaError` on a database at a newer version (changing nothing).
 */
export async function migrate(client: pg.ClientBase, queues: readonly string[]): Promise<Migration> {
  // Read committed whatever the database's default: each statement after the lock sees what an instance that
  // held the lock before committed (under repeatable read, the snapshot would predate the lock's grant).
  await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [MIGRATION_LOCK]);
    await createVersionTable(client);
    const from = await versionOf(client);
    if (from > SCHEMA_VERSION) throw new NewerSchemaError(from, SCHEMA_VERSION);
    for (let version = from + 1; version <= SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1]!);
    }
    if (from < SCHEMA_VERSION) {
      await client.query(
        `INSERT INTO ${SCHEMA}.schema_version (version) VALUES ($1)
         ON CONFLICT (single) DO UPDATE SET version = EXCLUDED.version, migrated_at = now()`,
        [SCHEMA_VERSION],
      );
    }
    await client.query(
      `INSERT INTO ${SCHEMA}.queues (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING`,
      [queues],
    );
    await client.query('COMMIT');
    return { from, to: SCHEMA_VERSION };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
