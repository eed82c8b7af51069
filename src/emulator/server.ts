/**
 * `startEmulator`: the local platform on a real HTTP port. Each request passes through a short list of named
 * steps: the request log, the network's latency, the request target, the fault rules, the rate limit, the
 * router, the body, the handler; handlers answer JSON:API documents or throw `HttpProblem`, and whatever a step
 * throws is answered by `answerFailure`. It listens as the run task platform does (`listenLocally`, ./http.ts);
 * listening and closing themselves are `src/net/listen.ts`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { App, AppSettings } from './app.js';
import { ExchangeResponse, openExchange, runSteps, type Exchange, type Step } from './exchange.js';
import { FaultEngine, injectFault, type FaultRule } from './faults.js';
import {
  HttpProblem,
  Router,
  badRequest,
  listenLocally,
  readBody,
  requestListener,
  sendProblem,
  type EmulatedServer,
  type EmulatedServerOptions,
} from './http.js';
import { LinkSigner } from './links.js';
import { RateLimiter, limitRate } from './rateLimit.js';
import { RequestLog, logRequest } from './requestLog.js';
import { Shaper } from './shaping.js';
import { registerArchivistRoutes } from './routes/archivist.js';
import { registerConsumerRoutes } from './routes/consumer.js';
import { registerGpgKeyRoutes } from './routes/gpgKeys.js';
import { registerPlatformRoutes } from './routes/platforms.js';
import { registerProviderRoutes } from './routes/providers.js';
import { registerVersionRoutes } from './routes/versions.js';
import { Store, StoreWriteError } from './state.js';
import { parseRequestTarget } from '../net/requestTarget.js';

/** How to start an emulator. Everything is optional. */
export interface EmulatorOptions extends EmulatedServerOptions {
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
  /** Serve each platform's lock hashes (`packages`) in the consumer download response (see AppSettings). */
  packageHashes?: boolean;
  /** Honour a download's byte range (AppSettings). */
  ranges?: boolean;
  /** Lifetime of archivist links (default 25 hours, as documented). */
  linkTtlMs?: number;
  /** Milliseconds every request waits before it is handled (a network round trip). */
  latencyMs?: number;
  /** Bytes per second per connection for upload and download bodies (a network's per-flow bandwidth). */
  bandwidth?: number;
  /** Bytes per second shared by all connections, each way (a network whose total bandwidth is the limit). */
  totalBandwidth?: number;
}

/** A running emulator. */
export interface Emulator extends EmulatedServer {
  organization: string;
  ownerToken: string;
  memberToken: string;
  /** A valid token of another organization. */
  outsiderToken: string;
  dataDir: string;
  store: Store;
  faults: FaultEngine;
  requestLog: RequestLog;
  /** Stops: requests in flight may finish (within `CLOSE_GRACE_MS`), then a data dir it made is removed. */
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
  const settings: AppSettings = {
    flagDelayMs: options.flagDelayMs ?? 0,
    strict: options.strict === true,
    packageHashes: options.packageHashes === true,
    ranges: options.ranges === true,
  };
  let baseUrl = '';
  const app: App = {
    store,
    links: new LinkSigner(store.data.linkKey, options.linkTtlMs ?? TWENTY_FIVE_HOURS),
    settings,
    now,
    baseUrl: () => baseUrl,
    shaper: new Shaper({
      latencyMs: options.latencyMs,
      bytesPerSecond: options.bandwidth,
      totalBytesPerSecond: options.totalBandwidth,
    }),
  };
  const router = emulatorRouter(app);
  const faults = new FaultEngine(options.faults ?? [], options.faultSeed ?? 1);
  const requestLog = new RequestLog(options.requestLogPath, undefined, (error) => options.onError?.(error));
  const steps: Step[] = [
    logRequest(requestLog, now),
    ...(options.latencyMs ? [waitLatency(options.latencyMs)] : []),
    readRequestTarget,
    injectFault(faults),
    ...(options.rateLimit ? [limitRate(new RateLimiter(options.rateLimit), now)] : []),
    findRoute(router, app),
    readApiBody,
    handle,
  ];
  const fail = (exchange: Exchange, error: unknown): void => answerFailure(exchange, error, options.onError);

