/**
 * Archivist uploads: a file PUT to the upload link the API returned. Links carry their own secret, so these
 * requests go through a separate got instance that never sends the token; each link is registered as a secret
 * with the output sink and never appears in a message (errors name the file). Transient failures are retried by
 * src/net/retry.ts (5xx, 408/425/429 with `Retry-After`, resets and timeouts); a link answering 401/403/404 is
 * replaced through `refreshLink` when the caller gives one (it reads the resource again), else it raises
 * `LinkRefusedError`. A file is checked while it streams and its last chunk is held back until it matches the
 * verified bytes (a `VerifiedFileSource`, src/verifiedFiles.ts: the hashing session that verified it, or proves
 * it as it reads it): a file changed since verification, or proven wrong, aborts the request, and the error is
 * final. A 2xx answer is success even when its
 * body is then cut short: the host has every byte, and the file is not sent again.
 */
import got, { HTTPError, RequestError } from 'got';
import { ApiError, ProviderError, VerificationError } from '../errors.js';
import type { VerifiedFileSource } from '../verifiedFiles.js';
import type { Output } from '../ui/output.js';
import { failureOf, judge, retrying, type Backoff, type Failure } from '../net/retry.js';
import { RESUME_HINT } from './httpErrors.js';
import { describeNetworkFailure, networkHint } from '../net/networkFailure.js';

/**
 * What to send: a file streamed from disk with the size and SHA-256 it was verified with, read through the
 * source that verified it (which checks it again as it streams), or bytes already in memory (the verified
 * SHA256SUMS and .sig, which nothing can change).
 */
export type TransferBody =
  { path: string; bytes: number; sha256: string; source: VerifiedFileSource } | { data: Uint8Array };

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
  retry?: Backoff | undefined;
  /** Milliseconds without progress (bytes moving or an answer coming) before giving up (default 60 s). */
  timeoutMs?: number | undefined;
  /** Called before each retry with the attempt number and the reason. */
  onRetry?: ((attempt: number, reason: string) => void) | undefined;
}

/** The link was refused (401/403/404): expired, or already used; read the resource again for a new one. */
export class LinkRefusedError extends ApiError {}

/** What an upload needs beyond the transfer options. */
export interface UploadOptions extends TransferOptions {
  body: TransferBody;
  onProgress?: ((progress: TransferProgress) => void) | undefined;
  /**
   * Replaces a refused link (at most twice): the fresh link, or undefined when the registry turns out to have
   * the file already (the upload then ends without sending it). Without it a refused link raises
   * LinkRefusedError.
   */
  refreshLink?: ((refused: LinkRefusedError) => Promise<string | undefined>) | undefined;
}

const transport = got.extend({
  retry: { limit: 0 },
  headers: { 'user-agent': 'provider-cli', accept: 'application/json, */*' },
});
/** A link answering one of these is expired or used up: another try of the same link is pointless. */
const REFUSED_LINK = new Set([401, 403, 404]);
// An expired link is replaced twice at most; a fresh link refused again is not an expiry problem.
const MAX_LINK_REFRESHES = 2;

