/**
 * The accepted jobs of one integrator: each gets a first `running` callback, waits for a slot (`--max-jobs`),
 * runs its check, keeps the platform's 10-minute progress window open with `running` heartbeats, and ends with
 * one final `passed`/`failed`. The job store (store.ts: the journal, or PostgreSQL) holds every job until its
 * final callback is delivered, so that a restart (or another instance, taking it over) can deliver it, or report
 * `failed` for a check that was cut short (checks are not re-run: a handler may have side effects, and the run's
 * token lives only 10 minutes).
 */
import { runCheck, type CheckInput, type CheckSettings } from './check/check.js';
import type { InterpretedResult } from './handler/handlerResult.js';
import { clock, type JobQueue, type JobStore, type Role, type StoreHealth } from './store.js';
import type { EventLog } from './log.js';
import type { TaskResult } from '../../terraform/runtask/payload.js';
import { pause } from '../../net/retry.js';
import { Slots } from './slots.js';
import { shapeFinalResult } from './report.js';
import { deliverFinal, leaseWatch } from './delivery.js';
import { Job, RESTARTED_MESSAGE, STOPPED_MESSAGE, TAKEN_OVER_MESSAGE, type StopReason } from './job.js';
import { recoveredVerdict, storeStart } from './check/checkStart.js';
import { QUEUED_MESSAGE, QueueProgress } from './queueProgress.js';

export { QUEUED_MESSAGE, RESTARTED_MESSAGE, STOPPED_MESSAGE, TAKEN_OVER_MESSAGE };

/** Settings of the job manager. */
export interface JobSettings extends CheckSettings {
  heartbeatMs: number;
  maxJobs: number;
  /** How long a final callback is retried. */
  callbackTimeoutMs: number;
  /** How long the "integrator stopped" callbacks are retried at shutdown (default 10 s). */
  shutdownCallbackTimeoutMs?: number;
  /** What this instance does (default `all`); `front` and `worker` need a store with a queue. */
  role?: Role;
  /** How often a check's start is tried again while the store cannot record it (default 1 s). */
  storeRetryMs?: number;
  /** A route no longer served (its jobs left by a previous process): recovered jobs are reported, not run. */
  retired?: boolean;
}

/** The jobs of one integrator process. */
export class JobManager {
  private readonly jobs = new Map<string, Job>();
  /** Jobs whose record is being stored, by id (true once stored): a copy arriving meanwhile waits. */
  private readonly accepting = new Map<string, Promise<boolean>>();
  private readonly slots: Slots;
  private stopping = false;
  private takeOverTimer: NodeJS.Timeout | undefined;
  private takingOver: Promise<number> | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private pulling: Promise<void> | undefined;
  private pullAgain = false;
  /** The progress callbacks of the shared queue's jobs (queueProgress.ts). */
  private queueProgress: QueueProgress | undefined;
  private readonly role: Role;

  constructor(
    private readonly settings: JobSettings,
    private readonly store: JobStore,
    private readonly log: EventLog,
  ) {
    this.slots = new Slots(settings.maxJobs);
    this.role = settings.role ?? 'all';
    if (this.role !== 'all' && store.queue === undefined) {
      throw new Error(`--role ${this.role} needs a job store with a queue (PostgreSQL)`);
    }
    // A job another instance took over: its check stops here, and nothing more is sent for it from here.
    store.onLost?.((id) => {
      const job = this.jobs.get(id);
      job?.lost.abort();
      if (job !== undefined && job.phase !== 'reporting') job.work.abort('lost' satisfies StopReason);
    });
  }

  /** What this instance does. */
  get serving(): Role {
    return this.role;
  }

  /** True while a job with this id is being handled (the platform re-sent a request). */
  has(id: string): boolean {
    return this.jobs.has(id);
  }

  /** Counts by phase, for /healthz and the log. */
  counts(): { queued: number; running: number; reporting: number } {
    const counts = { queued: 0, running: 0, reporting: 0 };
    for (const job of this.jobs.values()) counts[job.phase]++;
    return counts;
  }

