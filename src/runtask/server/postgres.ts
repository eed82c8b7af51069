/**
 * The job store on PostgreSQL, shared by every instance of `runtask serve --database-url`: each job is a row of the
 * integrator's own table `provider_runtask.jobs` (schema and migrations: postgresSchema.ts; the statements and the
 * states of a job: postgresStatements.ts), keyed by queue and task result id, so that a request retried on any
 * instance is one job. docs/runtask.md "Several instances" says why a table of its own rather than a queue library.
 *
 * The lease. A job is inserted already held by the instance that accepts it, one lease ahead (`lease_until`);
 * the heartbeat (every `heartbeatMs`, a third of the lease) renews the leases of every job held here in one
 * UPDATE. A job whose lease is past is taken over by the first instance that asks, which raises its fence: every
 * write names the fence its writer took the job with, so an instance that lost its lease can never write the job
 * again. The writes: the start (`checkStartedAt`, stored before the check starts: a job taken over that never
 * started is run by its new holder, not reported failed), the final result (phase `reporting`, before its
 * delivery), and the finish (completed, the access token removed, in one statement). Until its finish is stored a
 * job stays held here and the finish is tried again (databaseFaults.ts), so that a short outage never lets
 * another instance take over a job whose final callback was delivered.
 *
 * The queue (`--role front` / `--role worker`). A front inserts the job held by nobody; a worker with free slots
 * claims queued jobs, oldest first, each to one worker, in phase `accepted`: held by a lease from then on, so a
 * claimed job whose worker dies is taken over and reported failed, never run twice. While a job waits, one
 * instance per heartbeat (the one whose UPDATE of the job's `progress_at` wins) sends its `running` callback.
 *
 * Every statement runs under the timeouts and the watch of databaseFaults.ts: a database that hangs makes the
 * store failing (/healthz 503, new jobs refused) instead of holding requests forever.
 */
import { Retries, StoreCondition, timedOut } from './databaseFaults.js';
import type { EventLog } from './log.js';
import { QUEUE, openPool, routeQueue, type PostgresStoreOptions, type Shared } from './postgresPool.js';
import { SCHEMA } from './postgresSchema.js';
import * as sql from './postgresStatements.js';
import { passwordsOf, redactDatabaseUrl } from './redact.js';
import type { AcceptOutcome, JobQueue, JobRecord, JobStore, StoreHealth } from './store.js';

/** How long a completed job stays (a late copy of its request is a duplicate meanwhile), in seconds. */
const KEEP_COMPLETED_S = 12 * 3600;
/** How often an instance deletes the completed jobs past `KEEP_COMPLETED_S`. */
const PRUNE_EVERY_MS = 3600_000;
/** The key of the leases' renewal among the writes tried again (job ids are other names). */
const LEASES = '\0leases';

export { QUEUE, SCHEMA, redactDatabaseUrl, routeQueue, type PostgresStoreOptions };

/** A job of this instance: the fence it was taken with. */
interface Held {
  fence: number;
  /** Its final callback is done: only its end remains to be stored. */
  ending?: boolean;
}

/** The job store on PostgreSQL, in the integrator's own table. */
export class PostgresStore implements JobStore, JobQueue {
  readonly kind = 'postgres';
  readonly where: string;
  readonly takeOverEveryMs: number;
  readonly pollEveryMs: number;
  readonly queue: JobQueue = this;
  private readonly held = new Map<string, Held>();
  private readonly heartbeat: NodeJS.Timeout;
  private renewing: Promise<boolean> | undefined;
  private released = false;
  private prunedAt = 0;
  /** Failing or working, and the watch over the statements in flight. */
  private readonly condition: StoreCondition;
  /** Writes to try again: the ends of jobs (by id) and the leases. */
  private readonly retries: Retries;
  private readonly log: EventLog;

  private constructor(
    private readonly shared: Shared,
    options: PostgresStoreOptions,
    private readonly leaseSeconds: number,
    /** The queue of this store's jobs. */
    readonly queueName: string,
  ) {
    this.where = redactDatabaseUrl(options.url);
    this.log = options.log;
    this.takeOverEveryMs = options.takeOverEveryMs ?? Math.min(10_000, (leaseSeconds * 1000) / 4);
    this.pollEveryMs = options.pollEveryMs ?? 1000;
    this.heartbeat = setInterval(
      () => void this.renew(),
      options.heartbeatMs ?? Math.max(250, (leaseSeconds * 1000) / 3),
    );
    this.heartbeat.unref();
    this.condition = new StoreCondition(
      { log: options.log, where: this.where, secrets: passwordsOf(options.url) },
      options.overdueMs ?? 3000,
      () => this.held.size,
    );
    this.retries = new Retries(options.retryEveryMs ?? 1000);
  }

