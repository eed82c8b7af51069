/**
 * The one retry loop of the product, put around every outbound request (registry API, upload and download
 * links, run task callbacks and plan JSON, the platform-like POST of `runtask send`). A call site hands over one
 * attempt and, when it needs them, two hooks: `refresh` (before the next try, replace what the attempt targets:
 * an upload or download link that was refused) and `reconcile` (a create whose answer was lost is read before it
 * is sent again). What is retryable and how long to wait is the policy of `retryPolicy.ts`.
 *
 * One interrupt semantic: once the signal is aborted (before an attempt, during one, or during a wait), the
 * retries end by throwing an InterruptedError — the attempt's own when it threw one (its words name the
 * request), else one with the caller's `interrupted` message. Callers that stop quietly (the integrator's
 * callback delivery) catch it; publish lets it reach the exit code 130.
 *
 * When the retries run out, or a failure is final, the attempt's own last error is thrown unchanged; the caller
 * turns it into its message (`isTransient` tells the two apart).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InterruptedError } from '../errors.js';
import {
  DEFAULT_POLICY,
  failureOf,
  judge,
  retryLimit,
  waitBeforeRetry,
  type Failure,
  type RetryPolicy,
} from './retryPolicy.js';

export {
  Again,
  AnswerError,
  DEFAULT_POLICY,
  backoffMs,
  failureOf,
  isTransient,
  judge,
  rateLimitResetMs,
  retryAfterMs,
  serverWaitMs,
  transientStatus,
  waitBeforeRetry,
  SERVER_WAIT_FLOOR_MS,
  type Backoff,
  type Failure,
  type HeaderBag,
  type RetryPolicy,
  type Verdict,
} from './retryPolicy.js';

/** Time as the retries see it; tests inject their own. */
export interface RetryClock {
  now: () => number;
  /** Resolves after `ms`, or rejects at once when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** A number in [0, 1), for jitter. */
  random: () => number;
}

/** The real clock. */
export const SYSTEM_CLOCK: RetryClock = {
  now: Date.now,
  sleep: (ms, signal) => sleep(ms, undefined, signal === undefined ? {} : { signal }),
  random: Math.random,
};

/** What an interruption is called: the InterruptedError's message, or its message and hint. */
export type Interruption = string | { message: string; hint: string };

/** What an attempt is told. */
export interface AttemptContext {
  /** 1 for the first attempt. */
  attempt: number;
  /** Milliseconds left before the deadline (Infinity without one): an attempt bounds its own timeout with it. */
  remainingMs: number;
}

/** What `onRetry` is told before each wait. */
export interface RetryInfo {
  /** The attempt that failed (1-based); the next one is `attempt + 1`. */
  attempt: number;
  /** Why it is retried: `status 503`, `ECONNRESET`, … */
  reason: string;
  /** The wait before the next attempt, in ms. */
  delayMs: number;
}

/** Before the next try, replace what the attempt targets (a refused link); at most `limit` times per call. */
export interface RefreshHook<T> {
  /** The failures a fresh target cures (for links: an answer 401, 403 or 404). */
  when: (failure: Failure) => boolean;
  limit: number;
  /**
   * Fetches the fresh target (the attempt reads it from a variable this sets) and returns nothing to try again
   * at once, or `{ value }` to end with that value (the file turned out to be there already). It may throw:
   * the error ends the retries (throw `error` itself to keep the original failure).
   */
  run: (failed: { error: unknown; failure: Failure }) => Promise<{ value: T } | undefined>;
}

/** How to run an attempt again. Only `interrupted` is required. */
export interface RetryOptions<T> {
  policy?: RetryPolicy | undefined;
  /** False for a create (POST): its transient failures are ambiguous and need `reconcile` (default true). */
  idempotent?: boolean;
  /** Reads an attempt's error as a Failure (default `failureOf`); a call site adds its own finals here. */
  failure?: (error: unknown) => Failure;
  signal?: AbortSignal | undefined;
  /** The InterruptedError's message (and hint) when the signal ends the retries. */
  interrupted: Interruption;
  /** Told before each wait (logs, progress notes). */
  onRetry?: ((info: RetryInfo) => void) | undefined;
  refresh?: RefreshHook<T> | undefined;
  /**
   * For a create whose answer was lost (an ambiguous failure): reads the resource before it is created again;
   * `{ value }` ends the retries with what was found, undefined sends the create again after the wait.
   */
  reconcile?: ((lost: { reason: string; error: unknown }) => Promise<{ value: T } | undefined>) | undefined;
  clock?: Partial<RetryClock> | undefined;
}

