/**
 * The job store on PostgreSQL, shared by every instance of `runtask serve --database-url`: each job is a row of the
 * integrator's own table `provider_runtask.jobs` (schema and migrations: postgresSchema.ts; the statements and the
 * states of a job: postgresStatements.ts), keyed by queue and task result id, so that a request retried on any
 * instance is one job. docs/runtask.md "Several instances" says why a table of its own rather than a queue library.
 *
 * The lease. A job is inserted already held by the instance that accepts it, one lease ahead (`lease_until`);
 * the heartbeat (every `heartbeatMs`, a third of the lease) renews the leases of every job held here in one
 * UPDATE. A job whose lease is past is taken over by another instance (never by its holder) once it stayed past
 * for a while after it was first seen so (a holder that is alive renews meanwhile, also right after a database
 * hang), which raises its fence: every write names the fence its writer took the job with, so an instance that
 * lost its lease can never write the job again. The writes: the start (`checkStartedAt`, stored before the check
 * starts: a job taken over that never started is run by its new holder, not reported failed), the final result
 * (phase `reporting`: the claim of the right to send the final callback, which is sent only once it is stored or
 * while the lease surely lasts: postgresHoldings.ts), and the finish (completed, the access token removed, in one
 * statement). Until its finish is stored a job stays held here and the finish is tried again (databaseFaults.ts),
 * so that a short outage never lets another instance take over a job whose final callback was delivered. A job
 * refused with 503 whose insert was carried out after all is removed (postgresRefused.ts). The queue of fronts
 * and workers: postgresQueue.ts.
 *
 * Every statement runs under the timeouts and the watch of databaseFaults.ts: a database that hangs makes the
 * store failing (/healthz 503, new jobs refused) instead of holding requests forever.
 */
import { Retries, StoreCondition, settleWithin } from './databaseFaults.js';
import type { EventLog } from '../log.js';
import { QUEUE, endPool, openPool, type PostgresStoreOptions, type Shared } from './postgresPool.js';
import { Holdings, type Held } from './postgresHoldings.js';
import { RefusedCopies, type RefusedFate } from './postgresRefused.js';
import { SCHEMA } from './postgresSchema.js';
import * as sql from './postgresStatements.js';
import { passwordsOf, redactDatabaseUrl } from '../redact.js';
import { PostgresQueue, type QueueStore } from './postgresQueue.js';
import { clock, type AcceptOutcome, type JobRecord, type JobStore, type StoreHealth } from '../store.js';

/** How long a completed job stays (a late copy of its request is a duplicate meanwhile), in seconds. */
const KEEP_COMPLETED_S = 12 * 3600;
/** How often an instance deletes the completed jobs past `KEEP_COMPLETED_S`. */
const PRUNE_EVERY_MS = 3600_000;
/** The key of the leases' renewal among the writes tried again (job ids are other names). */
const LEASES = '\0leases';

export { QUEUE, SCHEMA, redactDatabaseUrl, type PostgresStoreOptions };
export { routeQueue } from './postgresPool.js';

/** The job store on PostgreSQL, in the integrator's own table. */
export class PostgresStore implements JobStore, QueueStore {
  readonly kind = 'postgres';
  readonly where: string;
  readonly takeOverEveryMs: number;
  readonly queue: PostgresQueue;
  readonly held: Holdings;
  /** Jobs refused with 503 whose insert may have been carried out all the same. */
  readonly refused: RefusedCopies;
  private readonly heartbeat: NodeJS.Timeout;
  private renewing: Promise<boolean> | undefined;
  released = false;
  private prunedAt = 0;
  /** Failing or working, and the watch over the statements in flight. */
  readonly condition: StoreCondition;
  /** Writes to try again: the ends of jobs (by id) and the leases. */
  private readonly retries: Retries;
  private readonly log: EventLog;
  /** How long a final result's write is waited for before its caller learns that it is not stored yet. */
  private readonly overdueMs: number;
  /** How long a lease seen past must stay so before the job is taken over (`TAKE_OVER`), in seconds. */
  private readonly lapseWaitS: number;

