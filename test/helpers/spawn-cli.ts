/**
 * The built `bin/provider.cjs` spawned as a new user runs it: in a temp folder, with a fresh shell's environment,
 * in CI mode (pipes, CI=true) or on a pseudo-terminal (`script` from util-linux). Spawned asynchronously, so an
 * emulator in the test process keeps serving while the child runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
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