  const server = createServer<typeof IncomingMessage, typeof ExchangeResponse>(
    { ServerResponse: ExchangeResponse },
    requestListener<ExchangeResponse>(
      (req, res) => runSteps(openExchange(req, res, now()), steps, fail),
      options.onError,
    ),
  );
  const listening = await listenLocally(server, options, 'the emulator').catch((error: unknown) => {
    if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  baseUrl = listening.url;

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
      await listening.close();
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The emulator's routes: the registry API, the archivist, the consumer protocol, `ping` and `healthz`. */
function emulatorRouter(app: App): Router {
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
  return router;
}

/** Step: waits the network's round trip (`--latency`) before anything else happens. */
function waitLatency(latencyMs: number): Step {
  return async () => {
    await sleep(latencyMs);
    return 'next' as const;
  };
}

/** Step: reads the request target into the context; a malformed one is answered 400 (its body drained). */
function readRequestTarget(exchange: Exchange): 'next' | 'answered' {
  const { req, res, ctx } = exchange;
  const result = parseRequestTarget(req.url, req.headers.host);
  if (!result.ok) {
    req.resume();
    sendProblem(res, badRequest(result.reason));
    return 'answered';
  }
  exchange.target = result.target;
  ctx.path = result.target.path;
  ctx.query = result.target.query;
  return 'next';
}

/**
 * Step: the route of the method and path, its `:params` decoded (a bad escape is a 400); 404 when no route has
 * the path, 405 with `Allow` when routes have it for other methods. An archivist request tells the request log
 * which file of which resource it is for.
 */
function findRoute(router: Router, app: App): Step {
  return (exchange) => {
    const { req, ctx, facts } = exchange;
    const match = router.match(ctx.method, ctx.path);
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
    exchange.route = match.route;
    if (ctx.params.secret) Object.assign(facts, objectFacts(app, ctx.params.secret));
    return 'next';
  };
}

/** Step: reads the whole body (at most 1 MiB, else 413), except for a streaming route (an upload) that reads its own. */
async function readApiBody({ req, ctx, route }: Exchange): Promise<'next'> {
  if (route && !route.streaming) ctx.body = await readBody(req, API_BODY_LIMIT);
  return 'next';
}

/** Step: the route's handler answers. */
async function handle({ ctx, route }: Exchange): Promise<'answered'> {
  await route?.handler(ctx);
  return 'answered';
}

/**
 * The answer to what a step threw: nothing when the client went away mid-request (an upload it abandoned: the
 * request log records it with status 0 when the connection closes), a cut connection when the answer had begun,
 * the problem itself for an `HttpProblem`, else a 500 (told to `onError`; a store that could not save says so).
 */
function answerFailure(
  exchange: Exchange,
  error: unknown,
  onError: ((error: unknown) => void) | undefined,
): void {
  const { req, res } = exchange;
  if (req.socket.destroyed) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error instanceof HttpProblem) {
    sendProblem(res, error);
    return;
  }
  onError?.(error);
  const detail =
    error instanceof StoreWriteError
      ? `The emulator could not save the change (${error.code}); nothing was changed.`
      : undefined;
  sendProblem(
    res,
    new HttpProblem(500, [{ status: '500', title: 'internal server error', ...(detail ? { detail } : {}) }]),
  );
}

/** The log's view of an archivist request: which file of which resource (never the secret). */
function objectFacts(app: App, secret: string): { object: string; owner: string } | undefined {
  const grant = app.links.verify(secret, app.now());
  const found = grant ? app.store.findObject(grant.key) : undefined;
  return found ? { object: found.kind, owner: found.ownerId } : undefined;
}
