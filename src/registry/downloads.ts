/**
 * Downloads of stored files through the registry's download links, as `terraform init` fetches them: a plain
 * GET with no Authorization header (the link's secret is the credential, and the link is never printed),
 * retried on network errors and 5xx. Archives are hashed as they stream in, so memory stays flat.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import got, { HTTPError, RequestError, type Got } from 'got';
import { InterruptedError } from '../errors.js';
import type { Output } from '../ui/output.js';
import { describeNetworkFailure, type NetworkFailure } from './networkFailure.js';

/** Why a download failed: an HTTP status the link answered, or a network problem (`status` undefined). */
export class DownloadError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly reason: string,
    /** For a network problem: what kind (a link to a server that does not speak TLS is no passing trouble). */
    readonly network?: NetworkFailure,
  ) {
    super(message);
  }
}

/** What a streamed download produced. */
export interface StreamDigest {
  /** Lower-case hex SHA-256 of the bytes received. */
  sha256: string;
  bytes: number;
}

/** Fetches download links; create one per command run. */
export interface Downloader {
  /** The whole body of a small file (SHA256SUMS, its signature); refuses more than `maxBytes`. */
  bytes(link: string, what: string, maxBytes?: number): Promise<Buffer>;
  /** Streams a (possibly large) file into SHA-256 without keeping it. */
  digest(link: string, what: string): Promise<StreamDigest>;
}

const SMALL_FILE_LIMIT = 16 * 1024 * 1024;
const ATTEMPTS = 4;
const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/** Builds a downloader that never sends a token; every link it sees is registered as a secret. */
export function createDownloader(options: {
  output: Output;
  signal?: AbortSignal | undefined;
  /** First backoff in ms (default 300); tests pass 0. */
  baseDelayMs?: number;
}): Downloader {
  const { output, signal } = options;
  const plain: Got = got.extend({
    headers: { accept: '*/*', 'user-agent': 'provider-cli' },
    timeout: { connect: 10_000, response: 60_000, socket: 60_000 },
    retry: { limit: 0 },
    signal,
  });
  const attempt = async <T>(link: string, what: string, once: () => Promise<T>): Promise<T> => {
    output.addSecret(link);
    for (let n = 1; ; n++) {
      try {
        return await once();
      } catch (error) {
        if (signal?.aborted) throw new InterruptedError(`Interrupted while downloading ${what}`);
        const failure = toDownloadError(error, what);
        const retryable =
          failure.status === undefined
            ? failure.network?.kind !== 'plain-http' && failure.network?.kind !== 'tls'
            : RETRY_STATUSES.has(failure.status);
        if (!retryable || n >= ATTEMPTS) throw failure;
        output.debug(`↻ retry ${n} of the download of ${what} (${failure.reason})`);
        await delay((options.baseDelayMs ?? 300) * 2 ** (n - 1));
      }
    }
  };
  return {
    bytes(link, what, maxBytes = SMALL_FILE_LIMIT) {
      return attempt(link, what, async () => {
        output.debug(`→ GET ${link} (${what}, no token)`);
        const body = await plain.get(link, { responseType: 'buffer' }).buffer();
        if (body.length > maxBytes) {
          throw new DownloadError(`${what} is larger than ${maxBytes} bytes`, undefined, 'too large');
        }
        return body;
      });
    },
    digest(link, what) {
      return attempt(link, what, async () => {
        output.debug(`→ GET ${link} (${what}, no token, streamed)`);
        const hash = createHash('sha256');
        let bytes = 0;
        const sink = new Writable({
          write(chunk: Buffer, _encoding, done) {
            hash.update(chunk);
            bytes += chunk.length;
            done();
          },
        });
        await pipeline(plain.stream(link), sink);
        return { sha256: hash.digest('hex'), bytes };
      });
    },
  };
}

function toDownloadError(error: unknown, what: string): DownloadError {
  if (error instanceof DownloadError) return error;
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    return new DownloadError(
      `the download link of ${what} answered ${status}`,
      status,
      `${status} ${error.response.statusMessage ?? ''}`.trim(),
    );
  }
  if (!(error instanceof RequestError)) {
    return new DownloadError(`downloading ${what} failed: ${String(error)}`, undefined, String(error));
  }
  const network = describeNetworkFailure(error, error.code ?? error.message);
  return new DownloadError(
    `downloading ${what} failed: ${network.reason}`,
    undefined,
    network.reason,
    network,
  );
}

function delay(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}