  /** Connects, creates or migrates the schema (idempotent), and registers the queue. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const [store] = await PostgresStore.openQueues(options, [options.queue ?? QUEUE]);
    return store!;
  }

  /**
   * One store per queue (`--routes`: one queue per route), sharing one connection pool, which is ended when the
   * last of them is released.
   */
  static async openQueues(
    options: PostgresStoreOptions,
    queues: readonly string[],
  ): Promise<PostgresStore[]> {
    const leaseSeconds = Math.max(1, Math.round((options.leaseMs ?? 60_000) / 1000));
    const where = redactDatabaseUrl(options.url);
    const stores: PostgresStore[] = [];
    const shared = await openPool(options, queues, (error) => {
      for (const store of stores) store.condition.problem(error, 'a database connection failed');
    });
    for (const queue of queues) stores.push(new PostgresStore(shared, options, leaseSeconds, queue));
    options.log.info(
      'store.opened',
      `job store: PostgreSQL ${where} (lease ${leaseSeconds}s${queues.length > 1 ? `, ${queues.length} queues` : ''})`,
      { database: where, lease_s: leaseSeconds, queues: queues.join(',') },
    );
    return stores;
  }

  private run(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }> {
    return this.condition.watch.run(() => this.shared.pool.query(text, values));
  }

  /** The values ACCEPT and WRITE take: the queue, the job, its record, this holder, then the lease or fence. */
  private recordValues(record: JobRecord, last: number): unknown[] {
    return [this.queueName, record.id, JSON.stringify(record), this.shared.holder, last];
  }

