/**
 * The job store on PostgreSQL, shared by every instance of `runtask serve --database-url`: the queue library
 * pg-boss 10 keeps the jobs in its `job` table,
 * one queue `runtask-jobs`, each job's id a UUID made from the task result id, so that a request retried on any
 * instance is one job (pg-boss inserts with ON CONFLICT DO NOTHING). docs/runtask.md "Several instances" says
 * why pg-boss rather than Graphile Worker.
 *
 * The lease. pg-boss expires an `active` job once `started_on + expire_in` is past (its maintenance, run by one
 * instance at a time every `maintenanceIntervalSeconds`), puts it back as `retry`, and `fetch` (FOR UPDATE SKIP
 * LOCKED) hands it to exactly one caller: that is the takeover. What pg-boss 10 has no call for is renewing a
 * lease (a heartbeat) or taking a given job: this store does both with its own statements on pg-boss's table,
 * each one UPDATE of one job's row, fenced by `retry_count` (which pg-boss raises on every fetch of a job it
 * put back, so an instance that lost its lease can never touch the job again):
 *
 *   - hold at accept: `state = 'active', started_on = now()` on the job just sent (sent with `startAfter` one
 *     lease ahead, so that nobody fetches it in between; if the instance dies right there, the job becomes
 *     fetchable after one lease);
 *   - renew: `started_on = now()` for every job held here, every `heartbeatMs` (a third of the lease);
 *   - report: the job's `data` replaced by the record in phase `reporting` (with the final result);
 *   - start: the record with `checkStartedAt` set, before the check starts (a job taken over that never started
 *     is run by its new holder, not reported failed);
 *   - finish: the access token removed from `data`, then pg-boss's `complete`; until that is stored the job
 *     stays held here (its lease renewed) and the finish is tried again (databaseFaults.ts), so that a short
 *     outage never lets another instance take over a job whose final callback was delivered.
 *
 * The queue (`--role front` / `--role worker`). A front sends the job without holding it (phase `queued`, no
 * `startAfter`); a worker with free slots claims queued jobs with pg-boss's own fetch statement narrowed to
 * them (FOR UPDATE SKIP LOCKED: each to one worker), which also sets their phase to `accepted` in the same
 * UPDATE. From then on a claimed job is held by a lease like any other: if its worker dies, it is taken over
 * and reported failed (its handler may have started), never run twice. `takeOver` is the same statement for
 * every other fetchable job (leases run out, or an instance that died between `send` and its hold), so that
 * a job never started is run by a worker, not reported failed. While a job waits, one instance per heartbeat
 * (the one whose UPDATE of the job's `progressAt` wins) sends its `running` callback.
 *
 * The schema is pg-boss's, created on the first start and migrated by pg-boss itself on a start with a newer
 * pg-boss: `start()` is idempotent. Instances starting together on a new database deadlocked in pg-boss's
 * creation of the schema and the queue (a test caught it), so one instance at a time starts pg-boss, under a
 * session advisory lock of the integrator's own. pg-boss is pinned to one version in package.json because of
 * the statements above.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { UsageError } from '../../errors.js';
import { Retries, StatementWatch, poolSettings, timedOut, type DatabaseTimeouts } from './databaseFaults.js';
import type { EventLog } from './log.js';
import { passwordsOf, redactDatabaseUrl } from './redact.js';
import type { AcceptOutcome, JobQueue, JobRecord, JobStore, StoreHealth, StoreProblem } from './store.js';

/** The one queue of the integrator's jobs. */
export const QUEUE = 'runtask-jobs';
/** The schema pg-boss keeps its tables in. */
export const SCHEMA = 'pgboss';
/** The session lock under which one instance at a time creates or migrates the schema and the queue. */
const START_LOCK = 'provider-runtask:pg-boss-start';
/** How many takeovers one job may have before pg-boss gives up on it (state `failed`, no final callback). */
const MAX_TAKEOVERS = 1000;
/** The key of the leases' renewal among the writes tried again (job ids are other names). */
const LEASES = '\0leases';

