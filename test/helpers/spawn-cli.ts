/**
 * The built `bin/provider.cjs` spawned as a new user runs it: in a temp folder, with a fresh shell's environment,
 * in CI mode (pipes, CI=true) or on a pseudo-terminal (`script` from util-linux). Spawned asynchronously, so an
 * emulator in the test process keeps serving while the child runs. `cliPerTest` starts one that keeps running
 * (a server: `provider emulate`) and ends it after the test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach } from 'vitest';
import { REPO_ROOT } from './paths.js';
import type { CliResult } from './result.js';

const BIN = path.join(REPO_ROOT, 'bin', 'provider.cjs');
/** More terminal output than any of these runs prints (1 MiB). */
const MAX_SCREEN = 1 << 20;

/** Builds dist/ when it is missing (bin/provider.cjs runs dist/bundle/). */
export function ensureBuilt(): void {
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist/bundle/provider.js'))) {
    spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'ignore' });
  }
}

/** A fresh shell's environment: no token, organization or key unless given; millisecond retries. */
function freshEnv(home: string, extra: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    PROVIDER_RETRY_DELAY: '2ms',
    PROVIDER_POLL_INTERVAL: '5ms',
    ...extra,
  };
}

/** `node bin/provider.cjs <args>` in `cwd` with pipes, in CI mode (CI=true, no colour) unless `env` says otherwise. */
export function spawnCli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: freshEnv(cwd, { CI: 'true', NO_COLOR: '1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (exitCode, signal) => resolve({ exitCode, signal, stdout, stderr })),
  );
}

/**
 * The same on a pseudo-terminal (`script -qfec`, whose terminal reports 0 columns as some CI terminals do):
 * stdout and stderr arrive together as the user sees them (all in `stdout`), line ends as `\n`; the exit code
 * is the command's.
 */
export function spawnOnTerminal(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<CliResult> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qfec', quoted, '/dev/null'], {
    cwd,
    env: freshEnv(cwd, { TERM: 'xterm-256color', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let shown = '';
  const take = (chunk: Buffer): void => {
    shown += chunk.toString();
    // A screen that keeps redrawing after the command should have ended is a failure, not a wait.
    if (shown.length > MAX_SCREEN) child.kill('SIGKILL');
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return new Promise((resolve) =>
    child.on('close', (exitCode, signal) =>
      resolve({ exitCode, signal, stdout: shown.replace(/\r\n/g, '\n'), stderr: '' }),
    ),
  );
}

/** A `provider` process left running, its output collected. */
export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line; rejects if the process ends before printing one. */
  firstLine: Promise<string>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `node bin/provider.cjs <args>` in `cwd` as `spawnCli` runs it (pipes, CI mode), without waiting for
 * it to end: for a command that serves. What is still running after each test of the calling file is killed,
 * so a test that failed half-way leaves no server behind.
 */
export function cliPerTest(): (args: string[], cwd: string, env?: Record<string, string>) => RunningCli {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return (args, cwd, env = {}) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: freshEnv(cwd, { CI: 'true', NO_COLOR: '1', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    const firstLine = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const newline = out.indexOf('\n');
        if (newline >= 0) resolve(out.slice(0, newline));
      });
      void exit.then(({ code }) =>
        reject(new Error(`exited with ${code} before printing a line; stderr: ${err}`)),
      );
    });
    // Runs that are expected to fail never print a line: that rejection is theirs to ignore.
    firstLine.catch(() => undefined);
    child.stderr.on('data', (chunk: string) => {
      err += chunk;
    });
    return { child, stdout: () => out, stderr: () => err, firstLine, exit };
  };
}
