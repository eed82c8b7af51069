/**
 * `runtask serve` flags → integrator options, every check done before anything listens: durations, bounds,
 * the HMAC key (from a file or an environment variable, never a flag value), the allowed platform hosts, and
 * the job store (the journal in `--state-dir`, or PostgreSQL with `--database-url` / `RUNTASK_DATABASE_URL`).
 * The options' types are here too, so that the server, its request handling (requests.ts) and the routes'
 * folders (routing.ts) read them without importing one another.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseDuration } from '../../config/duration.js';
import { UsageError } from '../../errors.js';
import { parsePlatformHosts, type PlatformOrigins } from '../callback/origins.js';
import { passwordsOf, redactDatabaseUrl } from './redact.js';
import type { DatabaseTimeouts } from './postgres/databaseFaults.js';
import type { JobSettings } from './jobs.js';
import type { EventLog } from './log.js';
import type { FailOn } from '../formats/findings.js';
import { FAIL_ON } from '../formats/report.js';
import { RESULT_FORMATS, type ResultFormat, type ResultReading } from './handler/handlerResult.js';
import { ROLES, type JobStore, type Role } from './store.js';

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

/** Flags of `provider runtask serve`, as commander hands them over. */
export interface ServeFlags {
  host: string;
  port: string;
  /** Default `/`. */
  path?: string;
  exec?: string;
  /** A routes file (routesFile.ts): several run tasks instead of `path`, `exec` and the key flags. */
  routes?: string;
  hmacKeyFile?: string;
  hmacKeyEnv?: string;
  platformHost?: string[];
  heartbeat: string;
  timeout: string;
  maxJobs: string;
  grace: string;
  callbackTimeout: string;
  stateDir?: string;
  databaseUrl?: string;
  lease?: string;
  /** `--role`: all (default), front or worker. */
  role?: string;
  /** `--database-pool`: connections to the database per instance. */
  databasePool?: string;
  /** `--database-timeout`: how long a statement or a connection to the database may take. */
  databaseTimeout?: string;
  /** `--result-format`: how handlers' output is read (auto, json, exit-code, sarif, junit). */
  resultFormat?: string;
  /** `--fail-on`: with a SARIF or JUnit report, the least severe level that fails (error, warning, note, never). */
  failOn?: string;
  /** `--with-configuration`: hand handlers the run's configuration version, unpacked. */
  withConfiguration?: boolean;
}

/** The world the options are resolved in. */
export interface ServeWorld {
  env: Record<string, string | undefined>;
  cwd: string;
  tmpDir: string;
  /** Tells users' state dirs apart under a shared temp folder. */
  user: string;
}

/** The variable holding the PostgreSQL URL of a shared job store (a password is safer here than on the command line). */
export const DATABASE_URL_ENV = 'RUNTASK_DATABASE_URL';
/** The default lease of a job on PostgreSQL. */
export const DEFAULT_LEASE = '60s';

/** How handlers' output is read, from `--result-format`/`--fail-on` or a route's fields (named in errors). */
export function resultReading(
  format: string,
  failOn: string,
  formatName: string,
  failOnName: string,
): ResultReading {
  if (!(RESULT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`${formatName} must be one of ${RESULT_FORMATS.join(', ')}, got "${format}"`, {
      hint: 'auto reads a SARIF or JUnit report when the handler prints one, else its JSON result or exit code.',
    });
  }
  if (!(FAIL_ON as readonly string[]).includes(failOn)) {
    throw new UsageError(`${failOnName} must be one of ${FAIL_ON.join(', ')}, got "${failOn}"`, {
      hint: 'error fails on errors only (the default); never always passes.',
    });
  }
  return { format: format as ResultFormat, failOn: failOn as FailOn };
}

/** The default variable holding the HMAC key. */
export const DEFAULT_HMAC_KEY_ENV = 'RUNTASK_HMAC_KEY';
/** The platform errors a task without progress for 10 minutes (run-tasks.md §6). */
const PROGRESS_WINDOW_MS = 10 * 60_000;
const MAX_TASK_MS = 60 * 60_000;

function integer(value: string, flag: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`${flag} must be a whole number between ${min} and ${max}, got "${value}"`);
  }
  return Number(value);
}

function readKeyFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read the HMAC key file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      {
        hint: 'Check the path given to --hmac-key-file.',
      },
    );
  }
  // Editors and `echo` add a final newline that is not part of the key configured on the platform.
  const key = text.replace(/\r?\n$/, '');
  if (key === '')
    throw new UsageError(`the HMAC key file ${path} is empty`, { hint: 'Put the run task HMAC key in it.' });
  return key;
}

