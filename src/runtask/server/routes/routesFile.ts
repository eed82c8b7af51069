/**
 * `runtask serve --routes <file>`: several run tasks on one integrator, each on its own path with its own HMAC
 * key and handler, as commercial integrators hand each policy or tenant its own URL and key. The file is YAML
 * (`.yaml`, `.yml`, or any other name) or JSON (`.json`), checked with zod before anything listens: a mistake is
 * a usage error (exit 2) naming the file, the route and the field.
 *
 *     routes:
 *       - path: /cost                      # unique; `/` is allowed (the default route)
 *         hmac-key-env: COST_HMAC_KEY      # the variable holding this route's key, or:
 *         exec: ./cost-check.sh            # relative to the routes file's folder
 *         timeout: 20m                     # optional: default --timeout
 *         max-jobs: 2                      # optional: default --max-jobs (each route has its own slots)
 *         platform-hosts: [tfe.acme.test]  # optional: default --platform-host
 *         result-format: sarif             # optional: default --result-format (auto)
 *         fail-on: warning                 # optional: default --fail-on (error)
 *         with-configuration: true         # optional: default --with-configuration (false)
 *       - path: /tenants/acme
 *         hmac-key-file: /run/secrets/acme.key
 *         exec: opa-check --policy acme
 *
 * Keys never sit in the file: each route names a file or a variable holding its key (a field that looks like a
 * key or token is refused outright), so the file can be committed and reviewed. Unknown fields are errors, not
 * warnings (unlike the CLI's config file): a misspelled `hmac-key-file` must not leave a route unauthenticated.
 */
import { readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import { parseDuration } from '../../../config/duration.js';
import { parseHostname } from '../../../config/hostname.js';
import { ProviderError, UsageError } from '../../../errors.js';
import { PlatformOrigins } from '../../callback/origins.js';
import type { ResultReading } from '../handler/handlerResult.js';
import { checkRoute, problem, type Place, type RouteEntry } from './routesSchema.js';
import {
  anchorExec,
  resultReading,
  serveOptionsFromFlags,
  type ServeFlags,
  type ServeWorld,
} from '../options.js';
import type { IntegratorOptions, RouteOptions } from '../options.js';

/** Paths the integrator answers itself. */
const RESERVED = ['/healthz', '/metrics'];

/** The flags that name the single route; `--routes` names every route's instead. */
const SINGLE_ROUTE_FLAGS: [keyof ServeFlags, string][] = [
  ['path', '--path'],
  ['exec', '--exec'],
  ['hmacKeyFile', '--hmac-key-file'],
  ['hmacKeyEnv', '--hmac-key-env'],
];

/** Reads and parses the file: JSON for `.json`, YAML (which also reads JSON) otherwise. */
function readDocument(file: string, given: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UsageError(
      code === 'ENOENT' ? `routes file not found: ${given}` : `cannot read the routes file ${file}: ${code}`,
      { hint: 'Check the path given to --routes; a relative path is taken from the current folder.' },
    );
  }
  const json = extname(file).toLowerCase() === '.json';
  try {
    return json ? (JSON.parse(text) as unknown) : (parseYaml(text) as unknown);
  } catch (error) {
    // Only the parser's first line: the lines after it quote the file.
    const reason = String((error as Error).message)
      .split('\n')[0]!
      .replace(/:$/, '');
    throw new UsageError(
      `Invalid routes file ${file}: it is not valid ${json ? 'JSON' : 'YAML'} (${reason})`,
      {
        hint: `Fix the syntax of ${file}.`,
        details: { file },
      },
    );
  }
}

