/**
 * Archivist uploads: a file PUT to the upload link the API returned. Links carry their own secret, so these
 * requests go through a separate got instance that never sends the token; each link is registered as a secret with the output sink and never appears in a message (errors
 * name the file). 5xx, 408/429, resets and timeouts are retried with backoff; an upload link answering
 * 401/403/404 raises `LinkRefusedError`, so the caller can read the resource again for a fresh link.
 * A file is hashed while it streams and its last chunk is held back until the hash matches the verified one
 * (`readVerified`): a file changed since verification aborts the request, and the error is final.
 */
import got, { HTTPError, RequestError } from 'got';
import { ApiError } from '../errors.js';
import { FileChangedError, readVerified } from '../release/hashing.js';
import type { Output } from '../ui/output.js';
import { DEFAULT_BACKOFF, backoffDelay, interrupted, pause, type BackoffPolicy } from './backoff.js';
import { describeNetworkFailure, networkHint } from './networkFailure.js';

/**
 * What to send: a file streamed from disk with the size and SHA-256 it was verified with (checked again as
 * it streams), or bytes already in memory (the verified SHA256SUMS and .sig, which nothing can change).
 */
export type TransferBody = { path: string; bytes: number; sha256: string } | { data: Uint8Array };

/** Bytes sent so far of one upload. */
export interface TransferProgress {
  transferred: number;
  total: number;
}

/** What an upload needs besides its body. */
export interface TransferOptions {
  /** The archivist link (a secret). */
  url: string;
  /** The file's name, used in every message instead of the link. */
  filename: string;
  output: Output;
  signal?: AbortSignal | undefined;
  retry?: BackoffPolicy | undefined;
  /** Milliseconds without progress (bytes moving or an answer coming) before giving up (default 60 s). */
  timeoutMs?: number | undefined;
  /** Called before each retry with the attempt number and the reason. */
  onRetry?: ((attempt: number, reason: string) => void) | undefined;
}

/** The link was refused (401/403/404): expired, or already used; read the resource again for a new one. */
export class LinkRefusedError extends ApiError {}

const transport = got.extend({
  retry: { limit: 0 },
  headers: { 'user-agent': 'provider-cli', accept: 'application/json, */*' },
});
const RETRY_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504, 521, 522, 524]);
const MAX_RETRY_AFTER_MS = 120_000;

/** PUTs a file to an upload link: octet-stream, a Content-Length, no Authorization; retried on transient failures. */
export async function uploadFile(
  options: TransferOptions & { body: TransferBody; onProgress?: (progress: TransferProgress) => void },
): Promise<void> {
  const { body } = options;
  const total = 'data' in body ? body.data.length : body.bytes;
  const idle = options.timeoutMs ?? 60_000;
  await withRetries(options, 'uploading', async () => {
    const request = transport.put(options.url, {
      // A fresh stream per attempt (a body stream cannot be replayed): each attempt reads and hashes anew.
      body: 'data' in body ? Buffer.from(body.data) : readVerified(body.path, options.filename, body),
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(total) },
      // `socket` is an idle timeout: a transfer that stops moving fails (and is retried) instead of hanging.
      timeout: { connect: 10_000, socket: idle, response: idle },
      signal: options.signal,
      throwHttpErrors: true,
    });
    request.on('uploadProgress', (p) => options.onProgress?.({ transferred: p.transferred, total }));
    await request;
  });
}

/** Runs one transfer attempt after another until it succeeds or fails for good. */
async function withRetries<T>(options: TransferOptions, verb: string, attempt: () => Promise<T>): Promise<T> {
  const { output, filename, signal } = options;
  output.addSecret(options.url);
  output.addSecret(new URL(options.url).pathname);
  const policy = options.retry ?? DEFAULT_BACKOFF;
  for (let retry = 0; ; retry++) {
    try {
      output.debug(`→ ${verb} ${filename} (archivist link)`);
      return await attempt();
    } catch (error) {
      if (signal?.aborted) throw interrupted(`${verb} ${filename}`);
      const failure = classify(error, filename, verb);
      if (failure.transient === undefined || retry >= policy.limit) throw failure.error;
      options.onRetry?.(retry + 1, failure.transient);
      output.debug(`↻ retry ${retry + 1} of ${verb} ${filename} (${failure.transient})`);
      await pause(failure.waitMs ?? backoffDelay(retry + 1, policy), signal, `${verb} ${filename}`);
    }
  }
}

/** What went wrong: a final error, plus a reason and wait when it is worth another try. */
function classify(
  error: unknown,
  filename: string,
  verb: string,
): { error: Error; transient?: string; waitMs?: number } {
  // The file is not the one verified any more: another attempt would read the same changed file.
  if (error instanceof FileChangedError) return { error };
  if (error instanceof RequestError && error.cause instanceof FileChangedError) return { error: error.cause };
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    if (status === 401 || status === 403 || status === 404) {
      return {
        error: new LinkRefusedError(`The link for ${verb} ${filename} was refused: ${status}`, {
          status,
          hint: 'Archivist links expire (after 25 hours) and are single-purpose; run the same command again for fresh ones.',
          details: { file: filename, status },
        }),
      };
    }
    const final = new ApiError(`${capitalize(verb)} ${filename} failed: ${status}`, {
      status,
      hint:
        status >= 500 || status === 429
          ? 'The registry kept failing; run the same command again later to resume.'
          : 'The registry refused the file; run with --verbose to see the exchange.',
      details: { file: filename, status },
    });
    if (!RETRY_STATUSES.has(status)) return { error: final };
    return { error: final, transient: `status ${status}`, ...retryAfter(error) };
  }
  if (error instanceof RequestError) {
    const failure = describeNetworkFailure(error, error.code ?? error.name);
    const { reason } = failure;
    const final = new ApiError(`${capitalize(verb)} ${filename} failed: ${reason}`, {
      status: 0,
      hint: networkHint(
        failure,
        linkHost(error),
        'link',
        'Check the network, then run the same command again to resume.',
      ),
      details: { file: filename, reason },
    });
    // A server that does not speak TLS will not start to on the next attempt.
    return failure.kind === 'network' ? { error: final, transient: reason } : { error: final };
  }
  return { error: error instanceof Error ? error : new Error(String(error)) };
}

/** `Retry-After` (seconds or an HTTP date), capped; nothing when absent. */
function retryAfter(error: HTTPError): { waitMs?: number } {
  const header = error.response.headers['retry-after'];
  if (header === undefined) return {};
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) && ms >= 0 ? { waitMs: Math.min(ms, MAX_RETRY_AFTER_MS) } : {};
}

/** `host[:port]` of the link a request went to (never its path: that is the link's secret). */
function linkHost(error: RequestError): string {
  const url = error.options.url;
  return url === undefined ? 'the upload host' : new URL(url).host;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
