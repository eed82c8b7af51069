/**
 * The one HTTP layer for the registry API, on got: base URL, bearer token for the API host's origin only,
 * JSON:API headers, timeouts, retries of the requests that may be repeated (src/net/retry.ts: 429/5xx/network,
 * `Retry-After` and `X-RateLimit-Reset` honoured; a create is not sent again here, publish reconciles it),
 * JSON:API errors turned into ApiError with a hint, `--verbose` tracing with secrets redacted, and every
 * document read parsed with the schema its caller declares (an answer of another shape: exit 4). Every answer is
 * a JSON document read whole: it is counted as it streams in and given up past 16 MiB (src/net/body.ts), and
 * each attempt has the documents' timeouts: its answer must start, keep coming (no gap between two bytes) and be
 * whole within the response timeout (PROVIDER_HTTP_TIMEOUT; a stalled or dripping answer ends, and is retried).
 */
import got, { HTTPError, RequestError, type Got, type Method, type PlainResponse } from 'got';
import type { ApiHost } from '../config/index.js';
import { InterruptedError, UnexpectedAnswerError } from '../errors.js';
import { bearerFor } from '../net/bearer.js';
import { BodyTooLargeError, documentTimeouts, readCapped, timeoutReason } from '../net/body.js';
import { AnswerError, retrying, type Backoff } from '../net/retry.js';
import type { z } from 'zod';
import type { Output } from '../ui/output.js';
import { parseAnswer, type Answer } from './answers.js';
import { toApiError, unreachableError } from './httpErrors.js';
import { describeNetworkFailure } from '../net/networkFailure.js';
import { documentOf, listOf } from './schemas.js';

import { JSONAPI } from '../terraform/names.js';

/** How to build a client. Only `apiHost`, `token` and `output` are required. */
export interface RegistryClientOptions {
  apiHost: ApiHost;
  token: string;
  output: Output;
  signal?: AbortSignal | undefined;
  userAgent?: string;
  /** Retries after the first attempt (default 4), first backoff (default 500 ms), backoff cap (default 8 s). */
  retry?: Partial<Backoff> | undefined;
  /**
   * Milliseconds: connect (default 10 s), and `response` (default 60 s): for each answer to start, between two
   * of its bytes, and for it to be whole.
   */
  timeout?: { connect?: number; response?: number };
}

/** Per-request options. */
export interface RequestOptions {
  searchParams?: Record<string, string | number>;
  /** A JSON:API body; sets `Content-Type: application/vnd.api+json`. */
  json?: unknown;
}

