/**
 * `startEmulator`: the local platform on a real HTTP port. Requests pass through the request log, the fault
 * rules and the rate limiter, then the router; handlers answer JSON:API documents or throw `HttpProblem`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { App, AppSettings } from './app.js';
import { FaultEngine, type FaultRule } from './faults.js';
import {
  HttpProblem,
  Router,
  readBody,
  readTarget,
  requestListener,
  sendProblem,
  type RequestContext,
} from './http.js';
import { LinkSigner } from './links.js';
import { RateLimiter } from './rateLimit.js';
import { RequestLog, type RequestRecord } from './requestLog.js';
import { Shaper } from './shaping.js';
import { registerArchivistRoutes } from './routes/archivist.js';
import { registerConsumerRoutes } from './routes/consumer.js';
import { registerGpgKeyRoutes } from './routes/gpgKeys.js';
import { registerPlatformRoutes } from './routes/platforms.js';
import { registerProviderRoutes } from './routes/providers.js';
import { registerVersionRoutes } from './routes/versions.js';
import { Store, StoreWriteError } from './state.js';
import type { RequestTarget } from '../net/requestTarget.js';

/** How to start an emulator. Everything is optional. */
export interface EmulatorOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Where state lives; default a fresh temporary folder, removed on close. */
  dataDir?: string;
  /** The organization (and namespace) created on first start. Default `example-org`. */
  organization?: string;
  flagDelayMs?: number;
  /** Requests per second per token; absent means no limit. */
  rateLimit?: number;
  faults?: FaultRule[];
  faultSeed?: number;
  requestLogPath?: string;
  strict?: boolean;
  /** Lifetime of archivist links (default 25 hours, as documented). */
  linkTtlMs?: number;
  /** Milliseconds every request waits before it is handled (a network round trip). */
  latencyMs?: number;
  /** Bytes per second per connection for upload and download bodies (a network's per-flow bandwidth). */
  bandwidth?: number;
  /** The clock (ms); tests may pass a controllable one. */
  now?: () => number;
  /** Called with unexpected handler errors (answered 500). */
  onError?: (error: unknown) => void;
}

/** A running emulator. */
export interface Emulator {
  url: string;
  organization: string;
  ownerToken: string;
  memberToken: string;
  /** A valid token of another organization. */
  outsiderToken: string;
  dataDir: string;
  store: Store;
  faults: FaultEngine;
  requestLog: RequestLog;
  close(): Promise<void>;
}

const API_BODY_LIMIT = 1024 * 1024;
const TWENTY_FIVE_HOURS = 25 * 3600 * 1000;

