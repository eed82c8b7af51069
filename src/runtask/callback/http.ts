/**
 * The integrator's outbound requests (callbacks, plan JSON) on node:http/https with keep-alive agents. An
 * integrator sends several requests per check, and under load they compete with acknowledging new requests
 * on the one event loop: got spends 0.4–0.8 ms of CPU per request where node:http spends about 0.1 ms
 * (measured on 2 cores; docs/performance.md). The registry client keeps got; this is the hot path only.
 * Never follows a redirect unless asked (`sendToFile` follows the blob link's), never retries by itself.
 */
import { createWriteStream } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
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
}

// A bounded pool per origin: a burst of callbacks queues for a connection instead of opening hundreds at once.
const MAX_SOCKETS = 32;
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  https: new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
};

/** Sends one request; resolves with the answer (any status), rejects with NetworkError or the abort. */
export function send(url: string | URL, options: RequestOptions): Promise<Answer> {
  return exchange(url, options, async (response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    return { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) };
  });
}

/**
 * GETs `url` into `file` (mode 0600), following redirects (without any credential: none is given here).
 * Resolves with the final status; the file is written only on 2xx.
 */
export async function sendToFile(
  url: string | URL,
  file: string,
  options: Omit<RequestOptions, 'method' | 'body'>,
  redirects = 5,
): Promise<{ status: number; location?: string | undefined }> {
  const result = await exchange(url, { ...options, method: 'GET' }, async (response) => {
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) {
      await pipeline(response, createWriteStream(file, { mode: 0o600 }));
      return { status };
    }
    response.resume();
    return { status, location: response.headers.location };
  });
  if (result.status >= 300 && result.status < 400 && result.location !== undefined && redirects > 0) {
    return sendToFile(new URL(result.location, url), file, options, redirects - 1);
  }
  return result;
}

function exchange<T>(
  url: string | URL,
  options: RequestOptions,
  read: (response: http.IncomingMessage) => Promise<T>,
): Promise<T> {
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
      if (error instanceof NetworkError) return reject(error);
      // An abort rejects with the signal's reason, an Error (AbortError) in every path that aborts.
      if (options.signal?.aborted) return reject(error instanceof Error ? error : new Error(String(error)));
      const err = error as NodeJS.ErrnoException;
      reject(new NetworkError(err.code ?? 'ERR_NETWORK', err.message));
    };
    request.on('error', fail);
    request.on('response', (response) => {
      response.on('error', fail);
      read(response).then((value) => {
        clearTimeout(timer);
        resolve(value);
      }, fail);
    });
    request.end(options.body);
  });
}
