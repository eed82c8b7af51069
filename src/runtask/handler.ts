/**
 * Running the `--exec` handler: through the shell, in its own process group (so a timeout or shutdown kills
 * everything it started), with a prepared environment, stdout captured for the result and the tail of stderr
 * kept for the message. Never throws for anything the handler does.
 */
import { spawn } from 'node:child_process';

/** What to run and how long it may take. */
export interface HandlerRun {
  command: string;
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL (default 5 s). */
  killGraceMs?: number;
  /** Aborting stops the handler like a timeout does. */
  signal?: AbortSignal;
}

/** How the handler ended and what it printed. */
export interface HandlerExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  stdout: string;
  /** True when stdout went past the capture limit and was cut. */
  stdoutTruncated: boolean;
  stderrTail: string;
  durationMs: number;
  /** Set when the command could not be started at all. */
  spawnError?: string;
}

const STDOUT_LIMIT = 8 * 1024 * 1024;
const STDERR_TAIL = 16 * 1024;
/** How long to wait for the output pipes to close once the handler itself has exited. */
const CLOSE_WAIT_MS = 1_000;

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    // A negative pid signals the whole process group: the shell, the handler and whatever they started.
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
  } catch {
    // already gone
  }
}

/** Runs the handler to its end, a timeout or an abort. */
export function runHandler(run: HandlerRun): Promise<HandlerExit> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(run.command, {
      shell: true,
      cwd: run.cwd,
      env: run.env,
      detached: process.platform !== 'win32',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stdoutTruncated = false;
    let stderr = '';
    let timedOut = false;
    let aborted = false;
    let finished = false;
    let killTimer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length + chunk.length > STDOUT_LIMIT) {
        stdoutTruncated = true;
        stdout += chunk.slice(0, Math.max(0, STDOUT_LIMIT - stdout.length));
      } else stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
    const stop = (why: 'timeout' | 'abort'): void => {
      if (finished) return;
      if (why === 'timeout') timedOut = true;
      else aborted = true;
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), run.killGraceMs ?? 5_000);
    };
    const timer = setTimeout(() => stop('timeout'), run.timeoutMs);
    const onAbort = (): void => stop('abort');
    run.signal?.addEventListener('abort', onAbort, { once: true });
    if (run.signal?.aborted) stop('abort');

    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: string): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      run.signal?.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        exitCode,
        signal,
        timedOut,
        aborted,
        stdout,
        stdoutTruncated,
        stderrTail: stderr,
        durationMs: Date.now() - started,
        ...(spawnError === undefined ? {} : { spawnError }),
      });
    };
    child.on('error', (error) => finish(null, null, error.message));
    child.on('exit', (code, signal) => {
      // Leftovers in the group (a background process holding stdout open) go with the handler.
      killGroup(child.pid, 'SIGKILL');
      const closeWait = setTimeout(() => finish(code, signal), CLOSE_WAIT_MS);
      child.on('close', () => {
        clearTimeout(closeWait);
        finish(code, signal);
      });
    });
  });
}