export { redactDatabaseUrl };

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
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** How often a worker with free slots asks for queued jobs (default 1 s). */
  pollEveryMs?: number;
  /** The pg-boss queue (default `runtask-jobs`; `--routes` gives each route one, see `routeQueue`). */
  queue?: string;
}

/**
 * The queue of a route: `runtask-jobs` for `/` and for the single route without a routes file (as before routes
 * existed on a database), else `runtask-jobs_<name>`, `name` being the route's folder name (readable, unique
 * through its hash: routing.ts).
 */
export function routeQueue(name: string | undefined): string {
  return name === undefined ? QUEUE : `${QUEUE}_${name}`;
}

/** A UUID made from a job id: the same task result id is the same pg-boss job on every instance. */
export function jobUuid(id: string): string {
  const hex = createHash('sha256').update(`provider-runtask:${id}`).digest('hex').slice(0, 32).split('');
  hex[12] = '8'; // version 8: application-defined
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16); // RFC 9562 variant
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code !== '') return code;
  // node-postgres's own timeouts (a statement, a connection) carry no code.
  return /\btimeout\b|timed out/i.test(String((error as Error)?.message)) ? 'ETIMEDOUT' : 'EDATABASE';
}

/** A job of this instance: its pg-boss id and the fence (`retry_count` when it was taken). */
interface Held {
  uuid: string;
  fence: number;
  /** Its final callback is done: only its end remains to be stored. */
  ending?: boolean;
}

/**
 * pg-boss's fetch (its plans.js `fetchNextJob`, without its singleton/stately policies, which this queue does not
 * use): the oldest fetchable jobs matching `filter`, each to one caller, now active and started; a job fetched
 * again after it had started (its lease ran out) counts one retry more, which fences off its previous holder.
 */
function fetchStatement(filter: string, set = ''): string {
  return `WITH next AS (
      SELECT id FROM ${SCHEMA}.job
       WHERE name = $1 AND state < 'active' AND start_after < now() AND (${filter})
       ORDER BY priority DESC, created_on, id
       LIMIT $2
       FOR UPDATE SKIP LOCKED
    )
    UPDATE ${SCHEMA}.job j SET
      state = 'active',
      started_on = now(),
      retry_count = CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1 ELSE j.retry_count END${set}
    FROM next
    WHERE j.name = $1 AND j.id = next.id
    RETURNING j.id, j.data, j.retry_count, j.created_on`;
}
/** A job a front queued that no worker ever claimed. */
const NEVER_STARTED = `started_on IS NULL AND data->>'phase' = 'queued'`;

/** The job store on PostgreSQL, through pg-boss. */
export class PostgresStore implements JobStore, JobQueue {
  readonly kind = 'postgres';
  readonly where: string;
  readonly takeOverEveryMs: number;
  readonly pollEveryMs: number;
  readonly queue: JobQueue = this;
  private readonly held = new Map<string, Held>();
  private readonly secrets: string[];
  private readonly heartbeat: NodeJS.Timeout;
  private renewing: Promise<boolean> | undefined;
  private failing = false;
  private problems = 0;
  private lastProblem: StoreProblem | undefined;
  private released = false;
  /** Failures noted so far (each one, not only each incident's first): see `ok`. */
  private incidents = 0;
  /** The statements in flight: one overdue makes the store failing. */
  private readonly watch: StatementWatch;
  /** Writes to try again: the ends of jobs (by id) and the leases. */
  private readonly retries: Retries;

