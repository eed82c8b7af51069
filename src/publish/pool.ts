/**
 * Bounded concurrency: run tasks with at most `limit` in flight. After the first failure no new task starts;
 * the ones in flight are allowed to finish (their work is not wasted on a re-run) and the first error is
 * thrown — an interruption wins over anything it caused.
 */
import { InterruptedError } from '../errors.js';

/** Runs every task, at most `limit` at once; rejects with the first error once nothing is in flight. */
export async function runPool(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  const queue = [...tasks];
  const errors: unknown[] = [];
  const worker = async (): Promise<void> => {
    for (let task = queue.shift(); task !== undefined && errors.length === 0; task = queue.shift()) {
      try {
        await task();
      } catch (error) {
        errors.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  if (errors.length > 0) throw errors.find((e) => e instanceof InterruptedError) ?? errors[0];
}
