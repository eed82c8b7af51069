/**
 * The one HTTP layer for the registry API, on got: base URL, bearer token for the API host's origin only,
 * JSON:API headers, timeouts, retries of the requests that may be repeated (src/net/retry.ts: 429/5xx/network,
 * `Retry-After` and `X-RateLimit-Reset` honoured; a create is not sent again here, publish reconciles it),
 * JSON:API errors turned into ApiError with a hint, `--verbose` tracing with secrets redacted, and every
 * document read parsed with the schema its caller declares (an answer of another shape: exit 4).
 */
import got, { HTTPError, RequestError, type Got, type Method } from 'got';
import type { ApiHost } from '../config/index.js';
import { InterruptedError } from '../errors.js';
import { bearerFor } from '../net/bearer.js';
import { retrying, type Backoff } from '../net/retry.js';
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
  /** Milliseconds: connect (default 10 s) and response (default 60 s). */
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
      timeout: { connect: options.timeout?.connect ?? 10_000, response: options.timeout?.response ?? 60_000 },
      signal: options.signal,
      responseType: 'text',
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
        afterResponse: [
          (response) => {
            const started = response.request.options.context.started;
            const ms = typeof started === 'number' ? ` ${Date.now() - started}ms` : '';
            output.debug(`← ${response.statusCode} ${response.request.options.method} ${response.url}${ms}`);
            return response;
          },
        ],
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
        this.got(url, {
          method,
          ...(options.json === undefined
            ? {}
            : { body: JSON.stringify(options.json), headers: { 'content-type': JSONAPI } }),
        });
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

  /** The same client, whose requests also stop when `signal` aborts (reads that may be dropped). */
  withSignal(signal: AbortSignal): RegistryClient {
    const own = this.options.signal;
    return new RegistryClient({ ...this.options, signal: own ? AbortSignal.any([own, signal]) : signal });
  }

  private translate(error: unknown, method: string, url: URL): Error {
    if (this.options.signal?.aborted)
      return new InterruptedError(`Interrupted during ${method} ${url.pathname}`);
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
    if (error instanceof RequestError) {
      const failure = describeNetworkFailure(error, error.code ?? error.message);
      return unreachableError(this.options.apiHost, method, url.pathname, failure);
    }
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Builds the registry client. */
export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  return new RegistryClient(options);
}
