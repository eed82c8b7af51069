/**
 * A job's final callback, sent only while this instance holds the job. On a shared store (PostgreSQL), before the
 * first attempt the result is stored as the job's claim (`JobStore.report`: on PostgreSQL a write under the job's fence, which renews its
 * lease): refused, the job is another instance's (its lease ran out while this one was paused or cut off from the
 * database), and nothing is sent for it. Not stored (a database that does not answer), it is sent only while the
 * lease surely lasts by this process's clock (`heldUntil`), and claimed again when it does not: as long as the
 * run's token lives (10 minutes), the job held here in `reporting` meanwhile, never ended without its final. An
 * attempt under way is cut short when the lease stops being sure; the claim is made again before the next one.
 *
 * What remains: a pause of this process between the last look at the lease and the request leaving it, longer than
 * the lease and the takeover's wait, lets the new holder send the stored result too (the same result: a taker
 * sends what the claim stored).
 */
import type { CallbackOutcome } from '../callback/client.js';
import { pause } from '../../net/retry.js';
import type { TaskResult } from '../../terraform/runtask/payload.js';
import type { EventLog } from './log.js';
import type { Job } from './job.js';
import { LEASE_UNSURE, reportResult, type ReportDeps } from './report.js';
import { clock, type JobStore } from './store.js';

/** How a final delivery ended: as the callback did, or `lost` (another instance holds the job: nothing sent). */
export type Delivery = CallbackOutcome | { kind: 'lost' };

/** What a delivery needs. */
export interface DeliveryContext {
  store: JobStore;
  log: EventLog;
  /** The job's callbacks (its own signal is replaced by one that also follows the lease). */
  deps: ReportDeps;
  /** How often a claim the store could not answer is made again. */
  retryMs: number;
}

/** How long the platform's access token of a run lives (run-tasks.md): past it, no callback of the job lands. */
export const TOKEN_LIFETIME_MS = 10 * 60_000;

/**
 * Claims the right to send until it is held (`held`), the job is another's (`lost`), the delivery is stopped
 * (`aborted`) or the run's token expired (`expired`, after `left` ms): a store that does not answer is asked
 * again every `retryMs` meanwhile, the job still held here in `reporting` (never ended without its final).
 */
async function claimToSend(
  { store, deps, retryMs }: DeliveryContext,
  record: ReturnType<Job['record']>,
  left: () => number,
): Promise<'held' | 'lost' | 'aborted' | 'expired'> {
  for (;;) {
    // A store that does not answer must not hold a stop back: the claim is left as soon as the delivery stops.
    const outcome = await unlessAborted(store.report(record), deps.signal);
    if (outcome === 'aborted' || outcome === 'lost') return outcome;
    // Stored, or not stored but still surely held (the write goes on): either way no other instance has it.
    if (store.heldUntil(record.id) > clock()) return 'held';
    if (left() <= 0) return 'expired';
    const waited = await pause(Math.min(retryMs, left()), deps.signal, 'the delivery stopped').then(
      () => true,
      () => false,
    );
    if (!waited) return 'aborted';
  }
}