/** Runs `attempt` until it succeeds, fails for good, runs out of retries or time, or the signal aborts. */
export async function retrying<T>(
  attempt: (context: AttemptContext) => Promise<T>,
  options: RetryOptions<T>,
): Promise<T> {
  const clock: RetryClock = { ...SYSTEM_CLOCK, ...options.clock };
  const policy: RetryPolicy = options.policy ?? DEFAULT_POLICY;
  const limit = retryLimit(policy);
  const { signal } = options;
  const deadline = policy.deadlineMs === undefined ? undefined : deadlineIn(policy.deadlineMs, clock.now);
  const remaining = (): number => deadline?.remainingMs() ?? Number.POSITIVE_INFINITY;
  let retries = 0;
  let refreshes = 0;
  for (let attempts = 1; ; attempts++) {
    if (signal?.aborted) throw interruption(options.interrupted);
    try {
      return await attempt({ attempt: attempts, remainingMs: remaining() });
    } catch (error) {
      if (signal?.aborted) {
        throw error instanceof InterruptedError ? error : interruption(options.interrupted, error);
      }
      const failure = (options.failure ?? failureOf)(error);
      if (options.refresh?.when(failure) === true) {
        if (refreshes >= options.refresh.limit) throw error;
        refreshes++;
        const ended = await options.refresh.run({ error, failure });
        if (ended !== undefined) return ended.value;
        continue;
      }
      const verdict = judge(failure, options.idempotent ?? true);
      if (!verdict.retry || retries >= limit || remaining() <= 0) throw error;
      const wait = waitBeforeRetry(retries + 1, failure, policy, clock);
      if (wait === undefined) throw error;
      if (verdict.ambiguous) {
        if (options.reconcile === undefined) throw error;
        const found = await options.reconcile({ reason: verdict.reason, error });
        if (found !== undefined) return found.value;
      }
      retries++;
      const delayMs = Math.max(0, Math.min(wait, remaining()));
      options.onRetry?.({ attempt: attempts, reason: verdict.reason, delayMs });
      await pause(delayMs, signal, options.interrupted, clock);
    }
  }
}

/**
 * Waits `ms` (polls and grace periods use it too); an aborted signal ends the wait by throwing the
 * InterruptedError `interrupted` names, at once.
 */
export async function pause(
  ms: number,
  signal: AbortSignal | undefined,
  interrupted: Interruption,
  clock: Pick<RetryClock, 'sleep'> = SYSTEM_CLOCK,
): Promise<void> {
  if (signal?.aborted) throw interruption(interrupted);
  try {
    await clock.sleep(Math.max(0, ms), signal);
  } catch (error) {
    if (signal?.aborted) throw interruption(interrupted, error);
    throw error;
  }
  if (signal?.aborted) throw interruption(interrupted);
}

/** A deadline `ms` from now on `clock`: what is left of it, and whether it has passed. */
export function deadlineIn(
  ms: number,
  now: () => number = Date.now,
): { remainingMs: () => number; elapsedMs: () => number; passed: () => boolean } {
  const start = now();
  return {
    remainingMs: () => start + ms - now(),
    elapsedMs: () => now() - start,
    passed: () => now() - start >= ms,
  };
}

function interruption(what: Interruption, cause?: unknown): InterruptedError {
  const { message, hint } = typeof what === 'string' ? { message: what, hint: undefined } : what;
  return new InterruptedError(message, {
    ...(hint === undefined ? {} : { hint }),
    ...(cause === undefined ? {} : { cause }),
  });
}
