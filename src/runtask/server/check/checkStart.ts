/**
 * When a job's check starts, and what a new holder does with a job it recovers (after a restart with the
 * journal, or a takeover on PostgreSQL). The start is stored before the check starts (`checkStartedAt`), so
 * that a recovered job that never started is run by its new holder, and only one that did start is reported
 * failed: a handler may have side effects, and is never run twice.
 */
import { pause } from '../../../net/retry.js';
import type { TaskResult } from '../../../terraform/runtask/payload.js';
import { RESTARTED_MESSAGE, TAKEN_OVER_MESSAGE } from '../job.js';
import type { JobRecord, JobStore } from '../store.js';

/** The final message of a recovered job that never started, on a route that is no longer served. */
export const NOT_SERVED_MESSAGE =
  "The check did not run: the integrator restarted without this run task's route. Start a new run to check again.";

/**
 * Stores that the check starts now, trying again every `retryMs` while the store cannot be written (the check
 * waits: started without a stored start, a check could run a second time after a takeover). `lost`: another
 * instance holds the job now, and runs or reports it; `aborted`: the job was stopped meanwhile.
 */
export async function storeStart(
  store: JobStore,
  record: JobRecord,
  signal: AbortSignal,
  retryMs: number,
): Promise<'stored' | 'lost' | 'aborted'> {
  for (;;) {
    if (signal.aborted) return 'aborted';
    const outcome = await store.started(record).catch(() => 'unsaved' as const);
    if (outcome !== 'unsaved') return outcome;
    const waited = await pause(retryMs, signal, 'the job stopped').then(
      () => true,
      () => false,
    );
    if (!waited) return 'aborted';
  }
}

/**
 * What to do with a recovered job: deliver its stored result, run its check (it never started), or report it
 * failed with the message that says why (the integrator restarted; or, on a shared store, the instance that ran
 * it stopped renewing its lease).
 */
export function recoveredVerdict(
  record: JobRecord,
  kind: JobStore['kind'],
  /** False on a route no longer served: nothing runs there. */
  runnable: boolean,
): { run: true } | { run: false; result: TaskResult } {
  if (record.phase === 'reporting' && record.result) return { run: false, result: record.result };
  if (record.checkStartedAt === null) {
    return runnable
      ? { run: true }
      : { run: false, result: { status: 'failed', message: NOT_SERVED_MESSAGE } };
  }
  const message = kind === 'postgres' ? TAKEN_OVER_MESSAGE : RESTARTED_MESSAGE;
  return { run: false, result: { status: 'failed', message } };
}