  private constructor(
    private readonly boss: PgBoss,
    private readonly options: PostgresStoreOptions,
    private readonly leaseSeconds: number,
    /** The pg-boss queue of this store's jobs. */
    readonly queueName: string,
    /** The stores sharing `boss`: the last one released stops it. */
    private readonly users: { count: number },
  ) {
    this.where = redactDatabaseUrl(options.url);
    this.secrets = passwordsOf(options.url);
    this.takeOverEveryMs = options.takeOverEveryMs ?? Math.min(10_000, (leaseSeconds * 1000) / 4);
    this.pollEveryMs = options.pollEveryMs ?? 1000;
    this.heartbeat = setInterval(
      () => void this.renew(),
      options.heartbeatMs ?? Math.max(250, (leaseSeconds * 1000) / 3),
    );
    this.heartbeat.unref();
    const overdueMs = options.overdueMs ?? 3000;
    this.watch = new StatementWatch(overdueMs, () =>
      this.problem(timedOut(`no answer for ${overdueMs} ms`), 'a statement is overdue'),
    );
    this.retries = new Retries(options.retryEveryMs ?? 1000);
  }

  /** Connects, creates or migrates pg-boss's schema and the queue (idempotent), and starts its maintenance. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const [store] = await PostgresStore.openQueues(options, [options.queue ?? QUEUE]);
    return store!;
  }

  /**
   * One store per queue (`--routes`: one queue per route), sharing one pg-boss and its connection pool; pg-boss
   * stops when the last of them is released.
   */
  static async openQueues(
    options: PostgresStoreOptions,
    queues: readonly string[],
  ): Promise<PostgresStore[]> {
    const leaseSeconds = Math.max(1, Math.round((options.leaseMs ?? 60_000) / 1000));
    const where = redactDatabaseUrl(options.url);
    const secrets = passwordsOf(options.url);
    const boss = new PgBoss({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      schema: SCHEMA,
      application_name: 'provider runtask serve',
      schedule: false,
      supervise: true,
      migrate: true,
      // The expiry of leases runs with the maintenance: twice per lease, so a lease is noticed within 1.5 of it.
      maintenanceIntervalSeconds: Math.max(1, Math.floor(leaseSeconds / 2)),
      // Timeouts on every connection: a database that hangs fails statements instead of holding them forever.
      ...poolSettings(options),
    });
    // pg-boss emits the errors of its maintenance and pool here (the stores exist once started).
    const stores: PostgresStore[] = [];
    boss.on('error', (error: unknown) => {
      for (const store of stores) store.problem(error, 'the queue library failed');
    });
    // Instances starting together on a new database deadlock in pg-boss's creation of its schema and of the
    // queue's partition: one instance at a time does it, under a session lock of its own (released with the
    // session, also when the process dies).
    const gate = new pg.Client({
      connectionString: options.url,
      application_name: 'provider runtask serve',
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      keepAlive: true,
    });
    gate.on('error', () => undefined);
    try {
      await gate.connect();
      await gate.query('SELECT pg_advisory_lock(hashtext($1))', [START_LOCK]);
      await boss.start();
      for (const queue of queues) {
        await boss.createQueue(queue, {
          name: queue,
          policy: 'standard',
          retryLimit: MAX_TAKEOVERS,
          expireInSeconds: leaseSeconds,
        });
      }
      await gate.end();
    } catch (error) {
      await gate.end().catch(() => undefined);
      await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
      throw new UsageError(
        `cannot use the database ${where}: ${PostgresStore.scrub(String(error), secrets)}`,
        {
          hint: 'Check --database-url (or RUNTASK_DATABASE_URL): the server must be reachable and the user allowed to create the schema pgboss.',
        },
      );
    }
    const users = { count: queues.length };
    for (const queue of queues) stores.push(new PostgresStore(boss, options, leaseSeconds, queue, users));
    options.log.info(
      'store.opened',
      `job store: PostgreSQL ${where} (lease ${leaseSeconds}s${queues.length > 1 ? `, ${queues.length} queues` : ''})`,
      { database: where, lease_s: leaseSeconds, queues: queues.join(',') },
    );
    return stores;
  }

  private static scrub(text: string, secrets: string[]): string {
    let out = text;
    for (const secret of secrets) out = out.split(secret).join('***');
    return out;
  }

  private sql(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }> {
    return this.watch.run(() => this.boss.getDb().executeSql(text, values));
  }

