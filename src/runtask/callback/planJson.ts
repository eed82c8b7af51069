/**
 * Fetching the run's plan JSON for a handler (run-tasks.md §5): GET `plan_json_api_url` with the access token;
 * the platform answers 307 to a short-lived blob URL (or 204 while the plan is not ready). The blob URL carries
 * its own secret, so it is fetched WITHOUT the Authorization header, whatever its origin, and streamed to disk.
 */
import { stat, writeFile } from 'node:fs/promises';
import { ApiError, InterruptedError, TimeoutError } from '../../errors.js';
import { serverDetail } from './client.js';
import { NetworkError, send, sendToFile } from './http.js';
import { loggableUrl, type PlatformOrigins } from './origins.js';
import { backoffDelay, pause, type BackoffOptions } from '../retry.js';

/** Where the plan is, where it goes, and how hard to try. */
export interface FetchPlanOptions {
  url: string;
  token: string;
  allowed: PlatformOrigins;
  file: string;
  deadlineMs: number;
  signal?: AbortSignal | undefined;
  retry?: BackoffOptions | undefined;
  onRetry?: ((info: { attempt: number; reason: string; delayMs: number }) => void) | undefined;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const RETRY_STATUSES = new Set([204, 408, 429, 500, 502, 503, 504]);
/** A plan can be tens of megabytes: the download link gets longer than an API answer. */
const BLOB_TIMEOUT_MS = 10 * 60_000;

/** One attempt: `done` with the size, `retry` with a reason, or a thrown final error. */
type Attempt = { done: number } | { retry: string };

async function attempt(options: FetchPlanOptions): Promise<Attempt> {
  const { url, token, file, signal } = options;
  const first = await send(url, {
    method: 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'user-agent': 'provider-runtask',
    },
    timeoutMs: 60_000,
    signal,
  });
  const status = first.status;
  if (status === 200) {
    await writeFile(file, first.body, { mode: 0o600 });
    return { done: first.body.length };
  }
  if (RETRY_STATUSES.has(status))
    return { retry: status === 204 ? 'the plan is not ready (204)' : `status ${status}` };
  const location = first.headers.location;
  if (!REDIRECTS.has(status) || location === undefined) {
    const detail = serverDetail(first.body.toString('utf8'), status);
    throw new ApiError(
      `the platform refused the plan JSON request (${loggableUrl(url)}): ${status}${detail ? ` ${detail}` : ''}`,
      {
        status,
        serverDetail: detail,
        hint: 'The run task access token may have expired (it lives 10 minutes) or may not read this plan.',
      },
    );
  }
  // A fresh request, built here, so that no header of the first one (the token above all) can carry over.
  const blob = await sendToFile(new URL(location, url), file, {
    headers: { accept: 'application/json', 'user-agent': 'provider-runtask' },
    timeoutMs: BLOB_TIMEOUT_MS,
    signal,
  });
  if (blob.status < 200 || blob.status >= 300) {
    return { retry: `the plan download link answered ${blob.status}` };
  }
  return { done: (await stat(file)).size };
}

/** Downloads the plan JSON into `file`; resolves with its size in bytes. */
export async function fetchPlanJson(options: FetchPlanOptions): Promise<number> {
  const { url, allowed, signal } = options;
  if (!allowed.allows(url)) {
    throw new ApiError(
      `the plan JSON URL ${loggableUrl(url)} is not on an allowed platform host (${allowed.describe()})`,
      {
        status: 0,
        hint: 'Add the platform host with --platform-host if this really is your platform.',
      },
    );
  }
  const deadline = Date.now() + options.deadlineMs;
  for (let n = 1; ; n++) {
    let reason: string;
    try {
      const result = await attempt(options);
      if ('done' in result) return result.done;
      reason = result.retry;
    } catch (error) {
      if (signal?.aborted) throw new InterruptedError('the plan JSON download was interrupted');
      if (!(error instanceof NetworkError)) throw error;
      reason = error.code;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new TimeoutError(`could not fetch the plan JSON (${loggableUrl(url)}) in time: ${reason}`, {
        hint: 'Check that the platform is reachable from the integrator.',
      });
    }
    const delayMs = Math.min(remaining, backoffDelay(n, options.retry));
    options.onRetry?.({ attempt: n, reason, delayMs: Math.round(delayMs) });
    if (!(await pause(delayMs, signal))) throw new InterruptedError('the plan JSON download was interrupted');
  }
}