  /**
   * Stores the job (before the platform gets its 200) and starts it. `duplicate`, starting nothing: a job with
   * this id is already running or being accepted (the platform sent the request again meanwhile: without this,
   * copies arriving together would each pass `has` during the store's write and each run), here or, with a
   * shared store, on another instance. `unsaved`, starting nothing: its record cannot be stored (the state
   * dir is gone for good, or full; the database is unreachable), so the request must be refused before its 200
   * — accepted, it could be lost by a restart without the platform knowing.
   */
  async accept(input: CheckInput): Promise<'accepted' | 'duplicate' | 'unsaved'> {
    const pending = this.accepting.get(input.id);
    if (pending !== undefined) return (await pending) ? 'duplicate' : 'unsaved';
    if (this.jobs.has(input.id)) return 'duplicate';
    const job = new Job(input, new Date());
    // A front keeps nothing: the job waits in the shared queue for a worker.
    const queue = this.role === 'front' ? this.store.queue : undefined;
    const stored =
      queue !== undefined ? queue.enqueue(job.record('queued')) : this.store.accept(job.record('accepted'));
    const storing = stored.catch((error: unknown) => {
      this.log.error('job.error', `could not store job ${job.id}: ${String(error)}`, job.logFields());
      return 'unsaved' as const;
    });
    // A copy arriving while this one is answered learns the outcome from here.
    this.accepting.set(
      job.id,
      storing.then((outcome) => outcome !== 'unsaved'),
    );
    const outcome = await storing;
    this.accepting.delete(job.id);
    if (outcome === 'unsaved' || outcome === 'duplicate') return outcome;
    if (queue !== undefined) return 'accepted';
    this.jobs.set(job.id, job);
    // The job starts once the platform has its 200: its first callback and its set-up (folder, plan,
    // handler) are not on the acknowledgement's path, which under load decides how fast requests are answered.
    this.start(job, new Promise<void>((resolve) => setImmediate(resolve)));
    return 'accepted';
  }

  /** Runs a job held here once `ready` resolves; when it ends, a worker looks for more queued jobs. */
  private start(job: Job, ready: Promise<void>): void {
    job.done = ready
      .then(() => this.run(job))
      .catch((error: unknown) => this.crashed(job, error))
      .finally(() => {
        this.jobs.delete(job.id);
        this.kick();
      });
  }

  /** The kind of job store (the journal in the state dir, or PostgreSQL), for messages. */
  get storeKind(): JobStore['kind'] {
    return this.store.kind;
  }

  /** What the job store can do now, for /healthz. */
  storeHealth(): StoreHealth {
    return this.store.health();
  }

  /**
   * Finishes what a previous process left in the store (or, with a shared store, an instance that stopped
   * renewing its leases): delivers stored results, fails cut-short checks. Then asks again every
   * `takeOverEveryMs` of the store, when it has one, until the manager stops.
   */
  async recover(): Promise<number> {
    const queue = this.store.queue;
    if (queue !== undefined && this.queueProgress === undefined && !this.stopping) {
      // Any role keeps the queued jobs' progress windows open (one instance per job and heartbeat sends).
      this.queueProgress = new QueueProgress(queue, this.settings, this.log);
    }
    // A front runs nothing: the workers take over what instances that died left, and pull the queue.
    if (this.role === 'front') return 0;
    if (queue !== undefined && this.pollTimer === undefined && !this.stopping) {
      this.pollTimer = setInterval(() => this.kick(), queue.pollEveryMs);
      this.pollTimer.unref();
    }
    const count = await this.takeOver();
    this.kick();
    const every = this.store.takeOverEveryMs;
    if (every !== undefined && this.takeOverTimer === undefined && !this.stopping) {
      this.takeOverTimer = setInterval(() => {
        if (this.takingOver !== undefined || this.stopping) return;
        this.takingOver = this.takeOver()
          .catch((error: unknown) => {
            this.log.error('job.error', `could not take over jobs: ${String(error)}`, {});
            return 0;
          })
          .finally(() => {
            this.takingOver = undefined;
          });
      }, every);
      this.takeOverTimer.unref();
    }
    return count;
  }