/** The HMAC key, from `--hmac-key-file` or the variable named by `--hmac-key-env`; undefined without one. */
export function resolveHmacKey(
  flags: Pick<ServeFlags, 'hmacKeyFile' | 'hmacKeyEnv'>,
  world: Pick<ServeWorld, 'env' | 'cwd'>,
): { key?: string; variable: string } {
  const variable = flags.hmacKeyEnv ?? DEFAULT_HMAC_KEY_ENV;
  if (flags.hmacKeyFile !== undefined) {
    if (flags.hmacKeyEnv !== undefined) {
      throw new UsageError('--hmac-key-file and --hmac-key-env both name an HMAC key', {
        hint: 'Give only one of them.',
      });
    }
    return { key: readKeyFile(resolve(world.cwd, flags.hmacKeyFile)), variable };
  }
  const value = world.env[variable];
  if (value !== undefined && value !== '') return { key: value, variable };
  if (flags.hmacKeyEnv !== undefined) {
    throw new UsageError(`--hmac-key-env names ${variable}, but ${variable} is not set`, {
      hint: `Export ${variable} with the run task's HMAC key, or leave out --hmac-key-env.`,
    });
  }
  return { variable };
}

/** Builds the integrator options (without the log) and the warnings to log at start-up. */
export function serveOptionsFromFlags(
  flags: ServeFlags,
  world: ServeWorld,
): { options: Omit<IntegratorOptions, 'log'>; warnings: string[] } {
  const warnings: string[] = [];
  const role = resolveRole(flags, world);
  // A front runs no handler: it may go without --exec (or share the workers' manifest, which names one).
  const exec = flags.exec?.trim() ?? '';
  if (role !== 'front' && exec === '') {
    throw new UsageError('runtask serve needs --exec "<command>": the check to run for each request', {
      hint: 'For example: provider runtask serve --exec "./check-plan.sh" (see docs/runtask.md for the handler contract).',
    });
  }
  const path = flags.path ?? '/';
  if (!path.startsWith('/') || path === '/healthz' || path === '/metrics') {
    throw new UsageError(`--path must start with / and may not be /healthz or /metrics, got "${path}"`);
  }
  const heartbeatMs = parseDuration(flags.heartbeat, '--heartbeat');
  if (heartbeatMs >= PROGRESS_WINDOW_MS) {
    throw new UsageError(
      `--heartbeat ${flags.heartbeat} is not inside the platform's 10-minute progress window`,
      {
        hint: 'Use 4m (the default) or less, so that a slow callback still lands in time.',
      },
    );
  }
  const timeoutMs = parseDuration(flags.timeout, '--timeout');
  if (timeoutMs >= MAX_TASK_MS) {
    warnings.push(`--timeout ${flags.timeout}: the platform gives up on a task after 60 minutes`);
  }
  const { key, variable } = resolveHmacKey(flags, world);
  const store = resolveDatabase(flags, world, heartbeatMs, warnings);
  const reading = resultReading(
    flags.resultFormat ?? 'auto',
    flags.failOn ?? 'error',
    '--result-format',
    '--fail-on',
  );
  return {
    warnings,
    options: {
      host: flags.host,
      port: integer(flags.port, '--port', 0, 65535),
      path,
      exec: exec === '' ? '' : anchorExec(exec, world.cwd),
      hmacKey: key,
      allowed: parsePlatformHosts(flags.platformHost),
      heartbeatMs,
      timeoutMs,
      timeoutText: flags.timeout,
      maxJobs: integer(flags.maxJobs, '--max-jobs', 1, 1000),
      callbackTimeoutMs: parseDuration(flags.callbackTimeout, '--callback-timeout'),
      stateDir: resolve(world.cwd, flags.stateDir ?? join(world.tmpDir, `provider-runtask-${world.user}`)),
      workRoot: world.tmpDir,
      env: world.env,
      secretEnvNames: [variable, DEFAULT_HMAC_KEY_ENV, 'RUNTASK_ACCESS_TOKEN', DATABASE_URL_ENV],
      reading,
      withConfiguration: flags.withConfiguration === true,
      role,
      ...store,
    },
  };
}

/**
 * The PostgreSQL job store, when `--database-url` or `RUNTASK_DATABASE_URL` names one (the flag wins), and its
 * lease. A URL with a password on the command line works, with a warning: other users of the machine can read
 * a process's arguments. No message here carries the password.
 */
