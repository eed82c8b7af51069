/**
 * The progress callbacks of the jobs waiting in a shared queue (store.ts, `JobQueue`) for a worker: a queued job
 * has no holder, so every instance, whatever its role, sweeps the queue for jobs whose heartbeat is due and sends
 * their `running` callback, the queue handing each job to one instance per heartbeat. This keeps the platform's
 * 10-minute progress window open while a job waits.
 */
import type { JobQueue } from './store.js';
import type { EventLog } from './log.js';
import type { ProgressSettings } from './job.js';
import { reportResult } from './report.js';
import { readRunTaskRequest } from '../../terraform/runtask/payload.js';

/** The `running` message of a job waiting in the shared queue for a worker. */
export const QUEUED_MESSAGE = 'Queued: waiting for a free worker.';

/** The sweeps of one instance over a shared queue. */
export class QueueProgress {
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;
  /** Aborts the queued jobs' `running` callbacks at a stop. */
  private readonly sweeps = new AbortController();

  /** Starts sweeping, a few times per heartbeat (between 250 ms and 10 s apart). */
  constructor(
    private readonly queue: JobQueue,
    private readonly settings: Omit<ProgressSettings, 'maxJobs'>,
    private readonly log: EventLog,
  ) {
    this.timer = setInterval(() => this.sweep(), Math.max(250, Math.min(10_000, settings.heartbeatMs / 4)));
    this.timer.unref();
  }

  /** Stops sweeping, and aborts the callbacks in flight. */
  stop(): void {
    clearInterval(this.timer);
    this.sweeps.abort('stopped');
  }

  /** Sends the `running` callback of each queued job whose heartbeat is due (when this instance wins it). */
  private sweep(): void {
    if (this.sweeping !== undefined || this.sweeps.signal.aborted) return;
    const { heartbeatMs, callbackTimeoutMs, allowed, retry } = this.settings;
    this.sweeping = this.queue
      .dueForProgress(heartbeatMs)
      .then(async (records) => {
        await Promise.all(
          records.map((record) => {
            const { request } = readRunTaskRequest(record.request);
            return reportResult(
              { id: record.id, request, allowed, log: this.log, signal: this.sweeps.signal, retry },
              { status: 'running', message: QUEUED_MESSAGE },
              Math.min(heartbeatMs, callbackTimeoutMs),
              'progress',
            );
          }),
        );
      })
      .catch((error: unknown) => {
        this.log.error('job.error', `could not report the queued jobs: ${String(error)}`, {});
      })
      .finally(() => {
        this.sweeping = undefined;
      });
  }
}
