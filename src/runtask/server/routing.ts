/**
 * Where each route keeps its jobs, and what /healthz says of them all. Route `/` (and the single route without a
 * routes file, whatever its path) uses the state dir itself, so that a journal left by an integrator without
 * routes is finished as route `/`; every other route has `routes/<name>` below it, named after its path, with a
 * `route.json` saying which path that is and where its tokens may go. A job's route is where its
 * record is: a restart finishes it with its own route's settings (platform hosts, callbacks) and counts it under
 * its own route, even once the route has left the configuration.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { JobManager } from './jobs.js';
import { holdsJobRecords } from './journal/journal.js';
import { PlatformOrigins } from '../callback/origins.js';
import type { EventLog } from './log.js';
import type { JobStore, StoreHealth } from './store.js';
import type { HealthReport } from './requests.js';
import type { RouteOptions } from './options.js';

/** A route being served (or, `retired`, only finishing the jobs a previous process left for it). */
export interface ServedRoute {
  route: RouteOptions;
  /** Its job store: the route's journal, or the PostgreSQL store (single route). */
  journal: JobStore;
  jobs: JobManager;
  log: EventLog;
  retired: boolean;
}

const ROUTES_DIR = 'routes';
const ROUTE_FILE = 'route.json';

/** The folder of a route's journal: `stateDir` for `/` or the single route, else `stateDir/routes/<name>`. */
export function routeStateDir(stateDir: string, path: string, routed: boolean): string {
  const name = routeName(path, routed);
  return name === undefined ? resolve(stateDir) : join(resolve(stateDir), ROUTES_DIR, name);
}

/**
 * A route's name for its folder and its queue on a database: none for `/` and the single route (the state dir
 * and the queue of an integrator without routes); else readable, and unique through the hash: `/tenants/acme` →
 * `tenants_acme-<12 hex>`.
 */
export function routeName(path: string, routed: boolean): string | undefined {
  if (!routed || path === '/') return undefined;
  const readable = path
    .slice(1)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 60);
  const hash = createHash('sha256').update(path).digest('hex').slice(0, 12);
  return `${readable}-${hash}`;
}

/** Writes `route.json` (the path and platform hosts of the folder's route) in a route's own folder; best effort. */
export function labelRouteDir(stateDir: string, dir: string, route: RouteOptions): void {
  if (dir === resolve(stateDir)) return;
  const label = { path: route.path, platformHosts: [...route.allowed.origins] };
  try {
    writeFileSync(join(dir, ROUTE_FILE), JSON.stringify(label) + '\n', { mode: 0o600 });
  } catch {
    // Only a label for people and for a later start: the journal in the folder works without it.
  }
}

/** True when a folder holds job records (journal.ts reads them). */
const holdsJobs = holdsJobRecords;

/**
 * Journal folders with job records that no served route owns (its path left the routes file, or the routes file
 * replaced the single route): the state dir itself and each `routes/<name>`, with the path each was served on.
 */
export function leftoverJournalDirs(
  stateDir: string,
  owned: ReadonlySet<string>,
): { dir: string; path: string; allowed?: PlatformOrigins }[] {
  const root = resolve(stateDir);
  const found: { dir: string; path: string; allowed?: PlatformOrigins }[] = [];
  if (!owned.has(root) && holdsJobs(root)) found.push({ dir: root, path: '/' });
  let names: string[];
  try {
    names = readdirSync(join(root, ROUTES_DIR));
  } catch {
    return found;
  }
  for (const name of names.sort()) {
    const dir = join(root, ROUTES_DIR, name);
    if (owned.has(dir) || !holdsJobs(dir)) continue;
    let path = `/${name}`;
    let allowed: PlatformOrigins | undefined;
    try {
      const label = JSON.parse(readFileSync(join(dir, ROUTE_FILE), 'utf8')) as Record<string, unknown>;
      if (typeof label.path === 'string') path = label.path;
      const hosts = label.platformHosts;
      if (Array.isArray(hosts) && hosts.every((h) => typeof h === 'string'))
        allowed = new PlatformOrigins(hosts);
    } catch {
      // No label: the folder's name stands for the path, and the default platform hosts apply.
    }
    found.push({ dir, path, ...(allowed === undefined ? {} : { allowed }) });
  }
  return found;
}

/** The stores' health together: failing when one is; problems and unsaved jobs added up. */
function combinedStore(healths: StoreHealth[]): StoreHealth {
  const last = healths
    .map((h) => h.lastProblem)
    .filter((p) => p !== undefined)
    .sort((a, b) => a.at.localeCompare(b.at))
    .at(-1);
  return {
    status: healths.some((h) => h.status === 'failing') ? 'failing' : 'ok',
    problems: healths.reduce((sum, h) => sum + h.problems, 0),
    ...(last === undefined ? {} : { lastProblem: last }),
    unsaved: healths.reduce((sum, h) => sum + h.unsaved, 0),
  };
}

/**
 * /healthz: 503 while new jobs would be refused (stopping, or a store that cannot be written), so that a load
 * balancer sends them elsewhere; the jobs already accepted run and report either way. `store` says what the job
 * store can do, whatever kind it is; with routes, each route's jobs and store status are listed too.
 */
export function combinedHealth(
  served: readonly ServedRoute[],
  stopping: boolean,
  routed: boolean,
  kind: 'journal' | 'postgres' = 'journal',
): HealthReport {
  const stores = served.map((r) => r.jobs.storeHealth());
  const store = combinedStore(stores);
  const jobs = { queued: 0, running: 0, reporting: 0 };
  for (const route of served) {
    const counts = route.jobs.counts();
    jobs.queued += counts.queued;
    jobs.running += counts.running;
    jobs.reporting += counts.reporting;
  }
  const status = stopping ? 'stopping' : store.status === 'failing' ? 'degraded' : 'ok';
  // /healthz answers anyone: its problem by code and time only (the message, naming hosts and paths, is in
  // the log).
  const { lastProblem, ...counts } = store;
  return {
    status,
    jobs,
    store: {
      kind,
      ...counts,
      ...(lastProblem && { lastProblem: { at: lastProblem.at, code: lastProblem.code } }),
    },
    ...(routed
      ? {
          routes: Object.fromEntries(
            served.map((r, i) => [
              r.route.path,
              {
                jobs: r.jobs.counts(),
                store: stores[i]!.status,
                ...(r.retired ? { retired: true } : {}),
              },
            ]),
          ),
        }
      : {}),
  };
}