  async accept(record: JobRecord): Promise<AcceptOutcome> {
    const since = this.condition.mark();
    // A statement is overdue: the database hangs, and this one would wait as long.
    if (this.condition.watch.overdue()) return 'unsaved';
    try {
      const { rows } = await this.run(sql.ACCEPT, this.recordValues(record, this.leaseSeconds));
      this.condition.ok(since);
      if (rows.length !== 1) return 'duplicate';
      this.held.set(record.id, { fence: Number(rows[0]!.fence) });
      return 'accepted';
    } catch (error) {
      this.condition.problem(error, `cannot store job ${record.id}`);
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
    const since = this.condition.mark();
    const held = this.held.get(record.id);
    if (held === undefined) return 'lost';
    try {
      const { rows } = await this.run(sql.WRITE, this.recordValues(record, held.fence));
      this.condition.ok(since);
      if (rows.length === 1) return 'stored';
      this.lost(record.id);
      return 'lost';
    } catch (error) {
      this.condition.problem(error, what);
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
    const since = this.condition.mark();
    try {
      const { rows } = await this.run(sql.FINISH, [this.queueName, id, this.shared.holder, held.fence]);
      // A try that timed out may still have been carried out once the database answered again.
      const mine =
        rows.length === 1 ||
        (await this.run(sql.FINISHED_WITH, [this.queueName, id, held.fence])).rows[0]?.n === 1;
      this.condition.ok(since);
      if (!mine) this.lost(id);
      else if (this.held.get(id) === held) this.held.delete(id);
      return true;
    } catch (error) {
      this.condition.problem(error, `cannot finish job ${id}`);
      return false;
    }
  }

  async takeOver(): Promise<JobRecord[]> {
    const since = this.condition.mark();
    if (this.released) return [];
    let rows: Record<string, unknown>[];
    try {
      ({ rows } = await this.run(sql.TAKE_OVER, [this.queueName, 50, this.shared.holder, this.leaseSeconds]));
      this.condition.ok(since);
    } catch (error) {
      this.condition.problem(error, 'cannot look for jobs to take over');
      return [];
    }
    const records: JobRecord[] = [];
    for (const row of rows) {
      const record = row.record as JobRecord;
      const takeovers = Number(row.fence);
      this.held.set(record.id, { fence: takeovers });
      this.log.warn(
        'store.took_over',
        `took over job ${record.id} (${record.phase}): the instance that held it stopped renewing its lease`,
        { job: record.id, phase: record.phase, takeovers },
      );
      records.push(record);
    }
    records.sort((a, b) => a.acceptedAt.localeCompare(b.acceptedAt));
    await this.prune();
    return records;
  }

  /** Deletes the completed jobs kept long enough, at most once per `PRUNE_EVERY_MS` (a failure waits as long). */
  private async prune(): Promise<void> {
    if (Date.now() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = Date.now();
    const since = this.condition.mark();
    try {
      await this.run(sql.PRUNE, [this.queueName, KEEP_COMPLETED_S]);
      this.condition.ok(since);
    } catch (error) {
      this.condition.problem(error, 'cannot delete the completed jobs');
    }
  }

  async enqueue(record: JobRecord): Promise<AcceptOutcome> {
    const since = this.condition.mark();
    try {
      const queued = JSON.stringify({ ...record, phase: 'queued' });
      const { rows } = await this.run(sql.ENQUEUE, [this.queueName, record.id, queued]);
      this.condition.ok(since);
      return rows.length === 1 ? 'accepted' : 'duplicate';
    } catch (error) {
      this.condition.problem(error, `cannot queue job ${record.id}`);
      return 'unsaved';
    }
  }

  async claim(max: number): Promise<JobRecord[]> {
    const since = this.condition.mark();
    if (this.released || max < 1) return [];
    try {
      const { rows } = await this.run(sql.CLAIM, [
        this.queueName,
        max,
        this.shared.holder,
        this.leaseSeconds,
      ]);
      this.condition.ok(since);
      // UPDATE … RETURNING keeps no order: oldest first, as they were queued.
      rows.sort((x, y) => Number(x.seq) - Number(y.seq));
      const records: JobRecord[] = [];
      for (const row of rows) {
        const record = row.record as JobRecord;
        this.held.set(record.id, { fence: Number(row.fence) });
        records.push(record);
      }
      return records;
    } catch (error) {
      this.condition.problem(error, 'cannot take jobs from the queue');
      return [];
    }
  }

  async dueForProgress(everyMs: number): Promise<JobRecord[]> {
    const since = this.condition.mark();
    if (this.released) return [];
    try {
      const { rows } = await this.run(sql.DUE_FOR_PROGRESS, [this.queueName, everyMs / 1000]);
      this.condition.ok(since);
      return rows.map((row) => row.record as JobRecord);
    } catch (error) {
      this.condition.problem(error, 'cannot read the queued jobs');
      return [];
    }
  }

  async depth(): Promise<number> {
    // Failing, it would wait for a statement timeout: /metrics answers at once without it.
    if (this.condition.down()) throw timedOut('the job store is failing');
    const { rows } = await this.run(sql.DEPTH, [this.queueName]);
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
    if (held.length === 0) return Promise.resolve(true);
    this.renewing = (async () => {
      const since = this.condition.mark();
      try {
        const { rows } = await this.run(sql.RENEW, [
          this.queueName,
          this.shared.holder,
          this.leaseSeconds,
          held.map(([id]) => id),
          held.map(([, h]) => h.fence),
        ]);
        this.condition.ok(since);
        const renewed = new Set(rows.map((row) => String(row.id)));
        for (const [id, h] of held) {
          // An ending job's own end is checked by its next try (it may have just been stored).
          if (!renewed.has(id) && this.held.get(id) === h && !h.ending) this.lost(id);
        }
        return true;
      } catch (error) {
        this.condition.problem(error, 'cannot renew the leases');
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
    this.log.warn(
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
    // Unsaved: the jobs whose end could not be stored yet (their final callback is delivered).
    return this.condition.health(this.retries.keys().filter((key) => key !== LEASES).length);
  }

  /**
   * A graceful release gives back the leases of the jobs still held (they end now, for another instance to take
   * over at once); a crash keeps them, so that they are taken over once they run out.
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
      this.log.error(
        'store.unfinished',
        `${ending.length} delivered job(s) could not be marked finished in ${this.where}`,
        { database: this.where, jobs: ending.map(([id]) => id).join(',') },
      );
    }
    const giveBack = [...this.held.entries()].filter(([, h]) => !h.ending);
    if (!options.crash && giveBack.length > 0) {
      await this.run(sql.GIVE_BACK, [
        this.queueName,
        this.shared.holder,
        giveBack.map(([id]) => id),
        giveBack.map(([, h]) => h.fence),
      ]).catch((error: unknown) => this.condition.problem(error, 'cannot give back the leases'));
    }
    this.held.clear();
    if (--this.shared.users === 0) await this.shared.pool.end();
  }
}
