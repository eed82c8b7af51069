/**
 * Fetching the run's plan JSON for a handler (run-tasks.md §5): GET `plan_json_api_url` with the access token;
 * the platform answers 307 to a short-lived blob URL (or 204 while the plan is not ready). The blob URL carries
 * its own secret, so it is fetched WITHOUT the Authorization header, whatever its origin, and streamed to disk.
 * Retried by the one retry policy (src/net/retry.ts) until the deadline: 408/429/5xx and network errors, and
 * (the caller's `Again`) a plan not ready yet or a blob link that did not answer 2xx.
 */
import { stat, writeFile } from 'node:fs/promises';
import { ApiError, TimeoutError } from '../../errors.js';
import { Again, AnswerError, failureOf, isTransient, retrying } from '../../net/retry.js';
import { callbackPolicy, serverDetail, type CallbackBackoff } from './client.js';
import { send, sendToFile } from './http.js';
import { loggableUrl, type PlatformOrigins } from './origins.js';

/** Where the plan is, where it goes, and how hard to try. */
export interface FetchPlanOptions {
  url: string;
  token: string;
  allowed: PlatformOrigins;
  file: string;
  deadlineMs: number;
  signal?: AbortSignal | undefined;
  retry?: CallbackBackoff | undefined;
  onRetry?: ((info: { attempt: number; reason: string; delayMs: number }) => void) | undefined;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** A plan can be tens of megabytes: the download link gets longer than an API answer. */
const BLOB_TIMEOUT_MS = 10 * 60_000;

/** One attempt: resolves with the size; throws `Again`, an AnswerError or a NetworkError for the policy to judge. */
async function attempt(options: FetchPlanOptions): Promise<number> {
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
    return first.body.length;
  }
  if (status === 204) throw new Again('the plan is not ready (204)');
  const location = first.headers.location;
  if (!REDIRECTS.has(status) || location === undefined) {
    throw new AnswerError(status, first.headers, first.body.toString('utf8'));
  }
  // A fresh request, built here, so that no header of the first one (the token above all) can carry over.
  const blob = await sendToFile(new URL(location, url), file, {
    headers: { accept: 'application/json', 'user-agent': 'provider-runtask' },
    timeoutMs: BLOB_TIMEOUT_MS,
    signal,
  });
  if (blob.status < 200 || blob.status >= 300) {
    throw new Again(`the plan download link answered ${blob.status}`);
  }
  return (await stat(file)).size;
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
  try {
    return await retrying(() => attempt(options), {
      policy: callbackPolicy(options.retry, options.deadlineMs),
      signal,
      interrupted: 'the plan JSON download was interrupted',
      onRetry: (info) => options.onRetry?.({ ...info, delayMs: Math.round(info.delayMs) }),
    });
  } catch (error) {
    if (error instanceof AnswerError && !isTransient(error)) {
      const detail = serverDetail(error.body, error.status);
      throw new ApiError(
        `the platform refused the plan JSON request (${loggableUrl(url)}): ${error.status}${detail ? ` ${detail}` : ''}`,
        {
          status: error.status,
          serverDetail: detail,
          hint: 'The run task access token may have expired (it lives 10 minutes) or may not read this plan.',
        },
      );
    }
    const failure = failureOf(error);
    if (failure.kind === 'final') throw error;
    const reason = failure.kind === 'answer' ? `status ${failure.status}` : failure.reason;
    if (!isTransient(error)) {
      throw new ApiError(`could not fetch the plan JSON (${loggableUrl(url)}): ${reason}`, {
        status: 0,
        hint: 'The platform host did not answer in TLS: check --platform-host and the plan JSON URL.',
      });
    }
    throw new TimeoutError(`could not fetch the plan JSON (${loggableUrl(url)}) in time: ${reason}`, {
      hint: 'Check that the platform is reachable from the integrator.',
    });
  }
}
