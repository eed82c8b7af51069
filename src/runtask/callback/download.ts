/**
 * Fetching a file of the run for a handler (run-tasks.md §5), the plan JSON or the configuration version: GET
 * its API URL with the access token; the platform answers with a redirect to a short-lived blob URL (307 for
 * the plan, 302 for the configuration version; 204 while a plan is not ready). The blob URL carries its own
 * secret, so it is fetched WITHOUT the Authorization header, whatever its origin, and streamed to disk, bounded
 * in size when the download says so. Retried by the one retry policy (src/net/retry.ts) until the deadline:
 * 408/429/5xx and network errors, and (the caller's `Again`) a file not ready yet or a blob link that did not
 * answer 2xx. A file over its bound is not retried. The deadline covers the whole download, retries included: an
 * attempt still under way when it passes is cut off (a link that drips a byte at a time holds nobody longer).
 */
import { stat, writeFile } from 'node:fs/promises';
import { ApiError, TimeoutError } from '../../errors.js';
import { Again, AnswerError, failureOf, isTransient, retrying } from '../../net/retry.js';
import { callbackPolicy, serverDetail, type CallbackBackoff } from './client.js';
import { NetworkError, send, sendToFile, TooLargeError } from './http.js';
import { loggableUrl, type PlatformOrigins } from './origins.js';

/** What is downloaded, as messages name it, and how. */
export interface RunFile {
  /** For messages: "the plan JSON". */
  what: string;
  /** For messages about a 204 and the blob link: "the plan". */
  short: string;
  /** For the hint of a refusal: "this plan". */
  thisOne: string;
  accept: string;
  /** The largest accepted file in bytes (default: no bound). */
  maxBytes?: number;
}

/** Where the file is, where it goes, and how hard to try. */
export interface FetchRunFileOptions {
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
const API_TIMEOUT_MS = 60_000;
/** A plan or a configuration can be tens of megabytes: the download link gets longer than an API answer. */
const BLOB_TIMEOUT_MS = 10 * 60_000;

/**
 * One attempt, cut off at the deadline (`remainingMs` of it left): resolves with the size; throws `Again`, an
 * AnswerError or a NetworkError for the policy to judge.
 */
async function attempt(wanted: RunFile, options: FetchRunFileOptions, remainingMs: number): Promise<number> {
  const { url, token, file, signal } = options;
  const until = Date.now() + remainingMs;
  const within = (ms: number): number => Math.max(1, Math.min(ms, until - Date.now()));
  const first = await send(url, {
    method: 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      accept: wanted.accept,
      'user-agent': 'provider-runtask',
    },
    timeoutMs: within(API_TIMEOUT_MS),
    signal,
    maxBytes: wanted.maxBytes,
  });
  const status = first.status;
  if (status === 200) {
    await writeFile(file, first.body, { mode: 0o600 });
    return first.body.length;
  }
  if (status === 204) throw new Again(`${wanted.short} is not ready (204)`);
  const location = first.headers.location;
  if (!REDIRECTS.has(status) || location === undefined) {
    throw new AnswerError(status, first.headers, first.body.toString('utf8'));
  }
  // A fresh request, built here, so that no header of the first one (the token above all) can carry over.
  const blob = await sendToFile(new URL(location, url), file, {
    headers: { accept: wanted.accept, 'user-agent': 'provider-runtask' },
    timeoutMs: within(BLOB_TIMEOUT_MS),
    signal,
    maxBytes: wanted.maxBytes,
  });
  if (blob.status < 200 || blob.status >= 300) {
    throw new Again(`${wanted.short} download link answered ${blob.status}`);
  }
  return (await stat(file)).size;
}

/** Downloads the file into `file`; resolves with its size in bytes. */
export async function fetchRunFile(wanted: RunFile, options: FetchRunFileOptions): Promise<number> {
  const { url, allowed, signal } = options;
  const { what } = wanted;
  if (!allowed.allows(url)) {
    throw new ApiError(
      `${what} URL ${loggableUrl(url)} is not on an allowed platform host (${allowed.describe()})`,
      {
        status: 0,
        hint: 'Add the platform host with --platform-host if this really is your platform.',
      },
    );
  }
  try {
    return await retrying(({ remainingMs }) => attempt(wanted, options, remainingMs), {
      policy: callbackPolicy(options.retry, options.deadlineMs),
      signal,
      interrupted: `${what} download was interrupted`,
      onRetry: (info) => options.onRetry?.({ ...info, delayMs: Math.round(info.delayMs) }),
    });
  } catch (error) {
    if (error instanceof TooLargeError) {
      throw new ApiError(`${what} (${loggableUrl(url)}) is larger than ${error.maxBytes} bytes`, {
        status: 0,
        hint: `The integrator refuses ${what} past that size.`,
      });
    }
    if (error instanceof AnswerError && !isTransient(error)) {
      const detail = serverDetail(error.body, error.status);
      throw new ApiError(
        `the platform refused ${what} request (${loggableUrl(url)}): ${error.status}${detail ? ` ${detail}` : ''}`,
        {
          status: error.status,
          serverDetail: detail,
          hint: `The run task access token may have expired (it lives 10 minutes) or may not read ${wanted.thisOne}.`,
        },
      );
    }
    const failure = failureOf(error);
    // A file that could not be written (its error holds the job's path, which is not the platform's business).
    if (error instanceof NetworkError && failure.kind === 'final') {
      throw new ApiError(`could not fetch ${what} (${loggableUrl(url)}): ${error.code}`, {
        status: 0,
        hint: `The integrator could not write ${what} into the job's folder: see its log and its disk.`,
      });
    }
    if (failure.kind === 'final') throw error;
    const reason = failure.kind === 'answer' ? `status ${failure.status}` : failure.reason;
    if (!isTransient(error)) {
      throw new ApiError(`could not fetch ${what} (${loggableUrl(url)}): ${reason}`, {
        status: 0,
        hint: `The platform host did not answer in TLS: check --platform-host and ${what} URL.`,
      });
    }
    throw new TimeoutError(`could not fetch ${what} (${loggableUrl(url)}) in time: ${reason}`, {
      hint: 'Check that the platform is reachable from the integrator.',
    });
  }
}