/** A route's path, normalised as request paths are (dot segments, escapes), or why it cannot be one. */
function normalisePath(path: string): { path: string } | { reason: string } {
  if (!path.startsWith('/')) return { reason: 'must start with /' };
  if (/[?#]/.test(path)) return { reason: 'may not hold a query (?) or a fragment (#)' };
  let normalised: string;
  try {
    normalised = new URL(`http://route.invalid${path}`).pathname;
  } catch {
    return { reason: 'is not a valid URL path' };
  }
  if (normalised.length > 1 && normalised.endsWith('/')) {
    return { reason: 'may not end with / (the platform POSTs to the exact URL; write it without the /)' };
  }
  if (RESERVED.includes(normalised)) return { reason: `${normalised} is the integrator's own` };
  return { path: normalised };
}

/** Reads a route's key from its file or variable. */
function routeKey(entry: RouteEntry, place: Place, base: string, world: Pick<ServeWorld, 'env'>): string {
  const file = entry['hmac-key-file'];
  const variable = entry['hmac-key-env'];
  if (file !== undefined && variable !== undefined) {
    throw problem(
      place,
      'hmac-key-file',
      'give "hmac-key-file" or "hmac-key-env", not both',
      'Keep the one that holds this route’s key.',
    );
  }
  if (variable !== undefined) {
    const value = world.env[variable];
    if (value === undefined || value === '') {
      throw problem(
        place,
        'hmac-key-env',
        `"hmac-key-env" names ${variable}, which is not set`,
        `Export ${variable} with this run task's HMAC key.`,
      );
    }
    return value;
  }
  if (file === undefined) {
    throw problem(
      place,
      'hmac-key-file',
      'no HMAC key: give "hmac-key-file" (a file holding the key) or "hmac-key-env" (the variable holding it)',
      'Every route of a routes file is authenticated with its own key; the key itself never goes in the file.',
    );
  }
  const path = resolve(base, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw problem(
      place,
      'hmac-key-file',
      `cannot read the HMAC key file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      'A relative "hmac-key-file" is taken from the routes file’s folder.',
    );
  }
  // Editors and `echo` add a final newline that is not part of the key configured on the platform.
  const key = text.replace(/\r?\n$/, '');
  if (key === '') {
    throw problem(
      place,
      'hmac-key-file',
      `the HMAC key file ${path} is empty`,
      'Put the run task HMAC key in it.',
    );
  }
  return key;
}

/** What routes take from the serve flags when they do not set their own. */
type RouteDefaults = Pick<RouteOptions, 'timeoutMs' | 'timeoutText' | 'maxJobs' | 'allowed'> & {
  reading?: ResultReading | undefined;
  withConfiguration?: boolean | undefined;
};

/** One checked route resolved: its key read, its command anchored, its duration, hosts and reading parsed. */
function resolveRoute(
  entry: RouteEntry,
  path: string,
  place: Place,
  context: { file: string; base: string; world: Pick<ServeWorld, 'env'>; defaults: RouteDefaults },
  warnings: string[],
): RouteOptions {
  const { file, base, world, defaults } = context;
  const hmacKey = routeKey(entry, place, base, world);
  const timeoutText = entry.timeout === undefined ? defaults.timeoutText : String(entry.timeout);
  const timeoutMs =
    entry.timeout === undefined ? defaults.timeoutMs : parseDuration(timeoutText, `route ${path}: timeout`);
  if (timeoutMs >= 60 * 60_000) {
    warnings.push(`route ${path}: timeout ${timeoutText}: the platform gives up on a task after 60 minutes`);
  }
  let allowed = defaults.allowed;
  const hosts = entry['platform-hosts'];
  if (hosts !== undefined) {
    try {
      allowed = new PlatformOrigins(hosts.map((host) => parseHostname(host, '"platform-hosts"').baseUrl));
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      throw problem(place, 'platform-hosts', error.message, error.hint ?? `Fix "platform-hosts" in ${file}.`);
    }
  }
  let reading = defaults.reading;
  if (entry['result-format'] !== undefined || entry['fail-on'] !== undefined) {
    try {
      reading = resultReading(
        entry['result-format'] ?? defaults.reading?.format ?? 'auto',
        entry['fail-on'] ?? defaults.reading?.failOn ?? 'error',
        '"result-format"',
        '"fail-on"',
      );
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      const field = error.message.startsWith('"fail-on"') ? 'fail-on' : 'result-format';
      throw problem(place, field, error.message, error.hint ?? `Fix "${field}" in ${file}.`);
    }
  }
  return {
    path,
    hmacKey,
    exec: anchorExec(entry.exec, base),
    timeoutMs,
    timeoutText,
    maxJobs: entry['max-jobs'] ?? defaults.maxJobs,
    allowed,
    ...(reading === undefined ? {} : { reading }),
    withConfiguration: entry['with-configuration'] ?? defaults.withConfiguration === true,
  };
}

/** The routes of a file, checked and resolved (keys read, commands anchored, durations and hosts parsed). */
export function readRoutesFile(
  given: string,
  world: Pick<ServeWorld, 'env' | 'cwd'>,
  defaults: RouteDefaults,
): { routes: RouteOptions[]; keyVariables: string[]; warnings: string[] } {
  const file = resolve(world.cwd, given);
  const base = dirname(file);
  const document = readDocument(file, given);
  const top = z.strictObject({ routes: z.array(z.unknown()).min(1) }).safeParse(document);
  if (!top.success) {
    const unknown = top.error.issues.find((i) => i.code === 'unrecognized_keys')?.keys[0];
    throw problem(
      { file },
      unknown ?? 'routes',
      unknown === undefined
        ? '"routes" must be a non-empty list of routes'
        : `unknown top-level field "${unknown}": the file holds "routes" only`,
      'Write the file as `routes:` followed by one entry per run task (path, exec, hmac-key-file or hmac-key-env).',
    );
  }
  const routes: RouteOptions[] = [];
  const keyVariables: string[] = [];
  const warnings: string[] = [];
  const seen = new Map<string, number>();
  top.data.routes.forEach((raw, i) => {
    const place: Place = { file, index: i + 1 };
    const entry = checkRoute(raw, place);
    const normalised = normalisePath(entry.path);
    if ('reason' in normalised) {
      throw problem(place, 'path', `"path" ${normalised.reason}`, `Fix "path" of route ${i + 1} in ${file}.`);
    }
    const path = normalised.path;
    const other = seen.get(path);
    if (other !== undefined) {
      throw problem(
        place,
        'path',
        `"path" ${path} is route ${other}'s too`,
        'Give each run task its own path.',
      );
    }
    seen.set(path, i + 1);
    routes.push(resolveRoute(entry, path, place, { file, base, world, defaults }, warnings));
    if (entry['hmac-key-env'] !== undefined) keyVariables.push(entry['hmac-key-env']);
  });
  return { routes, keyVariables, warnings };
}

