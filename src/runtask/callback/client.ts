/**
 * Sending one task result callback (run-tasks.md §4): PATCH the callback URL with the run's access token as a
 * Bearer token and the JSON:API document. 5xx, 408, 429 (Retry-After honoured) and network errors are retried
 * with backoff until the deadline; any other refusal (401, 409, 422, …) is final and carries the server's words.
 * The token goes only to an allowed platform origin, and redirects are never followed with it.
 */
import { NetworkError, send } from './http.js';
import { callbackDocument, type TaskResult } from '../wire/payload.js';
import { loggableUrl, type PlatformOrigins } from './origins.js';
import { backoffDelay, pause, retryAfterMs, type BackoffOptions } from '../retry.js';

import { JSONAPI } from '../../terraform.js';

/** What to send, where, and how hard to try. */
export interface SendCallbackOptions {
  url: string;
  token: string;
  result: TaskResult;
  allowed: PlatformOrigins;
  /** Keep retrying for this long after the first attempt. */
  deadlineMs: number;
  signal?: AbortSignal | undefined;
  retry?: BackoffOptions | undefined;
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

const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const ATTEMPT_TIMEOUT_MS = 30_000;

/** Sends one callback, retrying transient failures until `deadlineMs`; never throws for HTTP outcomes. */
export async function sendCallback(options: SendCallbackOptions): Promise<CallbackOutcome> {
  const { url, token, allowed, signal } = options;
  if (!allowed.allows(url)) return { kind: 'not-allowed', url: loggableUrl(url) };
  const body = JSON.stringify(callbackDocument(options.result));
  const deadline = Date.now() + options.deadlineMs;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) return { kind: 'aborted', attempts: attempt - 1 };
    let reason: string;
    let wait: number | undefined;
    try {
      const response = await send(url, {
        method: 'PATCH',
        body,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': JSONAPI,
          accept: JSONAPI,
          'user-agent': options.userAgent ?? 'provider-runtask',
        },
        timeoutMs: Math.max(1, Math.min(ATTEMPT_TIMEOUT_MS, deadline - Date.now())),
        signal,
      });
      const status = response.status;
      if (status >= 200 && status < 300) return { kind: 'sent', status, attempts: attempt };
      if (!RETRY_STATUSES.has(status)) {
        const detail = serverDetail(response.body.toString('utf8'), status);
        return { kind: 'refused', status, detail, attempts: attempt };
      }
      reason = `status ${status}`;
      wait = retryAfterMs(response.headers['retry-after']);
    } catch (error) {
      if (signal?.aborted) return { kind: 'aborted', attempts: attempt };
      reason = error instanceof NetworkError ? error.code : String(error);
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) return { kind: 'gave-up', reason, attempts: attempt };
    const delayMs = Math.min(remaining, wait ?? backoffDelay(attempt, options.retry));
    options.onRetry?.({ attempt, reason, delayMs: Math.round(delayMs) });
    if (!(await pause(delayMs, signal))) return { kind: 'aborted', attempts: attempt };
  }
}

/** The server's own words: JSON:API `errors[].title/detail`, else the start of the body. */
export function serverDetail(body: string, status: number): string | undefined {
  if (status >= 300 && status < 400)
    return 'answered with a redirect, which is not followed with the access token';
  try {
    const doc = JSON.parse(body) as { errors?: unknown };
    if (Array.isArray(doc.errors)) {
      const parts = doc.errors.map((e: unknown) => {
        if (typeof e === 'string') return e;
        const o = (e ?? {}) as { title?: unknown; detail?: unknown };
        return [o.title, o.detail].filter((x): x is string => typeof x === 'string' && x !== '').join(': ');
      });
      const text = parts.filter((p) => p !== '').join('; ');
      if (text !== '') return text;
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  const text = body.trim().replace(/\s+/g, ' ');
  return text === '' ? undefined : text.slice(0, 300);
}
