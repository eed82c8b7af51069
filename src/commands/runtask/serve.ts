/**
 * The `provider runtask serve` core: flags → options, start the integrator, print where it listens, serve until
 * the signal (SIGINT/SIGTERM) fires, then stop gracefully (`--grace`) and exit 0.
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
  const { options, warnings } = serveOptionsFromFlags(flags, context);
  const grace = graceMs(flags);
  output.addSecret(options.hmacKey);
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
    ...(options.databaseUrl === undefined
      ? { store: 'journal', stateDir: options.stateDir }
      : { store: 'postgres', database: redactDatabaseUrl(options.databaseUrl) }),
    platformHosts: [...options.allowed.origins],
    hmac: options.hmacKey !== undefined,
    maxJobs: options.maxJobs,
  };
  if (output.json) output.resultJson(started);
  else output.result(`provider runtask serve listening on ${integrator.url}`);
  log.info('serve.started', `listening on ${integrator.url}`, {
    url: integrator.url,
    ...(options.databaseUrl === undefined
      ? { state_dir: options.stateDir }
      : { database: redactDatabaseUrl(options.databaseUrl) }),
    platform_hosts: started.platformHosts.join(','),
    max_jobs: options.maxJobs,
  });
  if (options.hmacKey === undefined) {
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
    {
      ...integrator.jobs.counts(),
    },
  );
  await integrator.stop(grace);
  log.info('serve.stopped', 'stopped');
  return 0;
}
