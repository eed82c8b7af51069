/**
 * Downloads of stored files through the registry's download links, as `terraform init` fetches them: a plain
 * GET with no Authorization header (the link's secret is the credential, and the link is never printed),
 * retried by the one retry policy (src/net/retry.ts: network errors, 408/429/5xx). A link answering 401/403/404
 * is replaced once when the caller says how to read a fresh one, as `terraform init` would get one. Archives
 * are hashed as they stream in, so memory stays flat; a small file is counted as it streams in and given up past
 * its cap, and so is an archive given a cap. Every attempt fails once its bytes stop coming for the idle timeout
 * (`timeoutMs`); a small file must also be whole within it (got's `request` timeout). An archive has no total
 * time (a large zip on a slow link may take long), but must keep moving: fewer than `MIN_BYTES_PER_WINDOW`
 * (1 KiB) in a window as long as the idle timeout gives the attempt up, so that a drip of a byte now and then
 * ends too. Both are retried as a timeout is.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import got, { HTTPError, RequestError, type Got } from 'got';
import { ProviderError } from '../errors.js';
import { BodyTooLargeError, documentTimeouts, readCapped, timeoutReason } from '../net/body.js';
import { failureOf, retrying, type Failure } from '../net/retry.js';
import type { Output } from '../ui/output.js';
import { describeNetworkFailure } from '../net/networkFailure.js';
import { DownloadError } from './downloadError.js';
import { IDENTITY, rangeOf, type RangeBytes } from './ranges.js';

export type { RangeBytes } from './ranges.js';

export { DownloadError } from './downloadError.js';

/**
 * A link that redirected to something that is not a web link (`file:`, `data:`, `ftp:`, or got's UNIX socket form
 * `http://unix:/path:/…`): never followed, never retried.
 */
export class NotWebLinkError extends DownloadError {
  constructor(
    what: string,
    /** What it redirected to, in words (`a file: link`), never the link itself. */
    readonly target: string,
  ) {
    super(`the download link of ${what} redirects to ${target}`, undefined, `redirects to ${target}`);
  }
}

/** A web link got fetches: http or https, and not got's UNIX socket form (host `unix`). */
export function webLinkKind(url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `a ${url.protocol} link`;
  return url.hostname === 'unix' ? 'a UNIX socket (http://unix:…) link' : undefined;
}

/** What a streamed download produced. */
export interface StreamDigest {
  /** Lower-case hex SHA-256 of the bytes received. */
  sha256: string;
  bytes: number;
}

/**
 * Reads the resource again for a fresh download link; undefined when it has none. A link it returns that is
 * the same as the refused one is not tried again.
 */
export type FreshLink = () => Promise<string | undefined>;

/** Fetches download links; create one per command run. */
export interface Downloader {
  /** The whole body of a small file (SHA256SUMS, its signature); gives up past `maxBytes`, as they stream in. */
  bytes(link: string, what: string, maxBytes?: number, refresh?: FreshLink): Promise<Buffer>;
  /** Streams a (possibly large) file into SHA-256 without keeping it. */
  digest(link: string, what: string, refresh?: FreshLink): Promise<StreamDigest>;
  /**
   * Streams a (possibly large) file into SHA-256 and into the file `path` (replaced; the caller removes it),
   * telling `onBytes` of what it received (from 0 again on a retry); with `maxBytes`, gives up past it.
   */
  toFile(
    link: string,
    what: string,
    path: string,
    refresh?: FreshLink,
    onBytes?: ByteProgress,
    maxBytes?: number,
  ): Promise<StreamDigest>;
  /**
   * Some bytes of a file by an HTTP Range request: `[start, end]` (inclusive), or with `start` negative its last
   * `-start` bytes. Gives the bytes and the file's whole size, or undefined when the host ignores ranges (it
   * answers 200 with the whole file, whose body is then not read).
   */
  range(link: string, what: string, start: number, end?: number): Promise<RangeBytes | undefined>;
  /** The file's body as it streams in, one attempt (its reader retries it whole), bound by the minimum rate. */
  body(link: string, what: string): AsyncIterable<Buffer>;
}

/**
 * Bytes received so far by the current attempt, and the size its response announced (its Content-Length;
 * undefined when it sends none, or sends the body encoded).
 */
export type ByteProgress = (received: number, total: number | undefined) => void;

const SMALL_FILE_LIMIT = 16 * 1024 * 1024;
/** The least an archive's transfer must bring in each window as long as the idle timeout. */
export const MIN_BYTES_PER_WINDOW = 1024;
/** Retries after the first attempt. */
const RETRIES = 3;
/** A link answering one of these has expired (or was never good): only a fresh link helps. */
const REFUSED_LINK = new Set([401, 403, 404]);

