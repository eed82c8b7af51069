/**
 * One accepted job: its two abort switches (the work: queue, plan, handler; the delivery: callbacks), its phase,
 * its record in the job store, and its progress reports — a first `running` callback at once, then one per `--heartbeat`, never two at a time,
 * so that the platform's 10-minute progress window stays open while the job waits or runs.
 */
import type { CheckInput } from './check/check.js';
import type { EventLog } from './log.js';
import type { PlatformOrigins } from '../callback/origins.js';
import { reportResult, type ReportDeps } from './report.js';
import type { CallbackBackoff } from '../callback/client.js';
import type { Slots } from './slots.js';
import type { JobRecord } from './store.js';
import { readRunTaskRequest, type TaskResult } from '../../terraform/runtask/payload.js';

/**
 * Why a job's work was aborted: shutdown, a hard stop, the platform refusing its token, or another instance
 * holding the job now (its lease was lost before the check started).
 */
export type StopReason = 'stopped' | 'destroyed' | 'refused' | 'lost';

/** The messages a job's final callback carries when its check was cut short. */
export const STOPPED_MESSAGE =
  'The check did not finish: the integrator stopped (integrator stopped). Start a new run to check again.';
export const RESTARTED_MESSAGE =
  'The check did not finish: the integrator restarted while it was running. Start a new run to check again.';
/** A started check taken over from another instance (a shared store): its holder stopped renewing its lease. */
export const TAKEN_OVER_MESSAGE =
  'The check did not finish: the integrator instance running it stopped, or lost its database for longer than its lease. Start a new run to check again.';

/** What progress reports need from the integrator's settings. */
export interface ProgressSettings {
  heartbeatMs: number;
  callbackTimeoutMs: number;
  maxJobs: number;
  allowed: PlatformOrigins;
  retry?: CallbackBackoff | undefined;
}

/** A signal that follows `outer` and is aborted once the job is no longer surely held here (delivery.ts). */
export type LeaseFollower = (outer: AbortSignal) => { signal: AbortSignal; stop: () => void };

/** Statuses that say nothing this job sends can land (unknown token or result, or already final). */
const HOPELESS = [401, 403, 404, 409];

/** One job of the integrator. */
export class Job {
  readonly work = new AbortController();
  readonly delivery = new AbortController();
  /** Aborted when another instance took the job over (`JobStore.onLost`): its callbacks in flight stop. */
  readonly lost = new AbortController();
  phase: 'queued' | 'running' | 'reporting' = 'queued';
  startedAt: number | undefined;
  done: Promise<void> = Promise.resolve();
  private pending: Promise<void> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    readonly input: CheckInput,
    readonly acceptedAt: Date,
  ) {}

  /** The job a stored record stands for (taken from the queue, or over from another instance). */
  static fromRecord(record: JobRecord): Job {
    const { request, raw } = readRunTaskRequest(record.request);
    const job = new Job({ id: record.id, request, raw }, new Date(record.acceptedAt));
    if (typeof record.checkStartedAt === 'string') job.startedAt = Date.parse(record.checkStartedAt);
    return job;
  }

  get id(): string {
    return this.input.id;
  }

  /** The job's record in the job store, in `phase` (with its final result once it has one). */
  record(phase: JobRecord['phase'], result?: TaskResult): JobRecord {
    return {
      version: 1,
      id: this.id,
      acceptedAt: this.acceptedAt.toISOString(),
      phase,
      request: this.input.raw,
      checkStartedAt: this.startedAt === undefined ? null : new Date(this.startedAt).toISOString(),
      ...(result === undefined ? {} : { result }),
    };
  }

  /** The fields that name this job in the log. */
  logFields(): Record<string, string | undefined> {
    return { job: this.id, run_id: this.input.request.run_id };
  }

  /** What a callback of this job needs. */
  reportDeps(settings: ProgressSettings, log: EventLog): ReportDeps {
    return {
      id: this.id,
      request: this.input.request,
      allowed: settings.allowed,
      log,
      signal: this.delivery.signal,
      retry: settings.retry,
    };
  }

  /**
   * Sends the first `running` callback now and one per heartbeat until `stopProgress`; a heartbeat is left out
   * while `held` says the job may be another instance's, and one in flight is cut short once it may be (`follow`:
   * a signal that follows the delivery's and the job's lease).
   */
  startProgress(
    settings: ProgressSettings,
    slots: Slots,
    log: EventLog,
    held: () => boolean,
    follow: LeaseFollower,
  ): void {
    const send = (): void => {
      if (this.pending !== undefined || this.phase === 'reporting' || !held()) return;
      const watch = follow(this.delivery.signal);
      const deadline = Math.min(settings.heartbeatMs, settings.callbackTimeoutMs);
      const message =
        this.heartbeat === undefined && slots.available
          ? 'Running the check.'
          : this.progressMessage(slots, settings.maxJobs);
      this.pending = reportResult(
        { ...this.reportDeps(settings, log), signal: watch.signal },
        { status: 'running', message },
        deadline,
        'progress',
      )
        .then((outcome) => {
          if (outcome.kind === 'refused' && HOPELESS.includes(outcome.status)) {
            this.work.abort('refused' satisfies StopReason);
          }
        })
        .finally(() => {
          watch.stop();
          this.pending = undefined;
        });
    };
    send();
    this.heartbeat = setInterval(send, settings.heartbeatMs);
  }

  /** Stops the heartbeats and waits for the one in flight, so that the final status comes last. */
  async stopProgress(): Promise<void> {
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    await this.pending;
  }

  private progressMessage(slots: Slots, maxJobs: number): string {
    if (this.phase === 'queued') {
      return `Queued: waiting for a free check slot (${slots.waiting} waiting, ${maxJobs} at once).`;
    }
    const seconds = Math.round((Date.now() - (this.startedAt ?? Date.now())) / 1000);
    return `Running the check (${seconds}s so far).`;
  }
}
