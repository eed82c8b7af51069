/**
 * What the integrator is started with (`runtask serve`, server.ts): its options, and those of each route it
 * serves. A module of types only, so that the request handling (requests.ts) and the routes' folders
 * (routing.ts) read them without importing the server that calls them.
 */
import type { PlatformOrigins } from '../callback/origins.js';
import type { DatabaseTimeouts } from './postgres/databaseFaults.js';
import type { ResultReading } from './handler/handlerResult.js';
import type { JobSettings } from './jobs.js';
import type { EventLog } from './log.js';
import type { JobStore } from './store.js';

/** One run task of several (`--routes`): its path, key and handler, each with its own jobs and journal. */
export interface RouteOptions {
  /** Normalised: starts with `/`, no trailing `/` (but `/` itself), not /healthz or /metrics. */
  path: string;
  hmacKey: string | undefined;
  exec: string;
  timeoutMs: number;
  timeoutText: string;
  /** Handlers of this route running at once (each route has its own slots). */
  maxJobs: number;
  allowed: PlatformOrigins;
  /** How this route's handler output is read (default: the integrator's). */
  reading?: ResultReading;
  /** Hand this route's handler the configuration version, unpacked (default: the integrator's). */
  withConfiguration?: boolean;
}

/** Everything the integrator needs. */
export interface IntegratorOptions extends JobSettings {
  host: string;
  port: number;
  /** The path the platform POSTs to, e.g. `/`. */
  path: string;
  /**
   * Several run tasks, each on its own path (a routes file): then `path`, `exec`, `hmacKey`, `timeoutMs` and
   * `maxJobs` above are not used. Route `/` keeps its journal in `stateDir`, the others in
   * `stateDir/routes/<name>`, so that a restart finishes each job with its own route's settings.
   */
  routes?: readonly RouteOptions[];
  stateDir: string;
  log: EventLog;
  /** Largest accepted body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Opens the job store of a route (tests); default: PostgreSQL when `databaseUrl` is set, else the journal. */
  openStore?: (log: EventLog) => Promise<JobStore>;
  /** The PostgreSQL job store shared by several instances (postgres.ts): a queue per route. */
  databaseUrl?: string;
  /** Its lease: how long a job of an instance that died stays held (default 60 s). */
  leaseMs?: number;
  /** With the database: how often a worker with free slots looks at the queue (default 1 s). */
  pollEveryMs?: number;
  /** With the database: connections in this instance's pool (default 10). */
  poolSize?: number;
  /** With the database: its statement and connect timeouts and retry delay (databaseFaults.ts). */
  databaseTimeouts?: DatabaseTimeouts;
}