/** How a downloader is built. */
export interface DownloaderOptions {
  output: Output;
  signal?: AbortSignal | undefined;
  /** First backoff in ms (default 300); tests pass 0. */
  baseDelayMs?: number | undefined;
  /**
   * Milliseconds for the answer to start, between two of its bytes, for a small file to be whole, and the window
   * an archive must bring `MIN_BYTES_PER_WINDOW` in (default 60 s).
   */
  timeoutMs?: number | undefined;
}

/** Builds a downloader that never sends a token; every link it sees is registered as a secret. */
export function createDownloader(options: DownloaderOptions): Downloader {
  const { output, signal } = options;
  const idle = options.timeoutMs ?? 60_000;
  const plain: Got = got.extend({
    headers: { accept: '*/*', 'user-agent': 'provider-cli' },
    timeout: { connect: 10_000, response: idle, socket: idle },
    retry: { limit: 0 },
    signal,
  });
  const base = options.baseDelayMs ?? 300;
  /** Runs `once` on the link (then on a fresh one, once, if it is refused and `refresh` is given). */
  const attempt = async <T>(
    first: string,
    what: string,
    refresh: FreshLink | undefined,
    once: (link: string) => Promise<T>,
  ): Promise<T> => {
    let link = first;
    output.addSecret(link);
    try {
      return await retrying(() => once(link), {
        policy: { limit: RETRIES, baseDelayMs: base, maxDelayMs: base * 16 },
        failure: downloadFailure,
        signal,
        interrupted: `Interrupted while downloading ${what}`,
        onRetry: ({ attempt: n, reason }) =>
          output.debug(`↻ retry ${n} of the download of ${what} (${reason})`),
        refresh:
          refresh === undefined
            ? undefined
            : {
                when: refusedLink,
                limit: 1,
                run: async ({ error }) => {
                  const fresh = await refresh();
                  if (fresh === undefined || fresh === link) throw error;
                  output.addSecret(fresh);
                  link = fresh;
                  return undefined;
                },
              },
      });
    } catch (error) {
      // Our own errors (an interruption, the registry refusing the read of a fresh link) pass as they are.
      if (error instanceof ProviderError) throw error;
      throw toDownloadError(error, what);
    }
  };
  return {
    bytes(link, what, maxBytes = SMALL_FILE_LIMIT, refresh) {
      return attempt(link, what, refresh, async (link) => {
        output.debug(`→ GET ${link} (${what}, no token)`);
        try {
          return await readCapped(plain.stream(link, { timeout: documentTimeouts(idle) }), maxBytes);
        } catch (error) {
          if (error instanceof BodyTooLargeError) throw tooLarge(what, maxBytes);
          throw error;
        }
      });
    },
    digest(link, what, refresh) {
      return attempt(link, what, refresh, async (link) => {
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
        await pipeline(plain.stream(link), minimumRate(idle, what), sink);
        return { sha256: hash.digest('hex'), bytes };
      });
    },
    toFile(link, what, path, refresh, onBytes, maxBytes = Number.POSITIVE_INFINITY) {
      return attempt(link, what, refresh, (link) => {
        output.debug(`→ GET ${link} (${what}, no token, streamed to a temporary file)`);
        // Called for each chunk inside the stream's pipeline: a throw there ends the transfer.
        const counted: ByteProgress = (received, total) => {
          if (received > maxBytes) throw tooLarge(what, maxBytes);
          onBytes?.(received, total);
        };
        return streamToFile(plain.stream(link), path, counted, minimumRate(idle, what));
      });
    },
    range: (link, what, start, end) =>
      attempt(link, what, undefined, (link) => rangeOf(plain, output, { link, what, start, end, idle })),
    body: (link, what) => bodyOf(plain, output, { link, what, idle }),
  };
}

/** One attempt's body, streamed as it comes in (see `Downloader.body`). */
function bodyOf(
  plain: Got,
  output: Output,
  { link, what, idle }: { link: string; what: string; idle: number },
): AsyncIterable<Buffer> {
  output.addSecret(link);
  output.debug(`→ GET ${link} (${what}, no token, streamed)`);
  const guarded = minimumRate(idle, what)(plain.stream(link, IDENTITY));
  return (async function* converted() {
    try {
      yield* guarded;
    } catch (error) {
      throw toDownloadError(error, what);
    }
  })();
}

