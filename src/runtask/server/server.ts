/**
 * The integrator's HTTP side (node:http): the platform's POST on `path` (see requests.ts), `GET /healthz`,
 * nothing else. Starting opens the job store (the journal, taking its lock, unless `openStore` gives another),
 * listens, then finishes what a previous process with the same store left; stopping is graceful (503, `--grace`,
 * failed reports) or hard (as a crash).
 */
import { createServer, type Server } from 'node:http';
import { listen } from '../../net/listen.js';
import { prepareHandlers } from './handler.js';
import { JobManager, type JobSettings } from './jobs.js';
import { Journal } from './journal.js';
import type { EventLog } from './log.js';
import type { JobStore } from './store.js';
import { handleRequest, refuse, type RequestContext } from './requests.js';

export { BODY_LIMIT } from './requests.js';

/** Everything the integrator needs. */
export interface IntegratorOptions extends JobSettings {
  host: string;
  port: number;
  /** The path the platform POSTs to, e.g. `/`. */
  path: string;
  stateDir: string;
  log: EventLog;
  /** Largest accepted body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Opens the job store; default: PostgreSQL when `databaseUrl` is set, else the journal in `stateDir`. */
  openStore?: (log: EventLog) => Promise<JobStore>;
  /** The PostgreSQL job store shared by several instances (postgres.ts). */
  databaseUrl?: string;
  /** Its lease: how long a job of an instance that died stays held (default 60 s). */
  leaseMs?: number;
}

/** A running integrator. */
export interface Integrator {
  /** Where the platform should POST, e.g. `http://127.0.0.1:8080/`. */
  url: string;
  port: number;
  jobs: JobManager;
  /** Graceful stop: new requests get 503, jobs get `graceMs`, the rest are reported failed. */
  stop(graceMs: number): Promise<void>;
  /** Hard stop, as a crash: handlers killed, nothing reported, journal kept. */
  destroy(): Promise<void>;
}

/** The store the options name: given, PostgreSQL (pg-boss loaded only then), or the journal. */
async function openStore(options: IntegratorOptions): Promise<JobStore> {
  if (options.openStore) return options.openStore(options.log);
  if (options.databaseUrl === undefined) return Journal.open(options.stateDir, options.log);
  const { PostgresStore } = await import('./postgres.js');
  return PostgresStore.open({
    url: options.databaseUrl,
    log: options.log,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
  });
}

/** Starts the integrator: journal, HTTP server, then recovery of what a previous process left. */
export async function startIntegrator(options: IntegratorOptions): Promise<Integrator> {
  const { log } = options;
  const journal = await openStore(options);
  prepareHandlers();
  const jobs = new JobManager(options, journal, log);
  let stopping = false;

  const context: RequestContext = { options, jobs, log, stopping: () => stopping };
  const server: Server = createServer((req, res) => {
    handleRequest(context, req, res).catch((error: unknown) => {
      log.error('request.error', `could not handle a request: ${String(error)}`, {});
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
  const listening = await listen(server, {
    host: options.host,
    port: options.port,
    name: 'the integrator',
  }).catch(async (error: unknown) => {
    await journal.release();
    throw error;
  });
  const close = (graceMs?: number): Promise<void> => listening.close(graceMs);
  try {
    await jobs.recover();
  } catch (error) {
    // A start that cannot read its journal must end, not keep a port open with nobody to stop it.
    await close();
    await journal.release();
    throw error;
  }
  return {
    url: `${listening.url}${options.path}`,
    port: listening.port,
    jobs,
    async stop(graceMs) {
      stopping = true;
      await jobs.drain(graceMs);
      await close();
      await journal.release();
    },
    async destroy() {
      stopping = true;
      await close(0);
      await jobs.destroy();
      await journal.release({ crash: true });
    },
  };
}
