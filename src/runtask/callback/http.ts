/**
 * The integrator's outbound requests (callbacks, plan JSON) on node:http/https with keep-alive agents. An
 * integrator sends several requests per check, and under load they compete with acknowledging new requests
 * on the one event loop: got spends 0.4–0.8 ms of CPU per request where node:http spends about 0.1 ms
 * (measured on 2 cores; docs/performance.md). The registry client keeps got; this is the hot path only.
 * Never follows a redirect unless asked (`sendToFile` follows the blob link's), never retries by itself; an
 * answer may be bounded in size (`maxBytes`), and one that goes past the bound is cut off with `TooLargeError`.
 */
import { createWriteStream } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A request that got no answer: connection refused or reset, DNS, timeout (`code` as Node names it). */
export class NetworkError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** An answer whose body went past the `maxBytes` of its request: the rest was not read. */
export class TooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes`);
  }
}

/** An answer, read to the end. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** What to send. */
export interface RequestOptions {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** For the whole exchange, from the request to the last byte of the answer. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** The largest body read (default: no bound). */
  maxBytes?: number | undefined;
}

// A bounded pool per origin: a burst of callbacks queues for a connection instead of opening hundreds at once.
const MAX_SOCKETS = 32;
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  https: new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
};

/** Sends one request; resolves with the answer (any status), rejects with NetworkError or the abort. */
export function send(url: string | URL, options: RequestOptions): Promise<Answer> {
  return exchange(url, options, async (response, counter) => {
    const chunks: Buffer[] = [];
    for await (const chunk of response) {
      counter.count((chunk as Buffer).length);
      chunks.push(chunk as Buffer);
    }
    return { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) };
  });
}

/**
 * GETs `url` into `file` (mode 0600), following redirects (without any credential: none is given here).
 * Resolves with the final status; the file is written only on 2xx. `timeoutMs` is for all the hops together.
 */
export function sendToFile(
  url: string | URL,
  file: string,
  options: Omit<RequestOptions, 'method' | 'body'>,
  redirects = 5,
): Promise<{ status: number; location?: string | undefined }> {
  return followToFile(url, file, options, Date.now() + options.timeoutMs, redirects);
}

/** One hop of `sendToFile`, given what is left until `until` (ms since the epoch). */
async function followToFile(
  url: string | URL,
  file: string,
  options: Omit<RequestOptions, 'method' | 'body'>,
  until: number,
  redirects: number,
): Promise<{ status: number; location?: string | undefined }> {
  const hop = { ...options, method: 'GET', timeoutMs: Math.max(1, until - Date.now()) };
  const result = await exchange(url, hop, async (response, counter) => {
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) {
      const bounded = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          try {
            counter.count(chunk.length);
            done(null, chunk);
          } catch (error) {
            done(error as Error);
          }
        },
      });
      await pipeline(response, bounded, createWriteStream(file, { mode: 0o600 }));
      return { status };
    }
    response.resume();
    return { status, location: response.headers.location };
  });
  if (result.status >= 300 && result.status < 400 && result.location !== undefined && redirects > 0) {
    return followToFile(new URL(result.location, url), file, options, until, redirects - 1);
  }
  return result;
}

/** Adds up the bytes of a body; throws `TooLargeError` once they pass `maxBytes`, and keeps it as `exceeded`. */
interface ByteCounter {
  count: (bytes: number) => void;
  exceeded?: TooLargeError;
}

function byteCounter(maxBytes: number | undefined): ByteCounter {
  let total = 0;
  const counter: ByteCounter = {
    count(bytes) {
      total += bytes;
      if (maxBytes === undefined || total <= maxBytes) return;
      counter.exceeded = new TooLargeError(maxBytes);
      throw counter.exceeded;
    },
  };
  return counter;
}

function exchange<T>(
  url: string | URL,
  options: RequestOptions,
  read: (response: http.IncomingMessage, counter: ByteCounter) => Promise<T>,
): Promise<T> {
  const counter = byteCounter(options.maxBytes);
  const target = typeof url === 'string' ? new URL(url) : url;
  const secure = target.protocol === 'https:';
  const headers = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise<T>((resolve, reject) => {
    const request = (secure ? https : http).request(target, {
      method: options.method,
      headers,
      agent: secure ? agents.https : agents.http,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const timer = setTimeout(() => {
      request.destroy(new NetworkError('ETIMEDOUT', `no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    const fail = (error: unknown): void => {
      clearTimeout(timer);
      if (counter.exceeded !== undefined) {
        // The rest of the body is not wanted: the connection is dropped rather than read (its own error,
        // "aborted", may come first).
        request.destroy();
        return reject(counter.exceeded);
      }
      if (error instanceof NetworkError) return reject(error);
      // An abort rejects with the signal's reason, an Error (AbortError) in every path that aborts.
      if (options.signal?.aborted) return reject(error instanceof Error ? error : new Error(String(error)));
      const err = error as NodeJS.ErrnoException;
      reject(new NetworkError(err.code ?? 'ERR_NETWORK', err.message));
    };
    request.on('error', fail);
    request.on('response', (response) => {
      response.on('error', fail);
      read(response, counter).then((value) => {
        clearTimeout(timer);
        resolve(value);
      }, fail);
    });
    request.end(options.body);
  });
}