/** PUTs a file to an upload link: octet-stream, a Content-Length, no Authorization; retried on transient failures. */
export async function uploadFile(options: UploadOptions): Promise<void> {
  const { body, output, filename } = options;
  const total = 'data' in body ? body.data.length : body.bytes;
  const idle = options.timeoutMs ?? 60_000;
  let url = options.url;
  const secret = (link: string): void => {
    output.addSecret(link);
    output.addSecret(new URL(link).pathname);
  };
  secret(url);
  const put = async (): Promise<void> => {
    output.debug(`→ uploading ${filename} (archivist link)`);
    // Fresh chunks per attempt (a body cannot be replayed): each attempt reads and checks anew. got writes an
    // async iterable's chunks one at a time, asking for the next once the last is written.
    const chunks = 'data' in body ? undefined : body.source.readVerified(body.path, options.filename, body);
    const request = transport.put(url, {
      body: 'data' in body ? Buffer.from(body.data) : chunks,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(total) },
      // `socket` is an idle timeout: a transfer that stops moving fails (and is retried) instead of hanging.
      timeout: { connect: 10_000, socket: idle, response: idle },
      signal: options.signal,
      throwHttpErrors: true,
    });
    // `.on` hands back the request itself, which is awaited on the next line.
    // got counts a chunk as transferred once the request's write of it called back (its bytes are in the
    // socket, the buffer is free): the file is read into those buffers again instead of new ones.
    // Reported once per new count, and the whole file once the host answers: its answer can come before the
    // callback of the request's last write (a host that answers at once), and a 2xx to a PUT of this
    // Content-Length means it has every byte.
    let reported = -1;
    const report = (transferred: number): void => {
      if (transferred <= reported) return;
      reported = transferred;
      options.onProgress?.({ transferred, total });
    };
    void request.on('uploadProgress', (p) => {
      chunks?.sent(p.transferred);
      report(p.transferred);
    });
    try {
      await request;
    } catch (error) {
      // A 2xx whose body was then cut short (a reset, a timeout inside the answer) is still the host saying it
      // has every byte: sending the file again would only write it twice.
      if (!answeredSuccess(error)) throw error;
    }
    report(total);
  };
  const { refreshLink } = options;
  try {
    await retrying(put, {
      policy: options.retry,
      failure: uploadFailure,
      signal: options.signal,
      interrupted: { message: `Interrupted while uploading ${filename}`, hint: RESUME_HINT },
      onRetry: ({ attempt, reason }) => {
        options.onRetry?.(attempt, reason);
        output.debug(`↻ retry ${attempt} of uploading ${filename} (${reason})`);
      },
      refresh:
        refreshLink === undefined
          ? undefined
          : {
              when: (failure) => refusedStatus(failure) !== undefined,
              limit: MAX_LINK_REFRESHES,
              run: async ({ failure }) => {
                const fresh = await refreshLink(linkRefused(refusedStatus(failure) ?? 0, filename));
                if (fresh === undefined) return { value: undefined };
                secret(fresh);
                url = fresh;
                return undefined;
              },
            },
    });
  } catch (error) {
    throw toUploadError(error, filename);
  }
}

/**
 * The policy's reading, plus what is final for an upload: a file whose bytes do not verify (changed since it was
 * verified, or proven wrong by the read that uploads it). Another attempt would read the same bytes.
 */
function uploadFailure(error: unknown): Failure {
  if (error instanceof VerificationError) return { kind: 'final' };
  if (error instanceof RequestError && error.cause instanceof VerificationError) return { kind: 'final' };
  // The body's own source failed (a mirror's origin): judged as that source's failure, and never as a refusal
  // of the upload link: a refusal by the source is final, its passing trouble retried (the body read again).
  if (error instanceof RequestError && error.cause instanceof ProviderError) {
    const failure = failureOf(error.cause);
    return judge(failure, true).retry ? failure : { kind: 'final' };
  }
  return failureOf(error);
}

/**
 * An error that came after a 2xx answer to the PUT (got carries the answer it was reading), and not from the
 * file: a host that answered before the body was whole does not make a changed file's bytes the verified ones.
 */
function answeredSuccess(error: unknown): boolean {
  if (!(error instanceof RequestError) || error instanceof HTTPError) return false;
  if (error.cause instanceof VerificationError) return false;
  const status = error.response?.statusCode;
  return status !== undefined && status >= 200 && status < 300;
}

/** The status of an answer that refuses the link itself (401/403/404), else undefined. */
function refusedStatus(failure: Failure): number | undefined {
  return failure.kind === 'answer' && REFUSED_LINK.has(failure.status) ? failure.status : undefined;
}

function linkRefused(status: number, filename: string): LinkRefusedError {
  return new LinkRefusedError(`The link for uploading ${filename} was refused: ${status}`, {
    status,
    hint: 'Archivist links expire (after 25 hours) and are single-purpose; run the same command again for fresh ones.',
    details: { file: filename, status },
  });
}

/** The error an upload ends with: named by the file, never the link. */
function toUploadError(error: unknown, filename: string): Error {
  if (error instanceof VerificationError) return error;
  if (error instanceof RequestError && error.cause instanceof ProviderError) return error.cause;
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    if (REFUSED_LINK.has(status)) return linkRefused(status, filename);
    return new ApiError(`Uploading ${filename} failed: ${status}`, {
      status,
      hint:
        status >= 500 || status === 429
          ? 'The registry kept failing; run the same command again later to resume.'
          : 'The registry refused the file; run with --verbose to see the exchange.',
      details: { file: filename, status },
    });
  }
  if (error instanceof RequestError) {
    const failure = describeNetworkFailure(error, error.code ?? error.name);
    const { reason } = failure;
    return new ApiError(`Uploading ${filename} failed: ${reason}`, {
      status: 0,
      hint: networkHint(
        failure,
        linkHost(error),
        'link',
        'Check the network, then run the same command again to resume.',
      ),
      details: { file: filename, reason },
    });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** `host[:port]` of the link a request went to (never its path: that is the link's secret). */
function linkHost(error: RequestError): string {
  const url = error.options.url;
  return url === undefined ? 'the upload host' : new URL(url).host;
}