  /** Handlers that may start now: the free slots less the jobs already waiting for one. */
  private freeSlots(): number {
    let busy = 0;
    for (const job of this.jobs.values()) if (job.phase !== 'reporting') busy++;
    return this.settings.maxJobs - busy;
  }

  /** A worker (or `all`) with free slots takes queued jobs; asked again when a job ends. */
  private kick(): void {
    const queue = this.store.queue;
    if (queue === undefined || this.role === 'front' || this.stopping) return;
    if (this.pulling !== undefined) {
      this.pullAgain = true;
      return;
    }
    this.pulling = this.pull(queue)
      .catch((error: unknown) => {
        this.log.error('job.error', `could not take queued jobs: ${String(error)}`, {});
      })
      .finally(() => {
        this.pulling = undefined;
        if (this.pullAgain) {
          this.pullAgain = false;
          this.kick();
        }
      });
  }

  private async pull(queue: JobQueue): Promise<void> {
    const free = this.freeSlots();
    if (free <= 0) return;
    const records = await queue.claim(free);
    // Claimed as a stop began, a job still runs: the stop's grace applies to it like to the others.
    for (const record of records) {
      const job = Job.fromRecord(record);
      const { request } = job.input;
      this.log.info('job.claimed', `took job ${record.id} from the queue`, {
        job: record.id,
        run_id: request.run_id,
        waited_ms: Date.now() - job.acceptedAt.getTime(),
      });
      this.jobs.set(job.id, job);
      this.start(job, Promise.resolve());
    }
  }

  private async takeOver(): Promise<number> {
    const records = await this.store.takeOver();
    for (const record of records) {
      if (this.jobs.has(record.id)) continue;
      const job = Job.fromRecord(record);
      const { request } = job.input;
      const verdict = recoveredVerdict(record, this.store.kind, this.settings.retired !== true);
      const fields = { job: record.id, run_id: request.run_id, phase: record.phase };
      this.jobs.set(job.id, job);
      if (verdict.run) {
        // Its check never started: it runs here (and only here: the store hands each job to one holder).
        this.log.info('job.recovered', `recovered job ${record.id}: its check never started, running it`, {
          ...fields,
          status: 'run',
        });
        this.start(job, Promise.resolve());
        continue;
      }
      const result = shapeFinalResult(verdict.result, request, this.log, record.id);
      this.log.info('job.recovered', `recovered job ${record.id} from the job store (${record.phase})`, {
        ...fields,
        status: result.status,
      });
      job.done = this.finish(job, result, this.settings.callbackTimeoutMs)
        .catch((error: unknown) => this.crashed(job, error))
        .finally(() => this.jobs.delete(job.id));
    }
    return records.length;
  }

  /** Resolves when no job is left. */
  async idle(): Promise<void> {
    while (this.jobs.size > 0) await Promise.all([...this.jobs.values()].map((job) => job.done));
  }

  /**
   * Shutdown: waits up to `graceMs` for the jobs, then reports the unfinished ones as failed. A final unsent after
   * that (its claim unconfirmed: a database that hangs) stays in the store for the job's next holder.
   */
  async drain(graceMs: number): Promise<void> {
    this.stop();
    await this.idleWithin(graceMs, 'the grace period ended');
    for (const job of this.jobs.values()) {
      // A final result already waiting for delivery stays in the journal for the next start.
      if (job.phase === 'reporting') job.delivery.abort('stopped');
      else job.work.abort('stopped' satisfies StopReason);
    }
    // Their deadline, after the 5 s a handler has between SIGTERM and SIGKILL (handler.ts).
    const stopCallbacksMs = (this.settings.shutdownCallbackTimeoutMs ?? 10_000) + 5_000;
    await this.idleWithin(stopCallbacksMs, 'the stop callbacks ran out');
    for (const job of this.jobs.values()) job.delivery.abort('stopped');
    await this.idle();
  }

  /** Resolves when no job is left, or after `ms`. */
  private async idleWithin(ms: number, why: string): Promise<void> {
    const timer = new AbortController();
    await Promise.race([this.idle(), pause(ms, timer.signal, why).catch(() => undefined)]);
    timer.abort();
  }

