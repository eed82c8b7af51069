/**
 * The retry policy as data and arithmetic, with no waiting in it: what a failed attempt was (`failureOf`), whether
 * it is worth another try (`judge`, the one table below), and how long to wait first (`waitBeforeRetry`: the
 * server's `Retry-After` or `X-RateLimit-Reset`, a fixed schedule, or exponential backoff with jitter).
 * `retry.ts` runs attempts with it; nothing else in `src/` decides these things.
 *
 *   what the attempt met                                   | a request that may be repeated | a create (POST)
 *   -------------------------------------------------------+--------------------------------+------------------------
 *   an answer 408, 425, 429 or 5xx (but 501 and 505)       | retry                          | ambiguous: read first
 *   any other answer (3xx, 4xx, 501, 505)                  | final                          | final
 *   no answer: a network code (NETWORK_CODE: reset,        | retry                          | ambiguous: read first
 *     refused, timeout, DNS, unreachable, cut short, …)    |                                |
 *   no answer: TLS (EPROTO, ERR_SSL_…, certificates: the   | final                          | final
 *     same server will not start speaking TLS)             |                                |
 *   `Again`: the caller's own word (the plan is not ready, | retry                          | retry
 *     the platform retries every answer but 200)           |                                |
 *   anything else (a file changed since verification, a    | final                          | final
 *     full disk, ENOENT, a bug)                            |                                |
 *
 * An error carrying a 2xx answer whose body was then cut short (a reset or a timeout inside the body) is read
 * by its code, as no answer: a read of it is retried. An upload reads such a 2xx as done (src/registry/uploads.ts).
 *
 * "Ambiguous": the create may or may not have taken effect, so it is never simply sent again; the caller's
 * `reconcile` hook reads the resource first, and without that hook the failure is final.
 */
import { ApiError } from '../errors.js';
import { describeNetworkFailure } from './networkFailure.js';

/** Response headers as Node and got give them. */
export type HeaderBag = Record<string, string | string[] | undefined>;

/** What an attempt's failure was, as the policy reads it. */
export type Failure =
  /** An HTTP answer the attempt did not accept. */
  | { kind: 'answer'; status: number; headers?: HeaderBag | undefined }
  /** No answer; `tls` when the TLS handshake failed or met a server speaking something else. */
  | { kind: 'no-answer'; reason: string; tls: boolean }
  /** The caller says: try again (see `Again`). */
  | { kind: 'again'; reason: string }
  /** Not a request failure: never retried. */
  | { kind: 'final' };

/** The policy's word on one failure. */
export interface Verdict {
  /** Worth another try (for an ambiguous create: after reading). */
  retry: boolean;
  /** The request may have taken effect: a create reads before it is sent again. */
  ambiguous: boolean;
  /** Why, in a few words: `status 503`, `ECONNRESET`, `the plan is not ready (204)`. */
  reason: string;
}

/** How patient a caller is: counts, backoff, deadline. Every field has a default. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 4; unlimited when only `deadlineMs` is given). */
  limit?: number;
  /** The first backoff ceiling, in ms (default 500); each retry doubles it. */
  baseDelayMs?: number;
  /** The largest backoff ceiling, in ms (default 8 s). */
  maxDelayMs?: number;
  /** Fixed waits instead of backoff (the platform's 1 s, 2 s, 4 s); their count is the retry limit. */
  delaysMs?: readonly number[] | undefined;
  /** No retry starts once this many ms have passed since the first attempt; waits are cut to what is left. */
  deadlineMs?: number | undefined;
  /**
   * The longest wait a server may ask for (default 120 s); a longer one is not waited for: the failure is final.
   * Not under a deadline: there the deadline is the budget, and a server's wait is cut to what is left of it.
   */
  maxServerWaitMs?: number;
}

