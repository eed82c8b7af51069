/**
 * Sending one task result callback (run-tasks.md §4): PATCH the callback URL with the run's access token as a
 * Bearer token and the JSON:API document. The one retry policy (src/net/retry.ts) retries 408, 429, 5xx
 * (Retry-After honoured) and network errors with backoff until the deadline; any other refusal (401, 409, 422, …)
 * is final and carries the server's words. The same document may be sent twice, so the PATCH counts as a request
 * that may be repeated. An interruption is not an error here: the outcome says `aborted`.
 * The token goes only to an allowed platform origin, and redirects are never followed with it.
 */
import { send } from './http.js';
import { callbackDocument, type TaskResult } from '../../terraform/runtask/payload.js';
import { loggableUrl, type PlatformOrigins } from './origins.js';
import { InterruptedError } from '../../errors.js';
import { AnswerError, failureOf, isTransient, retrying, type RetryPolicy } from '../../net/retry.js';

import { JSONAPI } from '../../terraform/names.js';
import { readErrors } from '../../terraform/jsonapiErrors.js';

/** What to send, where, and how hard to try. */
export interface SendCallbackOptions {
  url: string;
  token: string;
  result: TaskResult;
  allowed: PlatformOrigins;
  /** Keep retrying for this long after the first attempt. */
  deadlineMs: number;
  signal?: AbortSignal | undefined;
  /** Backoff between attempts (default 500 ms doubling to 30 s); the deadline is `deadlineMs`. */
  retry?: CallbackBackoff | undefined;
  /** Called before each retry, for logging. */
  onRetry?: ((info: { attempt: number; reason: string; delayMs: number }) => void) | undefined;
  userAgent?: string | undefined;
}

/** How a callback ended. */
export type CallbackOutcome =
  | { kind: 'sent'; status: number; attempts: number }
  | { kind: 'refused'; status: number; detail: string | undefined; attempts: number }
  | { kind: 'gave-up'; reason: string; attempts: number }
  | { kind: 'aborted'; attempts: number }
  | { kind: 'not-allowed'; url: string | undefined };

/** The backoff of the integrator's requests (callbacks, plan JSON): first and largest ceiling, in ms. */
export type CallbackBackoff = Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>;

const ATTEMPT_TIMEOUT_MS = 30_000;
const MAX_DELAY_MS = 30_000;

/** Sends one callback, retrying transient failures until `deadlineMs`; never throws for HTTP outcomes. */
export async function sendCallback(options: SendCallbackOptions): Promise<CallbackOutcome> {
  const { url, token, allowed, signal } = options;
  if (!allowed.allows(url)) return { kind: 'not-allowed', url: loggableUrl(url) };
  const body = JSON.stringify(callbackDocument(options.result));
  let attempts = 0;
  try {
    const status = await retrying(
      async ({ attempt, remainingMs }) => {
        attempts = attempt;
        const response = await send(url, {
          method: 'PATCH',
          body,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': JSONAPI,
            accept: JSONAPI,
            'user-agent': options.userAgent ?? 'provider-runtask',
          },
          timeoutMs: Math.max(1, Math.min(ATTEMPT_TIMEOUT_MS, remainingMs)),
          signal,
        });
        if (response.status >= 200 && response.status < 300) return response.status;
        throw new AnswerError(response.status, response.headers, response.body.toString('utf8'));
      },
      {
        policy: callbackPolicy(options.retry, options.deadlineMs),
        signal,
        interrupted: 'interrupted before the callback was delivered',
        onRetry: (info) => options.onRetry?.({ ...info, delayMs: Math.round(info.delayMs) }),
      },
    );
    return { kind: 'sent', status, attempts };
  } catch (error) {
    if (error instanceof InterruptedError) return { kind: 'aborted', attempts };
    if (error instanceof AnswerError && !isTransient(error)) {
      return {
        kind: 'refused',
        status: error.status,
        detail: serverDetail(error.body, error.status),
        attempts,
      };
    }
    const failure = failureOf(error);
    const reason =
      failure.kind === 'answer'
        ? `status ${failure.status}`
        : failure.kind === 'no-answer'
          ? failure.reason
          : String(error);
    return { kind: 'gave-up', reason, attempts };
  }
}

/** The policy of the integrator's requests: backoff from 500 ms to 30 s, as many tries as `deadlineMs` allows. */
export function callbackPolicy(backoff: CallbackBackoff | undefined, deadlineMs: number): RetryPolicy {
  return {
    baseDelayMs: backoff?.baseDelayMs ?? 500,
    maxDelayMs: backoff?.maxDelayMs ?? MAX_DELAY_MS,
    deadlineMs,
  };
}

/** The server's own words: JSON:API `errors[].title/detail`, else the start of the body. */
export function serverDetail(body: string, status: number): string | undefined {
  if (status >= 300 && status < 400)
    return 'answered with a redirect, which is not followed with the access token';
  const words = readErrors(body)
    .map((e) => [e.title, e.detail].filter((x): x is string => typeof x === 'string' && x !== '').join(': '))
    .filter((part) => part !== '')
    .join('; ');
  if (words !== '') return words;
  const text = body.trim().replace(/\s+/g, ' ');
  return text === '' ? undefined : text.slice(0, 300);
}
