/**
 * The `provider runtask serve` core: flags (or a routes file) → options, start the integrator, print where it
 * listens, serve until the signal (SIGINT/SIGTERM) fires, then stop gracefully (`--grace`) and exit 0.
 */
import { EventLog } from '../../runtask/server/log.js';
import { startIntegrator } from '../../runtask/server/server.js';
import { graceMs, serveOptionsFromFlags, type ServeFlags } from '../../runtask/server/options.js';
import { passwordsOf, redactDatabaseUrl } from '../../runtask/server/redact.js';
import type { RunContext } from '../context.js';

/** Runs the integrator until `context.signal` fires; tests subscribe to the event log through `onLog`. */
export async function runServe(
  context: RunContext,
  flags: ServeFlags,
  onLog?: (log: EventLog) => void,
): Promise<number> {
  const { output, signal } = context;
  const { options, warnings } =
    flags.routes === undefined
      ? serveOptionsFromFlags(flags, context)
      : (await import('../../runtask/server/routes/routesFile.js')).serveOptionsFromRoutes(
          { ...flags, routes: flags.routes },
          context,
        );
  const grace = graceMs(flags);
  output.addSecret(options.hmacKey);
  for (const route of options.routes ?? []) output.addSecret(route.hmacKey);
  // Masked wherever it would appear (a driver's error, a handler's output): messages name the URL redacted.
  for (const secret of options.databaseUrl === undefined ? [] : passwordsOf(options.databaseUrl)) {
    output.addSecret(secret);
  }
  const log = EventLog.for(output);
  onLog?.(log);
  const integrator = await startIntegrator({ ...options, log });
  const started = {
    url: integrator.url,
    host: options.host,
    port: integrator.port,
    path: options.path,
    healthz: new URL('/healthz', integrator.url).href,
    metrics: new URL('/metrics', integrator.url).href,
    ...(options.databaseUrl === undefined
      ? { store: 'journal', stateDir: options.stateDir }
      : {
          store: 'postgres',
          database: redactDatabaseUrl(options.databaseUrl),
          role: options.role ?? 'all',
        }),
    platformHosts: [...options.allowed.origins],
    // A routes file gives every route a key of its own.
    hmac: options.routes !== undefined || options.hmacKey !== undefined,
    maxJobs: options.maxJobs,
    ...(options.routes === undefined
      ? {}
      : {
          routes: options.routes.map((route) => ({
            path: route.path,
            url: new URL(route.path, integrator.url).href,
            maxJobs: route.maxJobs,
            platformHosts: [...route.allowed.origins],
          })),
        }),
  };
  const as = options.role === undefined || options.role === 'all' ? '' : ` as a ${options.role}`;
  if (output.json) output.resultJson(started);
  else if (options.routes === undefined)
    output.result(`provider runtask serve listening on ${integrator.url}${as}`);
  else {
    output.result(`provider runtask serve listening for ${integrator.routes.length} run tasks:`);
    for (const route of integrator.routes) output.result(`  ${route.url}`);
  }
  const where =
    options.routes === undefined
      ? integrator.url
      : `${new URL('/', integrator.url).href} (routes ${integrator.routes.map((r) => r.path).join(', ')})`;
  log.info('serve.started', `listening on ${where}`, {
    url: integrator.url,
    ...(options.databaseUrl === undefined
      ? { state_dir: options.stateDir }
      : { database: redactDatabaseUrl(options.databaseUrl), role: options.role ?? 'all' }),
    platform_hosts: started.platformHosts.join(','),
    max_jobs: options.maxJobs,
    routes: options.routes?.map((route) => route.path).join(','),
  });
  // A worker verifies nothing: it answers no run task request.
  if (!started.hmac && options.role !== 'worker') {
    log.warn(
      'serve.unauthenticated',
      'no HMAC key: requests are NOT authenticated, anyone who can reach this port can start checks',
      { hint: 'Set the run task HMAC key in RUNTASK_HMAC_KEY, or pass --hmac-key-file.' },
    );
  }
  for (const warning of warnings) log.warn('serve.config', warning);

  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  log.info(
    'serve.stopping',
    `stopping: new requests get 503; waiting up to ${flags.grace} for running checks`,
    totalCounts(integrator.routes.map((route) => route.jobs.counts())),
  );
  await integrator.stop(grace);
  log.info('serve.stopped', 'stopped');
  return 0;
}

/** Job counts of every route added up. */
function totalCounts(
  counts: { queued: number; running: number; reporting: number }[],
): Record<string, number> {
  const total = { queued: 0, running: 0, reporting: 0 };
  for (const c of counts) {
    total.queued += c.queued;
    total.running += c.running;
    total.reporting += c.reporting;
  }
  return total;
}