  /**
   * A statement that began at incident `since` worked: the store works again, unless a failure was noted since
   * it began (a statement sent before the server went away may still come back fine after the failure).
   */
  private ok(since: number): void {
    if (!this.failing || since !== this.incidents) return;
    this.failing = false;
    this.options.log.info('store.restored', `the job store ${this.where} works again`, {
      database: this.where,
    });
  }

  private problem(error: unknown, what: string): void {
    this.incidents++;
    const code = codeOf(error);
    const message = `${what}: ${PostgresStore.scrub(String((error as Error)?.message ?? error), this.secrets)}`;
    this.lastProblem = { at: new Date().toISOString(), code, message };
    if (this.failing) return;
    this.failing = true;
    this.problems++;
    this.options.log.error('store.failed', `the job store ${this.where} failed: ${message}`, {
      code,
      database: this.where,
      jobs: this.held.size,
    });
  }

  async accept(record: JobRecord): Promise<AcceptOutcome> {
    const since = this.incidents;
    const uuid = jobUuid(record.id);
    // A statement is overdue: the database hangs, and this one would wait as long.
    if (this.watch.overdue()) return 'unsaved';
    try {
      const sent = await this.watch.run(() =>
        this.boss.send(this.queueName, record, {
          id: uuid,
          // Held here from the next statement on; nobody else fetches it before a lease has passed.
          startAfter: this.leaseSeconds,
          expireInSeconds: this.leaseSeconds,
          retryLimit: MAX_TAKEOVERS,
        }),
      );
      if (sent === null) {
        this.ok(since);
        return 'duplicate';
      }
      const { rows } = await this.sql(
        `UPDATE ${SCHEMA}.job SET state = 'active', started_on = now()
          WHERE name = $1 AND id = $2 AND state = 'created' RETURNING retry_count`,
        [this.queueName, uuid],
      );
      this.ok(since);
      if (rows.length !== 1) return 'duplicate';
      this.held.set(record.id, { uuid, fence: Number(rows[0]!.retry_count) });
      return 'accepted';
    } catch (error) {
      this.problem(error, `cannot store job ${record.id}`);
      return 'unsaved';
    }
  }

  async report(record: JobRecord): Promise<boolean> {
    return (await this.write(record, `cannot store the result of job ${record.id}`)) === 'stored';
  }

  started(record: JobRecord): Promise<'stored' | 'lost' | 'unsaved'> {
    return this.write(record, `cannot store the start of job ${record.id}`);
  }

  /** Replaces a held job's record (fenced: nothing is written once another instance took it over). */
  private async write(record: JobRecord, what: string): Promise<'stored' | 'lost' | 'unsaved'> {
    const since = this.incidents;
    const held = this.held.get(record.id);
    if (held === undefined) return 'lost';
    try {
      const { rows } = await this.sql(
        `UPDATE ${SCHEMA}.job SET data = $3::jsonb
          WHERE name = $1 AND id = $2 AND state = 'active' AND retry_count = $4 RETURNING id`,
        [this.queueName, held.uuid, JSON.stringify(record), held.fence],
      );
      this.ok(since);
      if (rows.length === 1) return 'stored';
      this.lost(record.id);
      return 'lost';
    } catch (error) {
      this.problem(error, what);
      return 'unsaved';
    }
  }

  /** Forgets a job once its end is stored; until then it stays held (leases renewed) and is tried again. */
  async finish(id: string): Promise<void> {
    const held = this.held.get(id);
    if (held === undefined) return;
    held.ending = true;
    const attempt = (): Promise<boolean> => this.end(id, held);
    if (!(await attempt())) this.retries.add(id, attempt);
  }