/**
 * A pipeline stage that gives the transfer up when fewer than `MIN_BYTES_PER_WINDOW` came in a window of
 * `windowMs`, counted from its first byte (before it, got's response timeout holds). A window is judged when a
 * chunk arrives; no chunk at all for `windowMs` is got's idle (`socket`) timeout.
 */
function minimumRate(windowMs: number, what: string) {
  return async function* moving(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    let started: number | undefined;
    let received = 0;
    for await (const chunk of source) {
      const now = Date.now();
      started ??= now;
      received += chunk.length;
      if (now - started >= windowMs) {
        if (received < MIN_BYTES_PER_WINDOW) throw new TooSlowError(what, windowMs, received);
        started = now;
        received = 0;
      }
      yield chunk;
    }
  };
}

/** A transfer that brought fewer than `MIN_BYTES_PER_WINDOW` in a window: retried as a timeout is. */
export class TooSlowError extends DownloadError {
  constructor(what: string, windowMs: number, received: number) {
    const reason = `too slow: ${received} bytes in ${windowMs / 1000} s, under ${MIN_BYTES_PER_WINDOW} bytes`;
    super(`downloading ${what} failed: ${reason}`, undefined, reason);
  }
}

/** The policy's reading, plus a transfer too slow to finish: no answer, as a timeout between two bytes is. */
function downloadFailure(error: unknown): Failure {
  if (error instanceof TooSlowError) return { kind: 'no-answer', reason: error.reason, tls: false };
  return failureOf(error);
}

/** A file past its cap: a DownloadError whose reason is `too large`, never retried. */
function tooLarge(what: string, maxBytes: number): DownloadError {
  return new DownloadError(`${what} is larger than ${maxBytes} bytes`, undefined, 'too large');
}

/** One attempt's body into the file `path` (each attempt starts the file again), hashed as it streams in. */
async function streamToFile(
  stream: ReturnType<Got['stream']>,
  path: string,
  onBytes: ByteProgress | undefined,
  guard: (source: AsyncIterable<Buffer>) => AsyncIterable<Buffer>,
): Promise<StreamDigest> {
  const hash = createHash('sha256');
  let bytes = 0;
  let total: number | undefined;
  stream.on('response', (response: IncomingMessage) => {
    total = announcedSize(response);
    onBytes?.(0, total);
  });
  await pipeline(
    stream,
    guard,
    async function* count(source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        hash.update(chunk);
        bytes += chunk.length;
        onBytes?.(bytes, total);
        yield chunk;
      }
    },
    createWriteStream(path),
  );
  return { sha256: hash.digest('hex'), bytes };
}

/** The size a response announces for its body as received: none when it is encoded (gzip's is another size). */
function announcedSize(response: IncomingMessage): number | undefined {
  const encoding = response.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return undefined;
  const length = Number(response.headers['content-length']);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

function toDownloadError(error: unknown, what: string): DownloadError {
  if (error instanceof DownloadError) return error;
  const redirected = notWebRedirect(error);
  if (redirected !== undefined) return new NotWebLinkError(what, redirected);
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    return new DownloadError(
      `the download link of ${what} answered ${status}`,
      status,
      `${status} ${error.response.statusMessage ?? ''}`.trim(),
    );
  }
  // Read as a stream, a failure of the connection (a TLS handshake with a plain-HTTP server) may come as Node's
  // own error, with its code, rather than got's RequestError.
  const code = (error as { code?: unknown } | undefined)?.code;
  if (!(error instanceof RequestError) && typeof code !== 'string') {
    return new DownloadError(`downloading ${what} failed: ${String(error)}`, undefined, String(error));
  }
  const network = describeNetworkFailure(error, timeoutReason(error) ?? (code as string));
  return new DownloadError(
    `downloading ${what} failed: ${network.reason}`,
    undefined,
    network.reason,
    network,
  );
}

/**
 * What a redirect that got refused to follow pointed at, when it is not a web link: got's error carries the 3xx
 * answer, whose Location is read here (got names such a refusal only by a generic code or message).
 */
function notWebRedirect(error: unknown): string | undefined {
  if (!(error instanceof RequestError) || error instanceof HTTPError) return undefined;
  const response = error.response;
  const location = response?.headers.location;
  if (response === undefined || response.statusCode < 300 || response.statusCode > 399 || !location)
    return undefined;
  try {
    return webLinkKind(new URL(location, response.url));
  } catch {
    return undefined;
  }
}

function refusedLink(failure: Failure): boolean {
  return failure.kind === 'answer' && REFUSED_LINK.has(failure.status);
}
