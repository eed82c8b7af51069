/**
 * Waiting between attempts: exponential backoff with jitter, capped, and a pause that Ctrl-C cuts short.
 * Shared by the upload transport and by publish's own retries of creates and polls.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InterruptedError } from '../errors.js';

/** How long to wait between attempts. */
export interface BackoffPolicy {
  /** Retries after the first attempt. */
  limit: number;
  /** The first wait's ceiling, in milliseconds; each retry doubles it. */
  baseDelayMs: number;
  /** The largest ceiling, in milliseconds. */
  maxDelayMs: number;
}

/** The defaults used against a real registry: 4 retries, 500 ms doubling to 8 s. */
export const DEFAULT_BACKOFF: BackoffPolicy = { limit: 4, baseDelayMs: 500, maxDelayMs: 8_000 };

/** The wait before retry number `attempt` (1-based): a random point in the upper half of the ceiling. */
export function backoffDelay(attempt: number, policy: BackoffPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Waits `ms`; an aborted signal ends the wait with an InterruptedError saying what was interrupted. */
export async function pause(ms: number, signal: AbortSignal | undefined, what: string): Promise<void> {
  if (signal?.aborted) throw interrupted(what);
  try {
    await sleep(Math.max(0, ms), undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    if (signal?.aborted) throw interrupted(what);
    throw error;
  }
}

/** The error of a run stopped by Ctrl-C (or SIGTERM) while doing `what`. */
export function interrupted(what: string): InterruptedError {
  return new InterruptedError(`Interrupted while ${what}`, {
    hint: 'Run the same command again to finish: what is already in the registry is kept and not duplicated.',
  });
}