  /** One try at storing a job's end: true once stored, or once the job is no longer this instance's. */
  private async end(id: string, held: Held): Promise<boolean> {
    if (this.held.get(id) !== held) return true;
    const since = this.incidents;
    try {
      const { rows } = await this.sql(
        `UPDATE ${SCHEMA}.job SET data = data #- '{request,access_token}'
          WHERE name = $1 AND id = $2 AND state = 'active' AND retry_count = $3 RETURNING id`,
        [this.queueName, held.uuid, held.fence],
      );
      if (rows.length === 1) await this.watch.run(() => this.boss.complete(this.queueName, held.uuid));
      // A try that timed out may still have been carried out once the database answered again.
      const mine =
        rows.length === 1 ||
        (await this.watch
          .run(() => this.boss.getJobById(this.queueName, held.uuid))
          .then((job) => job?.state === 'completed' && job.retryCount === held.fence));
      this.ok(since);
      if (!mine) this.lost(id);
      else if (this.held.get(id) === held) this.held.delete(id);
      return true;
    } catch (error) {
      this.problem(error, `cannot finish job ${id}`);
      return false;
    }
  }

  async takeOver(): Promise<JobRecord[]> {
    const since = this.incidents;
    if (this.released) return [];
    let rows: Record<string, unknown>[];
    try {
      ({ rows } = await this.sql(fetchStatement(`NOT (${NEVER_STARTED})`), [this.queueName, 50]));
      this.ok(since);
    } catch (error) {
      this.problem(error, 'cannot look for jobs to take over');
      return [];
    }
    const records: JobRecord[] = [];
    for (const row of rows) {
      const record = row.data as JobRecord;
      const takeovers = Number(row.retry_count);
      this.held.set(record.id, { uuid: String(row.id), fence: takeovers });
      this.options.log.warn(
        'store.took_over',
        `took over job ${record.id} (${record.phase}): the instance that held it stopped renewing its lease`,
        { job: record.id, phase: record.phase, takeovers },
      );
      records.push(record);
    }
    records.sort((a, b) => a.acceptedAt.localeCompare(b.acceptedAt));
    return records;
  }

  async enqueue(record: JobRecord): Promise<AcceptOutcome> {
    const since = this.incidents;
    try {
      const sent = await this.watch.run(() =>
        this.boss.send(
          this.queueName,
          { ...record, phase: 'queued' },
          { id: jobUuid(record.id), expireInSeconds: this.leaseSeconds, retryLimit: MAX_TAKEOVERS },
        ),
      );
      this.ok(since);
      return sent === null ? 'duplicate' : 'accepted';
    } catch (error) {
      this.problem(error, `cannot queue job ${record.id}`);
      return 'unsaved';
    }
  }

  async claim(max: number): Promise<JobRecord[]> {
    const since = this.incidents;
    if (this.released || max < 1) return [];
    try {
      const { rows } = await this.sql(
        fetchStatement(NEVER_STARTED, `, data = jsonb_set(j.data, '{phase}', '"accepted"')`),
        [this.queueName, max],
      );
      this.ok(since);
      const records: JobRecord[] = [];
      // UPDATE … RETURNING keeps no order: oldest first, as they were queued.
      rows.sort((x, y) => (x.created_on as Date).getTime() - (y.created_on as Date).getTime());
      for (const row of rows) {
        const record = row.data as JobRecord;
        this.held.set(record.id, { uuid: String(row.id), fence: Number(row.retry_count) });
        records.push(record);
      }
      return records;
    } catch (error) {
      this.problem(error, 'cannot take jobs from the queue');
      return [];
    }
  }

  async dueForProgress(everyMs: number): Promise<JobRecord[]> {
    const since = this.incidents;
    if (this.released) return [];
    try {
      const { rows } = await this.sql(
        `UPDATE ${SCHEMA}.job SET data = jsonb_set(data, '{progressAt}', to_jsonb(now()))
          WHERE name = $1 AND state < 'active' AND ${NEVER_STARTED}
            AND COALESCE((data->>'progressAt')::timestamptz, created_on) <= now() - make_interval(secs => $2)
          RETURNING data`,
        [this.queueName, everyMs / 1000],
      );
      this.ok(since);
      return rows.map((row) => row.data as JobRecord);
    } catch (error) {
      this.problem(error, 'cannot read the queued jobs');
      return [];
    }
  }