export function resolveDatabase(
  flags: Pick<ServeFlags, 'databaseUrl' | 'lease' | 'databasePool' | 'databaseTimeout'>,
  world: Pick<ServeWorld, 'env'>,
  heartbeatMs: number,
  warnings: string[],
): { databaseUrl?: string; leaseMs?: number; poolSize?: number; databaseTimeouts?: DatabaseTimeouts } {
  const fromFlag = flags.databaseUrl !== undefined && flags.databaseUrl !== '';
  const url = fromFlag ? flags.databaseUrl : world.env[DATABASE_URL_ENV];
  if (url === undefined || url === '') {
    for (const [flag, value] of [
      ['--lease', flags.lease],
      ['--database-pool', flags.databasePool],
      ['--database-timeout', flags.databaseTimeout],
    ] as const) {
      if (value === undefined) continue;
      throw new UsageError(`${flag} needs a shared job store`, {
        hint: `Give --database-url (or ${DATABASE_URL_ENV}), or leave out ${flag}: the journal has none.`,
      });
    }
    return {};
  }
  const shown = redactDatabaseUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError('the database URL is not a URL (not shown: it may hold a password)', {
      hint: 'Give it as postgres://user:password@host:5432/database.',
    });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new UsageError(`the database URL ${shown} is not a postgres:// URL`, {
      hint: 'Give it as postgres://user:password@host:5432/database.',
    });
  }
  if (fromFlag && passwordsOf(url).length > 0) {
    warnings.push(
      `--database-url holds a password, which other users of this machine can read in the process list: put the URL in ${DATABASE_URL_ENV} instead`,
    );
  }
  const leaseMs = parseDuration(flags.lease ?? DEFAULT_LEASE, '--lease');
  if (leaseMs < 2000 || leaseMs > 5 * 60_000) {
    throw new UsageError(`--lease must be between 2s and 5m, got "${flags.lease}"`, {
      hint: "A job of a dead instance is taken over after its lease: it must end well inside the platform's 10-minute progress window.",
    });
  }
  if (leaseMs + heartbeatMs >= PROGRESS_WINDOW_MS) {
    throw new UsageError(
      `--lease ${flags.lease ?? DEFAULT_LEASE} and --heartbeat together do not fit the platform's 10-minute progress window`,
      { hint: 'A job taken over must still report before the window ends: shorten one of them.' },
    );
  }
  const poolSize =
    flags.databasePool === undefined ? undefined : integer(flags.databasePool, '--database-pool', 2, 100);
  const timeoutMs =
    flags.databaseTimeout === undefined
      ? undefined
      : parseDuration(flags.databaseTimeout, '--database-timeout');
  if (timeoutMs !== undefined && (timeoutMs < 1000 || timeoutMs > 5 * 60_000)) {
    throw new UsageError(`--database-timeout must be between 1s and 5m, got "${flags.databaseTimeout}"`, {
      hint: 'It bounds every statement and connection to the database (default 10s); raise it for a slow database.',
    });
  }
  return {
    databaseUrl: url,
    leaseMs,
    ...(poolSize === undefined ? {} : { poolSize }),
    ...(timeoutMs === undefined
      ? {}
      : {
          databaseTimeouts: {
            statementTimeoutMs: timeoutMs,
            connectTimeoutMs: timeoutMs,
            overdueMs: Math.min(3000, timeoutMs / 2),
          },
        }),
  };
}

/**
 * `--role`: front and worker split one integrator over processes that share the PostgreSQL queue, so they need
 * a database; checked before anything starts.
 */
export function resolveRole(
  flags: Pick<ServeFlags, 'role' | 'databaseUrl'>,
  world: Pick<ServeWorld, 'env'>,
): Role {
  const role = flags.role ?? 'all';
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got "${role}"`, {
      hint: 'all accepts requests and runs their checks; front only accepts and queues; worker only runs queued checks.',
    });
  }
  const database = (flags.databaseUrl ?? '') !== '' || (world.env[DATABASE_URL_ENV] ?? '') !== '';
  if (role !== 'all' && !database) {
    throw new UsageError(`--role ${role} needs a shared job store`, {
      hint: `Give --database-url (or ${DATABASE_URL_ENV}): fronts and workers meet in its queue.`,
    });
  }
  return role as Role;
}

/**
 * Handlers run in a per-job temp folder, so `./check.sh` would not be found there: a command that starts with
 * a relative path (`./x`, `../x`) gets that path made absolute against the integrator's working directory.
 */
export function anchorExec(command: string, cwd: string): string {
  const match = /^(\.{1,2}\/[^\s'"`$;|&<>()\\]*)(?=\s|$)(.*)$/s.exec(command);
  if (!match) return command;
  const absolute = resolve(cwd, match[1]!);
  return `'${absolute.replace(/'/g, `'\\''`)}'${match[2]}`;
}

/** `--grace` in milliseconds. */
export function graceMs(flags: { grace: string }): number {
  return parseDuration(flags.grace, '--grace');
}
