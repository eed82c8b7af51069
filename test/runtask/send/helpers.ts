/**
 * Shared set-up of the `runtask send` tests: a free port for the local platform, `runtask serve` started
 * in-process (as the runtask tests do) with its platform host set to that port, `runtask send` run through the
 * CLI or through its core with shortened retry pauses and linger (test-only integrators are in integrators.ts).
 */
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exitCodeFor } from '../../../src/errors.js';
import type { LogEvent } from '../../../src/runtask/server/log.js';
import { runServe } from '../../../src/commands/runtask/serve.js';
import type { SendFlags } from '../../../src/runtask/send/options.js';
import type { SendTuning } from '../../../src/runtask/send/post.js';
import { runSend } from '../../../src/commands/runtask/send.js';
import { Output } from '../../../src/ui/output.js';
import { Capture, coreContext, runCli } from '../../helpers/cli.js';
import { normalise } from '../../helpers/normalise.js';
import type { InProcessResult } from '../../helpers/result.js';
import { removeTempDirs, tempDir } from '../../helpers/tmp.js';

/** The HMAC key the tests use. */
export const KEY = 'send-test-hmac-key-7a21';

/** The serve handler of these tests, run with this Node. */
export const HANDLER = `"${process.execPath}" "${fileURLToPath(new URL('./handler.mjs', import.meta.url))}"`;

/** Short timings for the core: retries 20 ms apart, 300 ms of linger. */
export const FAST: Partial<SendTuning> = {
  retryDelaysMs: [20, 20, 20],
  lingerMs: 300,
  attemptTimeoutMs: 5_000,
};

/**
 * A free port for the local platform, whose port must be known before the integrator starts. It is picked
 * below Linux's ephemeral range (32768+), where listeners on port 0 never land, so that no other test's server
 * can take it between this check and its use.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!free) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
}

/** A `runtask serve` running in-process. */
export interface ServeHandle {
  url: string;
  events: LogEvent[];
  stop(): Promise<number>;
}

/** Starts `runtask serve --exec <test handler>` allowing the platform at `platformPort`. */
export async function startServe(
  platformPort: number,
  options: { key?: string; env?: Record<string, string> } = {},
): Promise<ServeHandle> {
  const dir = tempDir('serve');
  const controller = new AbortController();
  const output = new Output({ stdout: new Capture(), stderr: new Capture(), env: {} });
  const events: LogEvent[] = [];
  let started: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (started = resolve));
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, ...options.env };
  if (options.key !== undefined) env.RUNTASK_HMAC_KEY = options.key;
  const context = coreContext(output, {
    env,
    cwd: dir,
    tmpDir: dir,
    user: 'test',
    signal: controller.signal,
  });
  const done = runServe(
    context,
    {
      host: '127.0.0.1',
      port: '0',
      path: '/',
      exec: HANDLER,
      platformHost: [`http://127.0.0.1:${platformPort}`],
      heartbeat: '4m',
      timeout: '20s',
      maxJobs: '4',
      grace: '5s',
      callbackTimeout: '10s',
      stateDir: join(dir, 'state'),
    },
    (log) =>
      log.subscribe((event) => {
        events.push(event);
        if (event.event === 'serve.started') started(String(event.fields.url));
      }),
  );
  return {
    url: await Promise.race([url, done.then(() => Promise.reject(new Error('serve stopped')))]),
    events,
    async stop() {
      controller.abort('SIGTERM');
      const code = await done;
      // Many tests that start one run concurrently: each frees its folder as it stops.
      removeTempDirs(dir);
      return code;
    },
  };
}

/** `provider runtask send` through the CLI, with the platform on `port`. */
export function sendCli(
  url: string,
  port: number,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<InProcessResult> {
  return runCli(['runtask', 'send', url, '--port', String(port), ...args], { env });
}

/** The flags commander would hand over, for the core. */
export function flags(overrides: Partial<SendFlags> = {}): SendFlags {
  return {
    stage: 'post_plan',
    enforcement: 'mandatory',
    outcomes: true,
    progressWindow: '10m',
    maxDuration: '60m',
    host: '127.0.0.1',
    port: '0',
    ...overrides,
  };
}

/** `runtask send` through its core with short timings; the exit code as the program's top-level catch gives it. */
export async function sendFast(
  url: string,
  overrides: Partial<SendFlags> = {},
  options: { json?: boolean; env?: Record<string, string>; tuning?: Partial<SendTuning> } = {},
): Promise<InProcessResult & { report: Record<string, unknown> | undefined }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const output = new Output({ stdout, stderr, env: {}, json: options.json });
  let exitCode = 0;
  try {
    const context = coreContext(output, { env: options.env ?? {} });
    exitCode = await runSend(
      context,
      { ...flags(overrides), integratorUrl: url },
      { ...FAST, ...options.tuning },
    );
  } catch (error) {
    output.failure(error);
    exitCode = exitCodeFor(error);
  }
  const report = options.json ? (JSON.parse(stdout.text) as Record<string, unknown>) : undefined;
  return { exitCode, stdout: stdout.text, stderr: stderr.text, report };
}

/**
 * A `runtask send` timeline made comparable: the shared normaliser (ports, ids, durations), then each line's
 * elapsed time (`+T`) and the request's size (`N bytes`, which follows from the run's ports and ids).
 */
export function normaliseTimeline(text: string): string {
  return normalise(text)
    .replace(/ *\+\d+\.\d{3}s/g, '+T')
    .replace(/\d+ bytes/g, 'N bytes');
}
