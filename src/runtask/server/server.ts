/**
 * The integrator's HTTP side (node:http): the platform's POST on `path`, or on each route's path with
 * `routes` (see requests.ts), `GET /healthz`, `GET /metrics`, nothing else. Starting opens the job store of each
 * route (the journal, taking its lock; or, on a database shared by several instances, a queue per route),
 * listens, then finishes what a previous process with the same store left; stopping is graceful (503, `--grace`,
 * failed reports) or hard (as a crash).
 */
import { createServer, type Server } from 'node:http';
import { listen } from '../../net/listen.js';
import { prepareHandlers } from './handler/handler.js';
import { JobManager } from './jobs.js';
import { Journal } from './journal/journal.js';
import type { JobStore } from './store.js';
import { withoutDatabaseEnv } from './redact.js';
import { IntegratorMetrics } from './metrics.js';
import { handleRequest, refuse, type RequestContext, type RouteContext } from './requests.js';
import {
  combinedHealth,
  routeName,
  labelRouteDir,
  leftoverJournalDirs,
  routeStateDir,
  type ServedRoute,
} from './routing.js';

import type { IntegratorOptions, RouteOptions } from './options.js';

export { BODY_LIMIT } from './requests.js';

/** The store of a route without a database: given (tests), or the journal in `dir`. */
async function openStore(options: IntegratorOptions, dir: string): Promise<JobStore> {
  if (options.openStore) return options.openStore(options.log);
  return Journal.open(dir, options.log);
}

/** The PostgreSQL store of each route, by path: one queue each (`routeQueue`), sharing one connection pool. */
async function openQueues(
  options: IntegratorOptions,
  routes: readonly RouteOptions[],
  routed: boolean,
): Promise<Map<string, JobStore>> {
  const { PostgresStore, routeQueue } = await import('./postgres/postgres.js');
  const stores = await PostgresStore.openQueues(
    {
      url: options.databaseUrl!,
      log: options.log,
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      ...(options.pollEveryMs === undefined ? {} : { pollEveryMs: options.pollEveryMs }),
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
      ...options.databaseTimeouts,
    },
    routes.map((route) => routeQueue(routeName(route.path, routed))),
  );
  return new Map(routes.map((route, i) => [route.path, stores[i]!]));
}

/** A running integrator. */
export interface Integrator {
  /** Where the platform should POST, e.g. `http://127.0.0.1:8080/`. */
  url: string;
  port: number;
  /** The jobs of the first route (the only one without `routes`). */
  jobs: JobManager;
  /** Every route served, with its URL and jobs. */
  routes: { path: string; url: string; jobs: JobManager }[];
  metrics: IntegratorMetrics;
  /** Resolves when no job of any route is left. */
  idle(): Promise<void>;
  /** Graceful stop: new requests get 503, jobs get `graceMs`, the rest are reported failed. */
  stop(graceMs: number): Promise<void>;
  /** Hard stop, as a crash: handlers killed, nothing reported, journal kept. */
  destroy(): Promise<void>;
}

/** The routes to serve: those of the routes file, or the one the options describe. */
function configuredRoutes(options: IntegratorOptions): RouteOptions[] {
  if (options.routes) return [...options.routes];
  return [
    {
      path: options.path,
      hmacKey: options.hmacKey,
      exec: options.exec,
      timeoutMs: options.timeoutMs,
      timeoutText: options.timeoutText,
      maxJobs: options.maxJobs,
      allowed: options.allowed,
    },
  ];
}

/** Lets go of every route's store; a crash keeps the journal's lock file and the PostgreSQL leases. */
async function releaseAll(served: readonly ServedRoute[], crash = false): Promise<void> {
  for (const route of served) await route.journal.release(crash ? { crash: true } : {});
}

/**
 * Opens the job store and the job manager of each route, and of each route no longer served whose jobs a previous
 * process left in its folder (`retired`). On a failure, what was opened is released again.
 */
async function openRoutes(
  options: IntegratorOptions,
  configured: readonly RouteOptions[],
): Promise<ServedRoute[]> {
  const { log } = options;
  const routed = options.routes !== undefined;
  const shared = options.databaseUrl !== undefined || options.openStore !== undefined;
  const served: ServedRoute[] = [];
  // On a database, each route has a queue of its own, all of them on one connection pool.
  const queues =
    options.databaseUrl !== undefined && options.openStore === undefined
      ? await openQueues(options, configured, routed)
      : undefined;
  const open = async (route: RouteOptions, dir: string, retired: boolean): Promise<void> => {
    const journal = queues?.get(route.path) ?? (await openStore(options, dir));
    if (!retired && journal instanceof Journal) labelRouteDir(options.stateDir, journal.dir, route);
    const routeLog = log.child(routed || retired ? { route: route.path } : {});
    // Handlers never see the database's credentials (PG* variables, a value holding its password).
    const env = withoutDatabaseEnv(options.env, options.databaseUrl);
    // A retired route has no handler of its own: its jobs are reported, never run.
    const jobs = new JobManager({ ...options, ...route, env, retired }, journal, routeLog);
    served.push({ route, journal, jobs, log: routeLog, retired });
  };
  try {
    for (const route of configured) {
      await open(route, routeStateDir(options.stateDir, route.path, routed), false);
    }
    // Jobs left in the folder of a route that is no longer served (the routes file changed): delivered or
    // reported failed like any other, to the platform hosts the route had; their path is served no more.
    const dirs = new Set(served.flatMap((r) => (r.journal instanceof Journal ? [r.journal.dir] : [])));
    for (const leftover of shared ? [] : leftoverJournalDirs(options.stateDir, dirs)) {
      const allowed = leftover.allowed ?? options.allowed;
      await open({ ...configured[0]!, path: leftover.path, allowed }, leftover.dir, true);
    }
  } catch (error) {
    await releaseAll(served);
    throw error;
  }
  return served;
}