/** A complete backoff, as publish tuning and the registry client hold it. */
export interface Backoff {
  limit: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The defaults against a real registry: 4 retries, 500 ms doubling to 8 s, servers' waits up to 2 minutes. */
export const DEFAULT_POLICY = {
  limit: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxServerWaitMs: 120_000,
} as const;

/**
 * Thrown by an attempt to say "try again" for a reason only the caller can judge (the plan JSON is not ready,
 * `runtask send` retries every answer but 200 as the platform does). Always retried, never ambiguous.
 */
export class Again extends Error {
  constructor(
    /** Why, for retry notes and, when the retries run out, the final message. */
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * Thrown by an attempt on node:http for an answer it does not accept, so that the policy can judge the status
 * and read its `Retry-After`. The caller turns what is left after the retries into its own error.
 */
export class AnswerError extends Error {
  constructor(
    readonly status: number,
    readonly headers: HeaderBag,
    /** The answer's body, for the caller's message (the server's own words). */
    readonly body: string = '',
  ) {
    super(`answered ${status}`);
  }
}

/**
 * Codes of a request that got no answer for a passing reason: the connection was refused, reset, cut short or
 * timed out, the name did not resolve, the network was down, or the answer could not be parsed (a proxy's hiccup).
 * `ERR_SOCKET_CONNECTION_TIMEOUT` is Node's when every address of a host timed out (autoSelectFamily).
 * `ERR_NETWORK` is the integrator client's code for a failure that came without one.
 */
export const NETWORK_CODE =
  /^(ECONN[A-Z]+|ETIMEDOUT|ESOCKETTIMEDOUT|EPIPE|ENOTFOUND|EAI_[A-Z]+|ENET[A-Z]+|EHOST[A-Z]+|EADDR[A-Z]+|HPE_[A-Z_]+|UND_ERR_[A-Z_]+|ERR_STREAM_PREMATURE_CLOSE|ERR_SOCKET_CONNECTION_TIMEOUT|ERR_NETWORK)$/;

/** Codes of a TLS failure: a handshake that failed or met plain HTTP, or a certificate that is not accepted. */
export const TLS_CODE =
  /^(EPROTO|ERR_SSL_[A-Z0-9_]+|ERR_TLS_[A-Z0-9_]+|[A-Z_]*CERT[A-Z_]*|UNABLE_TO_[A-Z_]+)$/;

/** Statuses worth another try: the server was busy, limited or failing for the moment. */
export function transientStatus(status: number): boolean {
  if (status === 408 || status === 425 || status === 429) return true;
  // 501 Not Implemented and 505 HTTP Version Not Supported will not change on another try.
  return status >= 500 && status <= 599 && status !== 501 && status !== 505;
}

/**
 * What an error thrown by an attempt was: `Again`, an answer (`AnswerError`, an ApiError with a status, got's
 * HTTPError or anything carrying the `response` it failed on), no answer (an ApiError with status 0, or an error
 * whose code is a network or TLS one: `NETWORK_CODE`, `TLS_CODE`), or else final (a file system error too).
 */
export function failureOf(error: unknown): Failure {
  if (error instanceof Again) return { kind: 'again', reason: error.reason };
  if (error instanceof AnswerError) return { kind: 'answer', status: error.status, headers: error.headers };
  if (error instanceof ApiError) {
    if (error.status !== 0) return { kind: 'answer', status: error.status };
    const reason = error.details?.reason;
    return { kind: 'no-answer', reason: typeof reason === 'string' ? reason : 'no answer', tls: false };
  }
  const answer = answerOf(error);
  if (answer !== undefined) return { kind: 'answer', ...answer };
  const code = nodeCode(error);
  if (code === undefined) return { kind: 'final' };
  if (TLS_CODE.test(code) || describeNetworkFailure(error, code).kind !== 'network') {
    return { kind: 'no-answer', reason: code, tls: true };
  }
  return NETWORK_CODE.test(code) ? { kind: 'no-answer', reason: code, tls: false } : { kind: 'final' };
}

/** The table above: is this failure worth another try, and may the request have taken effect? */
export function judge(failure: Failure, idempotent: boolean): Verdict {
  switch (failure.kind) {
    case 'again':
      return { retry: true, ambiguous: false, reason: failure.reason };
    case 'answer': {
      const retry = transientStatus(failure.status);
      return { retry, ambiguous: retry && !idempotent, reason: `status ${failure.status}` };
    }
    case 'no-answer':
      return { retry: !failure.tls, ambiguous: !failure.tls && !idempotent, reason: failure.reason };
    case 'final':
      return { retry: false, ambiguous: false, reason: 'final' };
  }
}

/**
 * True when the policy would have retried this error: thrown by `retrying`, it means the retries or the time ran
 * out, as opposed to a refusal that was final from the start.
 */
export function isTransient(error: unknown, idempotent = true): boolean {
  return judge(failureOf(error), idempotent).retry;
}

/** The shape of an HTTP date (IMF-fixdate, RFC 850 or asctime): a day name and a time of day. */
const HTTP_DATE = /^[A-Za-z]{3}.* \d{2}:\d{2}:\d{2}\b/;

/** Milliseconds a `Retry-After` value asks for: seconds, or an HTTP date (0 once past); undefined when unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  // An HTTP date in any of its three forms has a time of day; Date.parse alone takes `-5` for a year.
  if (!HTTP_DATE.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Milliseconds an `X-RateLimit-Reset` value asks for: seconds until the window resets, as HCP Terraform sends it
 * (`0.412`), or an epoch second when larger than 10⁹ (GitHub's form); undefined when unreadable.
 */
export function rateLimitResetMs(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || !/^\d+(\.\d+)?$/.test(value)) return undefined;
  const seconds = Number(value);
  return seconds > 1e9 ? Math.max(0, seconds * 1000 - now) : seconds * 1000;
}

/**
 * The wait the server asked for: `Retry-After` on any answer, else `X-RateLimit-Reset` on a 429 (on other
 * answers it tells when a window resets, not when this failure will pass). Undefined when it asked nothing.
 */
export function serverWaitMs(failure: Failure, now: number): number | undefined {
  if (failure.kind !== 'answer' || failure.headers === undefined) return undefined;
  const asked = retryAfterMs(failure.headers['retry-after'], now);
  if (asked !== undefined) return asked;
  return failure.status === 429 ? rateLimitResetMs(failure.headers['x-ratelimit-reset'], now) : undefined;
}

/** The backoff before retry `retry` (1-based): a random point in the upper half of min(max, base·2^(retry-1)). */
export function backoffMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const base = policy.baseDelayMs ?? DEFAULT_POLICY.baseDelayMs;
  const max = policy.maxDelayMs ?? DEFAULT_POLICY.maxDelayMs;
  const ceiling = Math.min(max, base * 2 ** Math.max(0, retry - 1));
  return ceiling / 2 + random() * (ceiling / 2);
}

/** The least wait before a retry the server asked to make at once (`Retry-After: 0`, a past date, a reset of 0). */
export const SERVER_WAIT_FLOOR_MS = 1000;

/**
 * The wait before retry `retry` (1-based): the server's, when it asked — never less than the backoff's, up to
 * `SERVER_WAIT_FLOOR_MS` (a server answering "0" every time would otherwise be asked again in a tight loop), and
 * undefined when it asked for more than `maxServerWaitMs` without a deadline (not worth waiting for; under a
 * deadline the caller cuts the wait to what is left) — else the fixed schedule's, else backoff.
 */
export function waitBeforeRetry(
  retry: number,
  failure: Failure,
  policy: RetryPolicy,
  clock: { now: () => number; random: () => number },
): number | undefined {
  const asked = serverWaitMs(failure, clock.now());
  if (asked !== undefined) {
    const tooLong = asked > (policy.maxServerWaitMs ?? DEFAULT_POLICY.maxServerWaitMs);
    if (tooLong && policy.deadlineMs === undefined) return undefined;
    return Math.max(asked, Math.min(SERVER_WAIT_FLOOR_MS, backoffMs(retry, policy, clock.random)));
  }
  const scheduled = policy.delaysMs?.[retry - 1];
  if (scheduled !== undefined) return scheduled;
  return backoffMs(retry, policy, clock.random);
}

/** The retry limit a policy implies: the schedule's length, the limit, or unlimited under a deadline. */
export function retryLimit(policy: RetryPolicy): number {
  if (policy.delaysMs !== undefined) return policy.delaysMs.length;
  if (policy.limit !== undefined) return policy.limit;
  return policy.deadlineMs === undefined ? DEFAULT_POLICY.limit : Number.POSITIVE_INFINITY;
}

/**
 * The status and headers of an error carrying the answer it failed on (got's HTTPError does). An error that
 * carries a 2xx answer did not fail on it: its body was cut short (a reset, a timeout between two bytes), which
 * is the network's doing, read from the error's code like any other.
 */
function answerOf(error: unknown): { status: number; headers?: HeaderBag } | undefined {
  if (!(error instanceof Error) || !('response' in error)) return undefined;
  const response = (error as { response?: unknown }).response;
  if (typeof response !== 'object' || response === null) return undefined;
  const { statusCode, headers } = response as { statusCode?: unknown; headers?: unknown };
  if (typeof statusCode !== 'number' || (statusCode >= 200 && statusCode < 300)) return undefined;
  return typeof headers === 'object' && headers !== null
    ? { status: statusCode, headers: headers as HeaderBag }
    : { status: statusCode };
}

/** A Node-style error code (`ECONNRESET`, `ERR_SSL_…`); the lower-case codes of our own errors are not ones. */
function nodeCode(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code) ? code : undefined;
}