/** Starts an emulator and resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'provider-emulator-'));
  const store = Store.open(dataDir, options.organization ?? 'example-org');
  const now = options.now ?? Date.now;
  const settings: AppSettings = { flagDelayMs: options.flagDelayMs ?? 0, strict: options.strict === true };
  let baseUrl = '';
  const app: App = {
    store,
    links: new LinkSigner(store.data.linkKey, options.linkTtlMs ?? TWENTY_FIVE_HOURS),
    settings,
    now,
    baseUrl: () => baseUrl,
    shaper: new Shaper({ latencyMs: options.latencyMs, bytesPerSecond: options.bandwidth }),
  };
  const latencyMs = options.latencyMs ?? 0;
  const router = new Router();
  registerProviderRoutes(router, app);
  registerVersionRoutes(router, app);
  registerPlatformRoutes(router, app);
  registerGpgKeyRoutes(router, app);
  registerArchivistRoutes(router, app);
  registerConsumerRoutes(router, app);
  router.on('GET', '/api/v2/ping', (ctx) => {
    ctx.res.writeHead(204, { 'tfp-api-version': '2.6', 'tfp-appname': 'provider emulate' }).end();
  });
  router.on('GET', '/healthz', (ctx) => {
    ctx.res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
  });

  const faults = new FaultEngine(options.faults ?? [], options.faultSeed ?? 1);
  const limiter = options.rateLimit ? new RateLimiter(options.rateLimit) : undefined;
  const requestLog = new RequestLog(options.requestLogPath, undefined, (error) => options.onError?.(error));

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = now();
    const method = req.method ?? 'GET';
    // What the log shows: the target as it came until it is read (a malformed one stays so, links redacted
    // by the log), then its path and query.
    let shown: Pick<RequestTarget, 'path' | 'search'> = { path: req.url ?? '', search: '' };
    const ctx: RequestContext = {
      req,
      res,
      method,
      path: '',
      query: new URLSearchParams(),
      params: {},
      body: undefined,
    };
    const record: Partial<RequestRecord> = {};
    // Recorded when the answer is complete (before its last bytes leave, so a client that has its answer
    // always finds the record), or when the connection closes without one (a reset).
    let logged = false;
    const log = (status: number): void => {
      if (logged) return;
      logged = true;
      const length = req.headers['content-length'];
      requestLog.add({
        time: new Date(started).toISOString(),
        method,
        path: shown.path,
        ...(shown.search ? { query: shown.search.slice(1) } : {}),
        status,
        authorization: req.headers.authorization !== undefined,
        contentType: req.headers['content-type'] ?? null,
        contentLength: length === undefined ? null : Number(length),
        bytes: ctx.bytesIn ?? ctx.body?.length ?? 0,
        durationMs: now() - started,
        userAgent: req.headers['user-agent'] ?? null,
        ...record,
      });
    };
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      log(res.statusCode);
      return end(...args);
    }) as typeof res.end;
    res.on('close', () => log(res.headersSent ? res.statusCode : 0));
    if (latencyMs > 0) await sleep(latencyMs);
    let url: RequestTarget;
    try {
      url = readTarget(req);
    } catch (problem) {
      req.resume();
      sendProblem(res, problem as HttpProblem);
      return;
    }
    shown = url;
    ctx.path = url.path;
    ctx.query = url.query;

    const decision = faults.decide(method, url.path);
    if (decision) {
      const { rule } = decision;
      record.fault = `rule ${decision.index + 1}: ${describeRule(rule)}`;
      if (rule.delayMs) await sleep(rule.delayMs);
      if (!rule.after) {
        if (rule.reset) {
          req.socket.destroy();
          return;
        }
        if (rule.status !== undefined) {
          req.resume();
          sendProblem(res, faultProblem(rule));
          return;
        }
      } else if (rule.reset || rule.status !== undefined) {
        loseAnswer(req, res, rule);
      }
    }

    try {
      if (limiter && url.path.startsWith('/api/')) {
        const key = req.headers.authorization ?? `ip:${req.socket.remoteAddress ?? ''}`;
        const verdict = limiter.take(key, now());
        for (const [name, value] of Object.entries(verdict.headers)) res.setHeader(name, value);
        if (!verdict.allowed) {
          req.resume();
          throw new HttpProblem(429, [
            { status: 429, title: 'Too many requests', detail: "You have exceeded the API's rate limit." },
          ]);
        }
      }
      const match = router.match(method, url.path);
      if (!match.route) {
        req.resume();
        if (match.allowed.length > 0) {
          throw new HttpProblem(405, [{ status: '405', title: 'method not allowed' }], {
            allow: match.allowed.join(', '),
          });
        }
        throw new HttpProblem(404, [{ status: '404', title: 'not found' }]);
      }
      ctx.params = match.params;
      if (ctx.params.secret) Object.assign(record, objectFacts(app, ctx.params.secret));
      if (!match.route.streaming) ctx.body = await readBody(req, API_BODY_LIMIT);
      await match.route.handler(ctx);
    } catch (error) {
      // The client went away mid-request (an upload it abandoned): there is no one to answer and nothing went
      // wrong here; the request log records it with status 0 when the connection closes.
      if (req.socket.destroyed) return;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpProblem) {
        sendProblem(res, error);
      } else {
        options.onError?.(error);
        const detail =
          error instanceof StoreWriteError
            ? `The emulator could not save the change (${error.code}); nothing was changed.`
            : undefined;
        sendProblem(
          res,
          new HttpProblem(500, [
            { status: '500', title: 'internal server error', ...(detail ? { detail } : {}) },
          ]),
        );
      }
    }
  };

  const server = createServer(requestListener(handle, options.onError));
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  baseUrl = `http://${host}:${address.port}`;

  const token = (organization: string, role: 'owner' | 'member') =>
    store.data.tokens.find((t) => t.organization === organization && t.role === role)!.token;
  const organization = store.data.organization;
  return {
    url: baseUrl,
    organization,
    ownerToken: token(organization, 'owner'),
    memberToken: token(organization, 'member'),
    outsiderToken: store.data.tokens.find((t) => t.organization !== organization)!.token,
    dataDir,
    store,
    faults,
    requestLog,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The log's view of an archivist request: which file of which resource (never the secret). */
function objectFacts(app: App, secret: string): { object: string; owner: string } | undefined {
  const grant = app.links.verify(secret, app.now());
  const found = grant ? app.store.findObject(grant.key) : undefined;
  return found ? { object: found.kind, owner: found.ownerId } : undefined;
}

function describeRule(rule: FaultRule): string {
  const what = rule.reset ? 'reset' : rule.status !== undefined ? `status ${rule.status}` : 'delay';
  return `${what}${rule.delayMs ? ` after ${rule.delayMs}ms` : ''}${rule.after ? ' (after handling)' : ''}`;
}

function faultProblem(rule: FaultRule): HttpProblem {
  const status = rule.status ?? 500;
  const headers: Record<string, string> = {};
  if (rule.retryAfter !== undefined) headers['retry-after'] = String(rule.retryAfter);
  return new HttpProblem(
    status,
    [
      {
        status: String(status),
        title: 'injected fault',
        detail: 'This answer was injected by a --faults rule.',
      },
    ],
    headers,
  );
}

/**
 * Lets the handler do its work but replaces its answer: the connection is reset, or the fault's status is
 * sent instead. This is how a create whose answer was lost is rehearsed.
 */
function loseAnswer(req: IncomingMessage, res: ServerResponse, rule: FaultRule): void {
  const realEnd = res.end.bind(res);
  const realWriteHead = res.writeHead.bind(res);
  res.writeHead = (() => res) as typeof res.writeHead;
  res.write = (() => true) as typeof res.write;
  res.end = (() => {
    res.writeHead = realWriteHead;
    if (rule.reset) {
      req.socket.destroy();
    } else {
      const problem = faultProblem(rule);
      const body = JSON.stringify({ errors: problem.errors });
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      realWriteHead(problem.status, { ...problem.headers, 'content-type': 'application/vnd.api+json' });
      realEnd(body);
    }
    return res;
  }) as typeof res.end;
}