/** What `work` settles to (`unsaved` when it fails), or `aborted` as soon as `signal` is (`work` goes on). */
async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | 'unsaved' | 'aborted'> {
  if (signal.aborted) return 'aborted';
  let stop: () => void = () => undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    stop = () => resolve('aborted');
    signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([work.catch(() => 'unsaved' as const), aborted]);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** The longest delay a Node.js timer takes (a signed 32-bit count of milliseconds). */
const LONGEST_TIMER_MS = 2_147_483_647;

/**
 * A signal that follows `outer` and is aborted (`LEASE_UNSURE`) once the job is no longer surely held here: its
 * lease past by this process's clock, or `lost` (another instance took it over).
 */
export function leaseWatch(
  store: JobStore,
  id: string,
  outer: AbortSignal,
  lost?: AbortSignal,
): { signal: AbortSignal; lapsed: () => boolean; stop: () => void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const follow = (): void => controller.abort(outer.reason);
  const unsure = (): void => controller.abort(LEASE_UNSURE);
  outer.addEventListener('abort', follow, { once: true });
  lost?.addEventListener('abort', unsure, { once: true });
  if (outer.aborted) follow();
  else if (lost?.aborted === true) unsure();
  const arm = (): void => {
    const ms = store.heldUntil(id) - clock();
    if (ms <= 0) controller.abort(LEASE_UNSURE);
    else if (ms !== Number.POSITIVE_INFINITY) {
      timer = setTimeout(arm, Math.min(ms, LONGEST_TIMER_MS));
      timer.unref();
    }
  };
  arm();
  return {
    signal: controller.signal,
    lapsed: () => controller.signal.reason === LEASE_UNSURE,
    stop() {
      clearTimeout(timer);
      outer.removeEventListener('abort', follow);
      lost?.removeEventListener('abort', unsure);
    },
  };
}

/**
 * Sends a job's final result within `deadlineMs`, only while the job is held here. `stored`: the result's write,
 * when the delivery did not wait for it (the job's end must come after it). A store that can never lose the job
 * (the journal, whose lock keeps other processes out) stores the result for the next start, and the delivery
 * does not wait for it: a disk that hangs must not hold final callbacks back.
 */
export async function deliverFinal(
  context: DeliveryContext,
  job: Job,
  result: TaskResult,
  deadlineMs: number,
): Promise<{ outcome: Delivery; stored?: Promise<unknown> }> {
  const { store, log } = context;
  const record = job.record('reporting', result);
  if (store.heldUntil(job.id) !== Number.POSITIVE_INFINITY) {
    const outcome = await deliverClaimed(context, job, result, deadlineMs);
    if (outcome.kind === 'lost') {
      log.warn(
        'job.lost',
        `job ${job.id} is held by another instance now (this one was paused or cut off from the database for longer than its lease): its ${result.status} result is not sent`,
        { ...job.logFields(), status: result.status },
      );
    }
    return { outcome };
  }
  const stored = store.report(record).catch((error: unknown) => {
    log.error('job.error', `could not store the result of job ${job.id}: ${String(error)}`, job.logFields());
  });
  const outcome = await reportResult(context.deps, result, deadlineMs, 'final');
  return { outcome, stored };
}

/**
 * Claims the job, then sends its final result, claiming it again whenever its lease stops being sure. The
 * callback's deadline counts only the time it is sent (from its claim): a store that does not answer holds the
 * job in `reporting` as long as the run's token lives, and the callback then still has its whole deadline.
 */
async function deliverClaimed(
  context: DeliveryContext,
  job: Job,
  result: TaskResult,
  deadlineMs: number,
): Promise<Delivery> {
  const { store, deps, log } = context;
  const tokenEnds = job.acceptedAt.getTime() + TOKEN_LIFETIME_MS;
  const record = job.record('reporting', result);
  let left = deadlineMs;
  for (;;) {
    const claim = await claimToSend(context, record, () => tokenEnds - Date.now());
    if (claim === 'lost') return { kind: 'lost' };
    if (claim === 'aborted') return { kind: 'aborted', attempts: 0 };
    if (claim === 'expired') {
      const reason = `the run's access token expired (it lives 10 minutes) before the job store confirmed that this instance still holds the job`;
      return { kind: 'gave-up', reason, attempts: 0 };
    }
    const watch = leaseWatch(store, job.id, deps.signal, job.lost.signal);
    const began = clock();
    const outcome = await reportResult({ ...deps, signal: watch.signal }, result, left, 'final');
    watch.stop();
    left -= clock() - began;
    if (outcome.kind !== 'aborted' || !watch.lapsed()) return outcome;
    // Taken over by another instance: nothing more to claim (deliverFinal says so).
    if (job.lost.signal.aborted) return { kind: 'lost' };
    log.warn(
      'job.lease_unsure',
      `paused the final callback of job ${job.id}: this instance cannot be sure it still holds the job (a pause, or a database that does not answer); claiming it again`,
      { job: job.id, run_id: deps.request.run_id },
    );
    if (left <= 0) {
      const within = deadlineMs >= 1000 ? `${Math.round(deadlineMs / 1000)}s` : `${deadlineMs} ms`;
      const reason = `not delivered within its deadline (${within})`;
      return { kind: 'gave-up', reason, attempts: outcome.attempts };
    }
  }
}