/**
 * `runtask serve --routes <file>`: the integrator options with every route of the file; the serve flags that are
 * not a route's own (port, state dir, heartbeat, grace, callback timeout) apply to all, and `--timeout`,
 * `--max-jobs` and `--platform-host` are the defaults of routes that do not set theirs.
 */
export function serveOptionsFromRoutes(
  flags: ServeFlags & { routes: string },
  world: ServeWorld,
): { options: Omit<IntegratorOptions, 'log'>; warnings: string[] } {
  const given = SINGLE_ROUTE_FLAGS.filter(([name]) => flags[name] !== undefined).map(([, flag]) => flag);
  if (given.length > 0) {
    throw new UsageError(`--routes and ${given.join(', ')} cannot be given together`, {
      hint: `The routes file names each route's path, HMAC key and handler: leave out ${given.join(', ')}, or --routes.`,
    });
  }
  // Everything but the route itself is checked as for a single route (the handler checked there is unused).
  const common = serveOptionsFromFlags({ ...flags, exec: 'true' }, world);
  const { routes, keyVariables, warnings } = readRoutesFile(flags.routes, world, common.options);
  return {
    warnings: [...common.warnings, ...warnings],
    options: {
      ...common.options,
      path: routes[0]!.path,
      exec: routes[0]!.exec,
      hmacKey: undefined,
      routes,
      // A handler sees no route's key: not its own, not another's.
      secretEnvNames: [...new Set([...common.options.secretEnvNames, ...keyVariables])],
    },
  };
}