  async depth(): Promise<number> {
    // Failing, it would wait for a statement timeout: /metrics answers at once without it.
    if (this.failing || this.watch.overdue()) throw timedOut('the job store is failing');
    const { rows } = await this.sql(
      `SELECT count(*)::int AS n FROM ${SCHEMA}.job WHERE name = $1 AND state < 'active' AND ${NEVER_STARTED}`,
      [this.queueName],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Renews the lease of every job held here; a job whose lease was taken over meanwhile is let go. A renewal
   * that fails is tried again every `retryEveryMs`, not only at the next heartbeat, so that a short outage
   * leaves the leases in force.
   */
  private renew(): Promise<boolean> {
    if (this.renewing !== undefined || this.released) return this.renewing ?? Promise.resolve(true);
    const held = [...this.held.entries()];
    this.renewing = (async () => {
      const since = this.incidents;
      try {
        const { rows } = await this.sql(
          `UPDATE ${SCHEMA}.job j SET started_on = now()
             FROM unnest($2::uuid[], $3::int[]) AS h(id, fence)
            WHERE j.name = $1 AND j.id = h.id AND j.retry_count = h.fence AND j.state = 'active'
            RETURNING j.id`,
          [this.queueName, held.map(([, h]) => h.uuid), held.map(([, h]) => h.fence)],
        );
        this.ok(since);
        const renewed = new Set(rows.map((row) => String(row.id)));
        for (const [id, h] of held) {
          // An ending job's own end is checked by its next try (it may have just been stored).
          if (!renewed.has(h.uuid) && this.held.get(id) === h && !h.ending) this.lost(id);
        }
        return true;
      } catch (error) {
        this.problem(error, 'cannot renew the leases');
        if (!this.released) this.retries.add(LEASES, () => this.renew());
        return false;
      }
    })().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  /** A job whose lease ran out and was taken by another instance: nothing of it is written from here again. */
  private lost(id: string): void {
    if (!this.held.delete(id)) return;
    this.options.log.warn(
      'store.lease_lost',
      `job ${id} was taken over by another instance (this one did not renew its lease in time)`,
      { job: id },
    );
  }

  /** The ids of the jobs held here (for tests and /healthz). */
  heldJobs(): string[] {
    return [...this.held.keys()];
  }

  health(): StoreHealth {
    return {
      status: this.failing || this.watch.overdue() ? 'failing' : 'ok',
      problems: this.problems,
      ...(this.lastProblem === undefined ? {} : { lastProblem: this.lastProblem }),
      // Jobs whose end could not be stored yet (their final callback is delivered).
      unsaved: this.retries.keys().filter((key) => key !== LEASES).length,
    };
  }

  /**
   * A graceful release gives back the leases of the jobs still held (pg-boss's `fail` puts them back at once, for
   * another instance to take over now); a crash keeps them, so that they are taken over once they run out.
   */
  async release(options: { crash?: boolean } = {}): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.heartbeat);
    this.retries.stop();
    await this.renewing;
    // A last try at the ends not stored yet; those left keep their lease until it runs out (another instance
    // then delivers their stored result again, which the platform refuses with 409): never given back at once.
    if (!options.crash) await this.retries.flush();
    const ending = [...this.held.entries()].filter(([, h]) => h.ending);
    if (ending.length > 0 && !options.crash) {
      this.options.log.error(
        'store.unfinished',
        `${ending.length} delivered job(s) could not be marked finished in ${this.where}`,
        { database: this.where, jobs: ending.map(([id]) => id).join(',') },
      );
    }
    const giveBack = [...this.held.values()].filter((h) => !h.ending);
    if (!options.crash && giveBack.length > 0) {
      const uuids = giveBack.map((h) => h.uuid);
      await this.boss
        .fail(this.queueName, uuids)
        .catch((error: unknown) => this.problem(error, 'cannot give back the leases'));
    }
    this.held.clear();
    if (--this.users.count === 0) await this.boss.stop({ graceful: false, wait: true, close: true });
  }
}