  private constructor(
    private readonly shared: Shared,
    options: PostgresStoreOptions,
    readonly leaseSeconds: number,
    /** The queue of this store's jobs. */
    readonly queueName: string,
  ) {
    this.queue = new PostgresQueue(this, options.pollEveryMs ?? 1000);
    this.where = redactDatabaseUrl(options.url);
    this.log = options.log;
    this.held = new Holdings(leaseSeconds * 1000, options.log);
    this.overdueMs = options.overdueMs ?? 3000;
    const retryEveryMs = options.retryEveryMs ?? 1000;
    this.lapseWaitS = (options.lapseWaitMs ?? Math.max((leaseSeconds * 1000) / 3, 3 * retryEveryMs)) / 1000;
    this.takeOverEveryMs = options.takeOverEveryMs ?? Math.min(10_000, (leaseSeconds * 1000) / 4);
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
    this.retries = new Retries(retryEveryMs);
    this.refused = new RefusedCopies(this.retries, (r, h) => this.removeRefused(r, h), options.log);
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

  run(
    text: string,
    values: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }> {
    return this.condition.watch.run(() => this.shared.pool.query(text, values));
  }

  /** Runs `work` (statements of the store), the condition noted either way; `fallback` when it failed. */
  async guarded<T>(what: string, fallback: T, work: () => Promise<T>): Promise<T> {
    const since = this.condition.mark();
    try {
      const value = await work();
      this.condition.ok(since);
      return value;
    } catch (error) {
      this.condition.problem(error, what);
      return fallback;
    }
  }

  /** This instance, as the holder of its jobs. */
  get holder(): string {
    return this.shared.holder;
  }

  /** The values ACCEPT and WRITE take: the queue, the job, its record, this holder, then the lease or fence. */
  private recordValues(record: JobRecord, last: number): unknown[] {
    return [this.queueName, record.id, JSON.stringify(record), this.shared.holder, last];
  }

  async accept(record: JobRecord): Promise<AcceptOutcome> {
    const since = this.condition.mark();
    // A statement is overdue: the database hangs, and this one would wait as long.
    if (this.condition.watch.overdue()) return 'unsaved';
    if (!(await this.refused.settled(record.id))) return 'unsaved';
    const sentAt = clock();
    try {
      const { rows } = await this.run(sql.ACCEPT, this.recordValues(record, this.leaseSeconds));
      this.condition.ok(since);
      if (rows[0]?.fresh !== true) return 'duplicate';
      this.held.hold(record.id, Number(rows[0].fence), sentAt);
      return 'accepted';
    } catch (error) {
      this.condition.problem(error, `cannot store job ${record.id}`);
      this.refused.add(record, this.shared.holder);
      return 'unsaved';
    }
  }

  /** Leaves the tombstone of a refused attempt (`RefusedCopies`, `ABANDON`): what became of its row. */
  private removeRefused(record: JobRecord, holder: string | null): Promise<RefusedFate> {
    const values = [this.queueName, record.id, record.acceptedAt, holder];
    return this.guarded(`cannot remove job ${record.id}, refused with 503`, 'failed' as const, async () => {
      const { rows } = await this.run(sql.ABANDON, values);
      return (rows[0]?.fate ?? 'none') as RefusedFate;
    });
  }

  /**
   * The claim of the right to send the final callback: the result stored under the job's fence (its lease
   * renewed with it). A write the database does not answer within `overdueMs` goes on, and its caller learns
   * `unsaved` (it may send only while `heldUntil` says the lease lasts).
   */
  async report(record: JobRecord): Promise<'stored' | 'lost' | 'unsaved'> {
    const held = this.held.get(record.id);
    if (held === undefined) return 'lost';
    const claiming = (held.claiming ??= this.write(record, `cannot store the result of job ${record.id}`));
    void claiming.finally(() => {
      if (held.claiming === claiming) held.claiming = undefined;
    });
    return settleWithin(claiming, this.overdueMs, 'unsaved');
  }

  heldUntil(id: string): number {
    if (this.released) return Number.NEGATIVE_INFINITY;
    return this.held.until(id);
  }

  onLost(listener: (id: string) => void): void {
    this.held.onLost(listener);
  }

  started(record: JobRecord): Promise<'stored' | 'lost' | 'unsaved'> {
    return this.write(record, `cannot store the start of job ${record.id}`);
  }

  /** Replaces a held job's record (fenced: nothing is written once another instance took it over). */
  private async write(record: JobRecord, what: string): Promise<'stored' | 'lost' | 'unsaved'> {
    const since = this.condition.mark();
    const held = this.held.get(record.id);
    if (held === undefined) return 'lost';
    const sentAt = clock();
    try {
      const values = [...this.recordValues(record, held.fence), this.leaseSeconds];
      const { rows } = await this.run(sql.WRITE, values);
      this.condition.ok(since);
      if (rows.length === 1) {
        this.held.extend(held, sentAt);
        return 'stored';
      }
      this.held.lost(record.id);
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
    // The end after the result's write, never before it: a late write must not bring the token back.
    await held.claiming;
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
      if (!mine) this.held.lost(id);
      else if (this.held.get(id) === held) this.held.delete(id);
      return true;
    } catch (error) {
      this.condition.problem(error, `cannot finish job ${id}`);
      return false;
    }
  }

  async takeOver(): Promise<JobRecord[]> {
    if (this.released) return [];
    const sentAt = clock();
    const values = [this.queueName, 50, this.shared.holder, this.leaseSeconds, this.lapseWaitS];
    const rows = await this.guarded('cannot look for jobs to take over', [], async () => {
      const taken = await this.run(sql.TAKE_OVER, values);
      // The leases past now, noted for a later round (a holder that is alive renews meanwhile).
      await this.run(sql.LAPSE_SEEN, [this.queueName, this.shared.holder]);
      return taken.rows;
    });
    const records: JobRecord[] = [];
    for (const row of rows) {
      const record = row.record as JobRecord;
      const takeovers = Number(row.fence);
      this.held.hold(record.id, takeovers, sentAt);
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
    await this.guarded('cannot delete the completed jobs', undefined, () =>
      this.run(sql.PRUNE, [this.queueName, KEEP_COMPLETED_S]),
    );
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
      const sentAt = clock();
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
          if (renewed.has(id)) this.held.extend(h, sentAt);
          // An ending job's own end is checked by its next try (it may have just been stored).
          else if (this.held.get(id) === h && !h.ending) this.held.lost(id);
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

  /** The ids of the jobs held here (for tests and /healthz). */
  heldJobs(): string[] {
    return this.held.entries().map(([id]) => id);
  }

  health(): StoreHealth {
    // Unsaved: the jobs whose end could not be stored yet (their final callback is delivered).
    const jobs = this.retries.keys().filter((key) => key !== LEASES && !RefusedCopies.owns(key));
    return this.condition.health(jobs.length);
  }

  /**
   * A graceful release gives back the leases of the jobs still held (they end now, for another instance to take
   * over at once); a crash keeps them, so that they are taken over once they run out. A database that does not
   * answer within `overdueMs` does not hold the stop: what is left then is as after a crash (the leases run out),
   * and the last store of the pool ends its connections, those waiting for an answer included.
   */
  async release(options: { crash?: boolean } = {}): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.heartbeat);
    this.retries.stop();
    const ends = clock() + this.overdueMs;
    const letGo = this.letGo(options.crash === true).then(() => true);
    if (!(await settleWithin(letGo, this.overdueMs, false))) {
      const message = `the job store ${this.where} did not answer at the stop: the leases held here run out instead`;
      this.log.warn('store.release_late', message, { database: this.where, jobs: this.held.size });
    }
    this.held.clear();
    if (--this.shared.users === 0) await endPool(this.shared, Math.max(0, ends - clock()));
  }

  /** What a release stores: the ends not stored yet, then the leases given back (none of it on a crash). */
  private async letGo(crash: boolean): Promise<void> {
    await this.renewing;
    if (crash) return;
    // A last try at the ends not stored yet; those left keep their lease until it runs out (another instance
    // then delivers their stored result again, which the platform refuses with 409): never given back at once.
    await this.retries.flush();
    const ending = this.held.entries().filter(([, h]) => h.ending);
    if (ending.length > 0) {
      this.log.error(
        'store.unfinished',
        `${ending.length} delivered job(s) could not be marked finished in ${this.where}`,
        { database: this.where, jobs: ending.map(([id]) => id).join(',') },
      );
    }
    const giveBack = this.held.entries().filter(([, h]) => !h.ending);
    if (giveBack.length > 0) {
      await this.run(sql.GIVE_BACK, [
        this.queueName,
        this.shared.holder,
        giveBack.map(([id]) => id),
        giveBack.map(([, h]) => h.fence),
      ]).catch((error: unknown) => this.condition.problem(error, 'cannot give back the leases'));
    }
  }
}
