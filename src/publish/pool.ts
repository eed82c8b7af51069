/**
 * Bounded concurrency: run tasks with at most `limit` in flight — a fixed number, or a `Width` that changes while
 * the tasks run (`--concurrency auto`, adaptive.ts). After the first failure no new task starts; the ones in
 * flight are allowed to finish (their work is not wasted on a re-run) and the first error is thrown — an
 * interruption wins over anything it caused.
 */
import { InterruptedError, VerificationError } from '../errors.js';

/** A number of tasks at once that may change while they run. */
export interface Width {
  /** Tasks allowed in flight now. */
  readonly current: number;
  /** Calls `listener` when `current` may have changed; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Told how many tasks run and wait after each start and end (the adaptive policy samples it). */
  track?(running: number, waiting: number): void;
}

/**
 * Runs every task, at most `limit` at once; once nothing is in flight, rejects with the first interruption, else
 * the first verification failure, else the first error.
 */
export async function runUploadTasks(tasks: (() => Promise<void>)[], limit: number | Width): Promise<void> {
  const width: Width =
    typeof limit === 'number' ? { current: limit, onChange: () => () => undefined } : limit;
  const queue = [...tasks];
  const errors: unknown[] = [];
  let running = 0;
  await new Promise<void>((resolve) => {
    const pump = (): void => {
      while (errors.length === 0 && running < Math.max(1, width.current) && queue.length > 0) {
        const task = queue.shift()!;
        running++;
        width.track?.(running, queue.length);
        // A task that throws synchronously is a failure like any other.
        Promise.resolve()
          .then(task)
          .catch((error: unknown) => {
            errors.push(error);
          })
          .finally(() => {
            running--;
            width.track?.(running, errors.length === 0 ? queue.length : 0);
            if (running === 0 && (queue.length === 0 || errors.length > 0)) {
              unsubscribe();
              resolve();
            } else pump();
          });
      }
    };
    const unsubscribe = width.onChange(pump);
    if (queue.length === 0) {
      unsubscribe();
      resolve();
    } else pump();
  });
  // An interruption first; then bytes that do not verify, which the caller undoes the run for.
  if (errors.length > 0) {
    throw (
      errors.find((e) => e instanceof InterruptedError) ??
      errors.find((e) => e instanceof VerificationError) ??
      errors[0]
    );
  }
}

/** Jobs started ahead of the work that needs them, and the switch that stops the ones not started yet. */
export interface AheadLane<T> {
  /** One promise per job, in order; a failure is delivered only to whoever awaits it. */
  results: Promise<T>[];
  /** Jobs not started yet fail with `reason` instead of running (call it when the work is abandoned). */
  stop(reason: unknown): void;
}

/**
 * Starts every job now, at most `limit` at once, in order. Used to create platforms ahead of their uploads:
 * the creates are API calls, not transfers, so they overlap the transfers instead of waiting between them.
 * After a job fails, the jobs not started yet fail with its error without running: nothing new is written.
 */
export function startAhead<T>(jobs: (() => Promise<T>)[], limit: number): AheadLane<T> {
  const settlers: { resolve: (value: T) => void; reject: (error: unknown) => void }[] = [];
  const results = jobs.map(() => new Promise<T>((resolve, reject) => settlers.push({ resolve, reject })));
  // Awaited later (or never, when the work stopped first): never an unhandled rejection.
  for (const result of results) result.catch(() => undefined);
  let next = 0;
  let running = 0;
  let stopped: { reason: unknown } | undefined;
  const pump = (): void => {
    while (running < Math.max(1, limit) && next < jobs.length) {
      const i = next++;
      const settler = settlers[i]!;
      if (stopped) {
        settler.reject(stopped.reason);
        continue;
      }
      running++;
      jobs[i]!()
        .then(settler.resolve, (error: unknown) => {
          stopped ??= { reason: error };
          settler.reject(error);
        })
        .finally(() => {
          running--;
          pump();
        });
    }
  };
  pump();
  return {
    results,
    stop(reason) {
      stopped ??= { reason };
      pump();
    },
  };
}