/** Methods that may be sent again after a lost answer (got's list); a POST or PATCH is not. */
const IDEMPOTENT = new Set<string>(['GET', 'PUT', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE']);
const PAGE_SIZE = 100;
/** A registry answer is a JSON document of some KiB (a page of 100 items); anything past this is not one. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const MAX_PAGES = 10_000;

/** A small, typed client for the registry API. */
export class RegistryClient {
  /** The API origin, e.g. `https://app.terraform.io`. */
  readonly baseUrl: string;
  private readonly got: Got;

  constructor(private readonly options: RegistryClientOptions) {
    const { apiHost, token, output } = options;
    this.baseUrl = apiHost.baseUrl;
    output.addSecret(token);
    // The token goes to the API origin and nowhere else, redirects included (src/net/bearer.ts).
    const authorize = bearerFor(apiHost.baseUrl, token);
    this.got = got.extend({
      headers: { accept: JSONAPI, 'user-agent': options.userAgent ?? 'provider-cli' },
      timeout: {
        ...documentTimeouts(options.timeout?.response ?? 60_000),
        connect: options.timeout?.connect ?? 10_000,
      },
      signal: options.signal,
      // Retries are src/net/retry.ts's, around each call (see `exchange`), never got's own.
      retry: { limit: 0 },
      hooks: {
        beforeRequest: [
          (request) => {
            authorize(request.url, request.headers);
            request.context.started = Date.now();
            output.debug(`→ ${request.method} ${String(request.url)}`);
          },
        ],
        beforeRedirect: [(request) => authorize(request.url, request.headers)],
      },
    });
  }

  /**
   * Sends one request whose answer is not read (a DELETE): any 2xx with an empty or JSON body is success; a body
   * of anything else (a proxy's HTML page) is not taken for one.
   */
  async request(method: Method, path: string, options: RequestOptions = {}): Promise<void> {
    parseAnswer(this.options.apiHost, await this.exchange(method, path, options), undefined);
  }

  /** Sends one request and returns its document, parsed with `schema` (another shape: UnexpectedAnswerError). */
  async read<S extends z.ZodType>(
    method: Method,
    path: string,
    schema: S,
    options: RequestOptions = {},
  ): Promise<z.output<S>> {
    return parseAnswer(this.options.apiHost, await this.exchange(method, path, options), schema);
  }

  /**
   * Creates a resource: POSTs the JSON:API document `{"data":{"type","attributes"}}` to `path` and returns the
   * created resource, its answer parsed by `resource`.
   */
  async create<S extends z.ZodType>(
    path: string,
    type: string,
    attributes: object,
    resource: S,
  ): Promise<z.output<S>> {
    const document = await this.read('POST', path, documentOf(resource), {
      json: { data: { type, attributes } },
    });
    return document.data as z.output<S>;
  }

  /** GET that must return a document of the shape `schema` describes. */
  async get<S extends z.ZodType>(
    path: string,
    schema: S,
    options: RequestOptions = {},
  ): Promise<z.output<S>> {
    return this.read('GET', path, schema, options);
  }

  /** Reads every page of a list (page[size]=100), each page parsed with `item` as its items' schema. */
  async list<S extends z.ZodType>(
    path: string,
    item: S,
    searchParams: Record<string, string | number> = {},
  ): Promise<z.output<S>[]> {
    const pageSchema = listOf(item);
    const items: z.output<S>[] = [];
    let page = 1;
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const doc = await this.get(path, pageSchema, {
        searchParams: { ...searchParams, 'page[number]': page, 'page[size]': PAGE_SIZE },
      });
      items.push(...doc.data);
      // `meta.pagination` is part of the page's schema: `next-page` null is the last page, not a missing field.
      const next = doc.meta.pagination['next-page'];
      if (next === null || next <= page) break;
      page = next;
    }
    return items;
  }

  /**
   * One request, retried as configured when its method may be repeated; a refusal or no answer is thrown as
   * ApiError, an answer returned.
   */
  private async exchange(method: Method, path: string, options: RequestOptions): Promise<Answer> {
    const url = new URL(path, this.baseUrl);
    for (const [key, value] of Object.entries(options.searchParams ?? {}))
      url.searchParams.set(key, String(value));
    const { output, signal } = this.options;
    try {
      const send = () =>
        this.receive(url, method, options.json === undefined ? undefined : JSON.stringify(options.json));
      const response = await retrying(send, {
        policy: this.options.retry,
        idempotent: IDEMPOTENT.has(method.toUpperCase()),
        signal,
        interrupted: `Interrupted during ${method} ${url.pathname}`,
        onRetry: ({ attempt, reason }) =>
          output.debug(`↻ retry ${attempt} of ${method} ${url.toString()} (${reason})`),
      });
      return {
        method,
        path: url.pathname,
        status: response.statusCode,
        contentType: response.headers['content-type'],
        body: response.body,
      };
    } catch (error) {
      throw this.translate(error, method, url);
    }
  }

  /**
   * One attempt: its answer read whole under MAX_ANSWER_BYTES, as it streams in. An answer that is not a success
   * (a 2xx, or 304) is thrown as AnswerError with its body, for the retry policy (its status, Retry-After) and
   * the message (the server's own words).
   */
  private async receive(
    url: URL,
    method: Method,
    json: string | undefined,
  ): Promise<{ statusCode: number; headers: PlainResponse['headers']; body: string }> {
    const stream = this.got.stream(url, {
      method,
      throwHttpErrors: false,
      ...(json === undefined ? {} : { body: json, headers: { 'content-type': JSONAPI } }),
    });
    // A stream without a body to send waits to be written to, but for a GET or HEAD: a DELETE sends none.
    const verb = method.toUpperCase();
    if (json === undefined && verb !== 'GET' && verb !== 'HEAD') stream.end();
    let response: PlainResponse | undefined;
    stream.once('response', (received: PlainResponse) => {
      response = received;
      const started = received.request.options.context.started;
      const ms = typeof started === 'number' ? ` ${Date.now() - started}ms` : '';
      this.options.output.debug(`← ${received.statusCode} ${method} ${received.url}${ms}`);
    });
    const body = (await readCapped(stream, MAX_ANSWER_BYTES)).toString('utf8');
    const { statusCode, headers } = response!;
    if ((statusCode < 200 || statusCode > 299) && statusCode !== 304)
      throw new AnswerError(statusCode, headers, body);
    return { statusCode, headers, body };
  }

  /** The same client, whose requests also stop when `signal` aborts (reads that may be dropped). */
  withSignal(signal: AbortSignal): RegistryClient {
    const own = this.options.signal;
    return new RegistryClient({ ...this.options, signal: own ? AbortSignal.any([own, signal]) : signal });
  }

  private translate(error: unknown, method: string, url: URL): Error {
    if (this.options.signal?.aborted)
      return new InterruptedError(`Interrupted during ${method} ${url.pathname}`);
    if (error instanceof AnswerError) {
      const { apiHost, output } = this.options;
      return toApiError(apiHost, method, url.pathname, error.status, error.body, output.env);
    }
    if (error instanceof BodyTooLargeError) {
      return new UnexpectedAnswerError(
        `${method} ${url.pathname} on ${this.options.apiHost.baseUrl}: the answer is larger than 16 MiB, more than any registry document`,
        {
          status: 200,
          hint: 'Something else than the registry API answers at this address (a proxy, a download); check the hostname.',
          details: { method, path: url.pathname, limit: MAX_ANSWER_BYTES },
        },
      );
    }
    if (error instanceof HTTPError) {
      return toApiError(
        this.options.apiHost,
        method,
        url.pathname,
        error.response.statusCode,
        String(error.response.body ?? ''),
        this.options.output.env,
      );
    }
    // Read as a stream, a failure of the connection may come as Node's own error, with its code.
    const code = (error as { code?: unknown } | undefined)?.code;
    if (error instanceof RequestError || typeof code === 'string') {
      const reason = timeoutReason(error) ?? (typeof code === 'string' ? code : (error as Error).message);
      const failure = describeNetworkFailure(error, reason);
      return unreachableError(this.options.apiHost, method, url.pathname, failure);
    }
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Builds the registry client. */
export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  return new RegistryClient(options);
}
