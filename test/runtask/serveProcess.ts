/**
 * `provider runtask serve` spawned as a user runs it (`node bin/provider.cjs runtask serve --json …`), against the
 * test platform, with its JSON log collected line by line. A crash of the process must fail a test at once and
 * say why, so every wait here is raced against the process ending (`orExit`).
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import type { CliResult } from '../helpers/result.js';
import type { TestPlatform } from './platform.js';

/** The program as users run it. */
export const BIN = join(REPO_ROOT, 'bin', 'provider.cjs');

/** One line of the integrator's JSON log. */
export interface LogLine {
  event: string;
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** How the process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running `runtask serve` process. */
export interface ServeProcess {
  child: ChildProcess;
  /** Where the platform POSTs. */
  url: string;
  stateDir: string;
  stderr(): string;
  /** The log lines so far. */
  events(): LogLine[];
  exit: Promise<Exit>;
  /** Resolves with `promise`, or rejects (with the end of the log) if the process ends first. */
  orExit<T>(promise: Promise<T>): Promise<T>;
  /** Resolves with the first log line (already written or to come) with this event that matches. */
  waitForEvent(name: string, match?: (line: LogLine) => boolean): Promise<LogLine>;
  /** GET /healthz: status and parsed body. */
  health(): Promise<{ status: number; body: HealthBody }>;
  /** SIGTERM, then the exit. */
  stop(): Promise<Exit>;
}

/** What /healthz answers. */
export interface HealthBody {
  status: string;
  jobs: Record<string, number>;
  store?: Record<string, unknown> & { kind?: string; status?: string };
}

/** Builds dist/ once when it is missing (tests that spawn bin/provider.cjs run the bundled program). */
export function ensureBuilt(): void {
  if (!existsSync(join(REPO_ROOT, 'dist', 'bundle', 'provider.js'))) {
    execSync('npm run build', { cwd: REPO_ROOT, stdio: 'inherit' });
  }
}

/** Options of `spawnServe`. */
export interface SpawnServeOptions {
  /** The platform the access token may go to (only its URL is used). */
  platform: Pick<TestPlatform, 'url'>;
  stateDir: string;
  /** The handler; empty for none (a routes file in `args` names each route's). */
  exec: string;
  /** The HMAC key, given in RUNTASK_HMAC_KEY. */
  key: string;
  /** More flags (`--max-jobs`, …). */
  args?: string[];
  /** More environment (handlers see it too). */
  env?: Record<string, string>;
  /** Flags for node itself, before the script (e.g. `--import` of a fault hook). */
  nodeArgs?: string[];
  cwd: string;
}

/** The command line of `runtask serve` for these options (node flags first, then the script and its flags). */
function serveArgs(options: SpawnServeOptions): string[] {
  return [
    ...(options.nodeArgs ?? []),
    BIN,
    'runtask',
    'serve',
    '--json',
    '--port',
    '0',
    ...(options.exec === '' ? [] : ['--exec', options.exec]),
    '--platform-host',
    options.platform.url,
    '--state-dir',
    options.stateDir,
    ...(options.args ?? []),
  ];
}

/** Spawns the integrator and resolves once it printed its start-up line (rejects if it exits first). */
export async function spawnServe(options: SpawnServeOptions): Promise<ServeProcess> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    TMPDIR: process.env.TMPDIR,
    CI: 'true',
    NO_COLOR: '1',
    TEST_PLATFORM_URL: options.platform.url,
    RUNTASK_HMAC_KEY: options.key,
    ...options.env,
  };
  const args = serveArgs(options);
  const child = spawn(process.execPath, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const lines: LogLine[] = [];
  const waiters = new Set<{ name: string; match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  const exit = new Promise<Exit>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const tail = (): string => err.trim().split('\n').slice(-15).join('\n');
  const orExit = <T>(promise: Promise<T>): Promise<T> =>
    Promise.race([
      promise,
      exit.then((how) => {
        throw new Error(
          `runtask serve ended (exit ${how.code}, signal ${how.signal}); its log ends:\n${tail()}`,
        );
      }),
    ]);
  child.stderr.setEncoding('utf8');
  let partial = '';
  child.stderr.on('data', (chunk: string) => {
    err += chunk;
    partial += chunk;
    let newline: number;
    while ((newline = partial.indexOf('\n')) >= 0) {
      const text = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        continue;
      }
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.name === line.event && w.match(line)) {
          waiters.delete(w);
          w.resolve(line);
        }
      }
    }
  });
  child.stdout.setEncoding('utf8');
  const firstLine = new Promise<string>((resolve) => {
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const newline = out.indexOf('\n');
      if (newline >= 0) resolve(out.slice(0, newline));
    });
  });
  const started = JSON.parse(await orExit(firstLine)) as { url: string };
  return {
    child,
    url: started.url,
    stateDir: options.stateDir,
    stderr: () => err,
    events: () => lines,
    exit,
    orExit,
    waitForEvent(name, match = () => true) {
      const found = lines.find((l) => l.event === name && match(l));
      if (found) return Promise.resolve(found);
      return orExit(new Promise<LogLine>((resolve) => waiters.add({ name, match, resolve })));
    },
    async health() {
      const response = await orExit(fetch(new URL('/healthz', started.url)));
      return { status: response.status, body: (await response.json()) as HealthBody };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exit;
    },
  };
}

/** Spawns the integrator expecting it to refuse to start: resolves with its exit code and output. */
export async function spawnServeExpectingExit(options: SpawnServeOptions): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    CI: 'true',
    NO_COLOR: '1',
    RUNTASK_HMAC_KEY: options.key,
  };
  const child = spawn(process.execPath, serveArgs(options), {
    cwd: options.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  // A process that did start is stopped: the caller expected it not to.
  const timer = setTimeout(() => child.kill('SIGTERM'), 10_000);
  const how = await new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  clearTimeout(timer);
  return { exitCode: how.code, signal: how.signal, stdout, stderr };
}

/**
 * Puts a file where the folder `dir` is (nothing can be written under it, by root either). The integrator may
 * re-create the folder between the removal and the rename (it notices a removed folder): then again.
 */
export function replaceWithFile(dir: string): void {
  const file = `${dir}.file`;
  for (;;) {
    writeFileSync(file, 'a file where the state dir was\n');
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(file, dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  }
}
