/**
 * The emulator's small HTTP toolkit: a router with `:params`, JSON:API answers and errors, body reading
 * with a size limit, the request target as a 400 when it is malformed, and `requestListener`, which both of its
 * servers (the registry emulator and the run task platform) put around their handling so that nothing escapes
 * it, with what else the two share: their options of where to listen, their clock and error hook, and how they
 * listen (`listenLocally`). Handlers throw `HttpProblem` to answer with a JSON:API error document.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { listen, type Listening } from '../net/listen.js';
import type { ErrorObject } from '../terraform/api.js';
import { parseRequestTarget, type RequestTarget } from '../net/requestTarget.js';
import { JSONAPI } from '../terraform/names.js';

/** An error answer: status and JSON:API error objects. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly errors: ErrorObject[],
    readonly headers: Record<string, string> = {},
  ) {
    super(errors.map((e) => e.detail ?? e.title).join('; '));
  }
}

/** 404 in the platform's words: used both for "absent" and "you may not see it". */
export function notFound(): HttpProblem {
  return new HttpProblem(404, [{ status: '404', title: 'not found' }]);
}

/** 400 for a request that is not one a client could mean (a bad target, a bad escape). */
export function badRequest(detail: string): HttpProblem {
  return new HttpProblem(400, [{ status: '400', title: 'bad request', detail }]);
}

/** 422 pointing at the attribute that is wrong. */
export function invalid(pointer: string, detail: string): HttpProblem {
  return new HttpProblem(422, [{ status: '422', title: 'invalid attribute', detail, source: { pointer } }]);
}

/** Several 422 errors at once (the platform reports every problem it found). */
export function invalidMany(errors: { pointer: string; detail: string }[]): HttpProblem {
  return new HttpProblem(
    422,
    errors.map((e) => ({
      status: '422',
      title: 'invalid attribute',
      detail: e.detail,
      source: { pointer: e.pointer },
    })),
  );
}

/** What a fired `wrongHash` fault rule asks the handler to serve instead (see `RequestContext.wrongHash`). */
export interface WrongHash {
  scheme: 'h1' | 'zh';
  platform: string | undefined;
}

/** One request as the handlers see it. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: URLSearchParams;
  params: Record<string, string>;
  /** The request body (read by the server before routing, except for archivist uploads). */
  body: Buffer | undefined;
  /** Body bytes received, set by streaming handlers (uploads) for the request log. */
  bytesIn?: number;
  /** Set by a fired `wrongHash` fault rule: the consumer download response serves a wrong lock hash. */
  wrongHash?: WrongHash;
  /** Set by a fired `withoutKeys` fault rule: the consumer download response serves no signing key. */
  withoutKeys?: boolean;
}

/** A route's handler: answers on `ctx.res`, or throws `HttpProblem`. */
export type Handler = (ctx: RequestContext) => Promise<void> | void;

/** A registered route. */
export interface Route {
  method: string;
  regex: RegExp;
  names: string[];
  handler: Handler;
  /** Stream the body to the handler instead of buffering it (uploads). */
  streaming: boolean;
}

/** Matches method and path to a handler; `:name` matches one path segment. A trailing slash is allowed. */
export class Router {
  private readonly routes: Route[] = [];

  /** Registers a route. */
  on(method: string, pattern: string, handler: Handler, options: { streaming?: boolean } = {}): this {
    const names: string[] = [];
    const source = pattern.replace(/:([a-zA-Z_]+)/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    this.routes.push({
      method,
      regex: new RegExp(`^${source}/?$`),
      names,
      handler,
      streaming: options.streaming === true,
    });
    return this;
  }

  /** Finds the route for a request; `allowed` lists the methods of a path that matched another method. */
  match(
    method: string,
    path: string,
  ): { route: Route; params: Record<string, string> } | { route: undefined; allowed: string[] } {
    const allowed: string[] = [];
    for (const route of this.routes) {
      const m = route.regex.exec(path);
      if (!m) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = decodeParam(m[i + 1] ?? '');
      });
      return { route, params };
    }
    return { route: undefined, allowed };
  }
}

/** A path segment decoded; a bad escape is the client's mistake (400), not an error of the route. */
function decodeParam(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('A path segment has a percent-escape that is not valid (%XX, decoding to UTF-8).');
  }
}

/** The request's target (path and query); a target that is not a URL or has a bad escape is a 400. */
export function readTarget(req: IncomingMessage): RequestTarget {
  const result = parseRequestTarget(req.url, req.headers.host);
  if (!result.ok) throw badRequest(result.reason);
  return result.target;
}

/**
 * The request listener of a server: runs `handle`, and answers whatever escapes it with a 500 (or cuts the
 * connection when the answer has begun), telling `onError`. A request can end in an answer; it never ends the
 * process with an unhandled rejection.
 */
export function requestListener<Res extends ServerResponse>(
  handle: (req: IncomingMessage, res: Res) => Promise<void>,
  onError: ((error: unknown) => void) | undefined,
): (req: IncomingMessage, res: Res) => void {
  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      onError?.(error);
      if (res.headersSent) res.destroy();
      else sendProblem(res, new HttpProblem(500, [{ status: '500', title: 'internal server error' }]));
    });
  };
}

/** What both emulator servers take: where they listen, their clock, and who hears what they answer with a 500. */
export interface EmulatedServerOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The clock (ms); tests may pass a controllable one. */
  now?: () => number;
  /** Called with unexpected handler errors (answered 500). */
  onError?: (error: unknown) => void;
}

/** What both emulator servers are once they listen. */
export interface EmulatedServer {
  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Stops: requests in flight may finish (within `CLOSE_GRACE_MS`). */
  close(): Promise<void>;
}

/** Listens as both emulator servers do: on 127.0.0.1 and a free port unless told, keep-alive 5 s; `name` is for errors. */
export function listenLocally<Res extends typeof ServerResponse<IncomingMessage>>(
  server: Server<typeof IncomingMessage, Res>,
  options: EmulatedServerOptions,
  name: string,
): Promise<Listening> {
  server.keepAliveTimeout = 5_000;
  return listen(server, { host: options.host ?? '127.0.0.1', port: options.port ?? 0, name });
}

/** Sends a JSON:API document. */
export function sendDocument(res: ServerResponse, status: number, document: unknown): void {
  const body = JSON.stringify(document);
  res.writeHead(status, { 'content-type': JSONAPI, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Sends plain JSON (Terraform's registry protocol and service discovery are not JSON:API). */
export function sendJson(res: ServerResponse, status: number, document: unknown): void {
  const body = JSON.stringify(document);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Sends an error document. */
export function sendProblem(res: ServerResponse, problem: HttpProblem): void {
  const body = JSON.stringify({ errors: problem.errors });
  res.writeHead(problem.status, {
    ...problem.headers,
    'content-type': JSONAPI,
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** Reads a whole request body, refusing more than `limit` bytes with 413. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(limit: number): HttpProblem {
  return new HttpProblem(413, [
    { status: '413', title: 'payload too large', detail: `Request bodies are limited to ${limit} bytes.` },
  ]);
}

/** Parses a JSON body, answering 400 when it is not JSON. */
export function parseJson(body: Buffer | undefined): unknown {
  try {
    return JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
  } catch (error) {
    throw new HttpProblem(400, [
      {
        status: '400',
        title: 'bad request',
        detail: `The request body is not valid JSON: ${(error as Error).message}`,
      },
    ]);
  }
}