  /** A hard stop: handlers killed, nothing reported, the journal left as it is (as after a crash). */
  async destroy(): Promise<void> {
    this.stop();
    for (const job of this.jobs.values()) {
      job.work.abort('destroyed' satisfies StopReason);
      job.delivery.abort('destroyed');
    }
    await this.idle();
  }

  private stop(): void {
    this.stopping = true;
    clearInterval(this.takeOverTimer);
    clearInterval(this.pollTimer);
    this.queueProgress?.stop();
  }

  private async run(job: Job): Promise<void> {
    // No `running` callback while the job may be another instance's (a pause, a database that does not answer).
    job.startProgress(
      this.settings,
      this.slots,
      this.log,
      () => this.store.heldUntil(job.id) > clock(),
      (outer) => leaseWatch(this.store, job.id, outer, job.lost.signal),
    );
    let interpreted: InterpretedResult | undefined;
    let release: (() => void) | undefined;
    try {
      release = await this.slots.acquire(job.work.signal);
      job.phase = 'running';
      job.startedAt = Date.now();
      const start = job.record('accepted');
      const stored = await storeStart(this.store, start, job.work.signal, this.settings.storeRetryMs ?? 1000);
      if (stored === 'lost') job.work.abort('lost' satisfies StopReason);
      if (stored === 'stored')
        interpreted = await runCheck(this.settings, job.input, this.log, job.work.signal);
    } catch (error) {
      if (!job.work.signal.aborted) {
        this.log.error(
          'job.error',
          `the check failed inside the integrator: ${String(error)}`,
          job.logFields(),
        );
        interpreted = {
          result: { status: 'failed', message: 'The integrator failed to run the check; see its log.' },
          source: 'spawn-error',
          limits: [],
        };
      }
    } finally {
      release?.();
    }
    const reason = job.work.signal.reason as StopReason | undefined;
    if (reason === 'destroyed' || reason === 'refused' || reason === 'lost') {
      await job.stopProgress();
      if (reason === 'refused') await this.store.finish(job.id);
      return;
    }
    const cutShort = interpreted === undefined || interpreted.source === 'aborted';
    const result = shapeFinalResult(
      cutShort ? { status: 'failed', message: STOPPED_MESSAGE } : interpreted!.result,
      job.input.request,
      this.log,
      job.id,
    );
    const deadline = cutShort
      ? (this.settings.shutdownCallbackTimeoutMs ?? 10_000)
      : this.settings.callbackTimeoutMs;
    await this.finish(job, result, deadline);
  }

  /**
   * Sends the final result, claimed first (delivery.ts): stored for another holder to deliver should this one
   * die, and sent only while this instance holds the job; then stores the job's end.
   */
  private async finish(job: Job, result: TaskResult, deadlineMs: number): Promise<void> {
    job.phase = 'reporting';
    await job.stopProgress();
    const deps = job.reportDeps(this.settings, this.log);
    const context = { store: this.store, log: this.log, deps, retryMs: this.settings.storeRetryMs ?? 1000 };
    const { outcome, stored } = await deliverFinal(context, job, result, deadlineMs);
    if (outcome.kind === 'lost') return;
    this.log.info('job.finished', `job ${job.id} finished: ${result.status}`, {
      ...job.logFields(),
      status: result.status,
      delivered: outcome.kind === 'sent',
    });
    // Undelivered at shutdown: the store keeps it, and the next start (or another instance) sends it.
    if (outcome.kind === 'aborted' || (outcome.kind === 'gave-up' && this.stopping)) return;
    // The end after the result, never before it: a late result write must not bring the token back.
    await stored;
    await this.store.finish(job.id);
  }

  /**
   * A job that threw where nothing should: logged, and its record kept for the next start (which reports it).
   * Never rethrown: an unhandled rejection would end the process, and with it every other job's callbacks.
   */
  private crashed(job: Job, error: unknown): void {
    this.log.error(
      'job.error',
      `job ${job.id} failed inside the integrator: ${String(error)}`,
      job.logFields(),
    );
  }
}