/** The integrator's /metrics: every route's jobs, the store's health, and the shared queues' depth. */
function integratorMetrics(options: IntegratorOptions, served: readonly ServedRoute[]): IntegratorMetrics {
  // The shared queues (PostgreSQL): their depth is the same on every instance.
  const queued = served.filter((r) => !r.retired && r.journal.queue !== undefined);
  const metrics = new IntegratorMetrics(
    () => served.map((r) => ({ route: r.route.path, counts: () => r.jobs.counts() })),
    {
      kind: options.databaseUrl !== undefined ? 'postgres' : 'journal',
      ok: () => served.every((r) => r.jobs.storeHealth().status === 'ok'),
      ...(queued.length === 0
        ? {}
        : {
            depth: () =>
              Promise.all(
                queued.map(async (r) => ({ route: r.route.path, depth: await r.journal.queue!.depth() })),
              ),
          }),
    },
  );
  for (const route of served) metrics.watch(route.route.path, route.log);
  // The shared store logs its takeovers on the integrator's log (a store serves the whole process).
  options.log.subscribe((event) => {
    if (event.event === 'store.took_over') metrics.takeovers.inc();
  });
  return metrics;
}

/** What the request handler sees of the integrator: the routes served, /healthz, /metrics, a stop under way. */
function requestContext(
  options: IntegratorOptions,
  served: readonly ServedRoute[],
  metrics: IntegratorMetrics,
  stopping: () => boolean,
): RequestContext {
  const routed = options.routes !== undefined;
  const role = options.role ?? 'all';
  const contexts = new Map<string, RouteContext>();
  for (const route of served.filter((r) => !r.retired)) {
    contexts.set(route.route.path, {
      options: { ...route.route, bodyLimit: options.bodyLimit },
      jobs: route.jobs,
      log: route.log,
    });
  }
  const first = served[0]!;
  return {
    options: { ...first.route, bodyLimit: options.bodyLimit },
    jobs: first.jobs,
    log: options.log,
    stopping,
    ...(routed ? { routes: contexts } : {}),
    health: () => ({
      ...combinedHealth(
        served,
        stopping(),
        routed,
        options.databaseUrl !== undefined ? 'postgres' : 'journal',
      ),
      role,
    }),
    metrics,
  };
}

/** The HTTP server: each request handled (a failure answered 500), each answer counted. */
function integratorServer(context: RequestContext, metrics: IntegratorMetrics): Server {
  const server: Server = createServer((req, res) => {
    res.on('finish', () => metrics.countAnswer(res));
    handleRequest(context, req, res).catch((error: unknown) => {
      context.log.error('request.error', `could not handle a request: ${String(error)}`, {});
      if (!res.headersSent) refuse(res, 500, 'internal error', 'the integrator failed; see its log');
      else res.destroy();
    });
  });
  // Longer than the idle timeout of common load balancers (60 s), so that they never reuse a closed connection.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // A request body (at most 1 MiB) that takes longer than this is a slowloris, not the platform: drop it
  // (Node's default would hold such a connection for 5 minutes).
  server.requestTimeout = 90_000;
  return server;
}

/** Starts the integrator: job stores, HTTP server, then recovery of what a previous process left. */
export async function startIntegrator(options: IntegratorOptions): Promise<Integrator> {
  const served = await openRoutes(options, configuredRoutes(options));
  prepareHandlers();
  let stopping = false;
  const metrics = integratorMetrics(options, served);
  const server = integratorServer(
    requestContext(options, served, metrics, () => stopping),
    metrics,
  );
  const listening = await listen(server, {
    host: options.host,
    port: options.port,
    name: 'the integrator',
  }).catch(async (error: unknown) => {
    await releaseAll(served);
    throw error;
  });
  const close = (graceMs?: number): Promise<void> => listening.close(graceMs);
  try {
    for (const route of served) await route.jobs.recover();
  } catch (error) {
    // A start that cannot read its journal must end, not keep a port open with nobody to stop it.
    await close();
    await releaseAll(served);
    throw error;
  }
  const idle = async (): Promise<void> => {
    await Promise.all(served.map((r) => r.jobs.idle()));
  };
  const first = served[0]!;
  return {
    url: `${listening.url}${first.route.path}`,
    port: listening.port,
    jobs: first.jobs,
    routes: served
      .filter((r) => !r.retired)
      .map((r) => ({ path: r.route.path, url: `${listening.url}${r.route.path}`, jobs: r.jobs })),
    metrics,
    idle,
    async stop(graceMs) {
      stopping = true;
      await Promise.all(served.map((r) => r.jobs.drain(graceMs)));
      await close();
      await releaseAll(served);
    },
    async destroy() {
      stopping = true;
      await close(0);
      await Promise.all(served.map((r) => r.jobs.destroy()));
      await releaseAll(served, true);
    },
  };
}
