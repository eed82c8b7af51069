/**
 * Running the `--exec` handler: through the shell, in its own process group (so a timeout or shutdown kills
 * everything it started), with a prepared environment, stdout captured for the result and the tail of stderr
 * kept for the message. Never throws for anything the handler does. The process is started by a helper
 * (spawner.ts), so that starting it never blocks the integrator's event loop.
 */
import { Spawner, type SpawnOutcome } from './spawner.js';

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

/** The helper that starts handlers for this process (see spawner.ts). */
const spawner = new Spawner();

/** Starts the helper that runs handlers, so that the first request does not wait for it. */
export function prepareHandlers(): void {
  spawner.warm();
}

/** Runs the handler to its end, a timeout or an abort. */
export function runHandler(run: HandlerRun): Promise<HandlerExit> {
  const started = Date.now();
  return new Promise((resolve) => {
    let pid: number | undefined;
    let timedOut = false;
    let aborted = false;
    let finished = false;
    let killTimer: NodeJS.Timeout | undefined;
    const stop = (why: 'timeout' | 'abort'): void => {
      if (finished || timedOut || aborted) return;
      if (why === 'timeout') timedOut = true;
      else aborted = true;
      // Before the helper has reported the pid, the kill happens as soon as it does.
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), run.killGraceMs ?? 5_000);
    };
    const timer = setTimeout(() => stop('timeout'), run.timeoutMs);
    const onAbort = (): void => stop('abort');
    run.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (outcome: SpawnOutcome): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      run.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        timedOut,
        aborted,
        stdout: outcome.stdout,
        stdoutTruncated: outcome.stdoutTruncated,
        stderrTail: outcome.stderrTail,
        durationMs: Date.now() - started,
        ...(outcome.spawnError === undefined ? {} : { spawnError: outcome.spawnError }),
      });
    };
    spawner.run(
      {
        command: run.command,
        cwd: run.cwd,
        env: run.env,
        stdoutLimit: STDOUT_LIMIT,
        stderrTail: STDERR_TAIL,
        closeWaitMs: CLOSE_WAIT_MS,
      },
      {
        started(startedPid) {
          pid = startedPid;
          if (timedOut || aborted) killGroup(pid, 'SIGTERM');
        },
        ended: finish,
      },
    );
    if (run.signal?.aborted) stop('abort');
  });
}
