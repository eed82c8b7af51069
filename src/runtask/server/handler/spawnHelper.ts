/**
 * The handler runner's whole program (spawner.ts says why handlers are started by a helper process): a bare Node
 * process, started with an IPC channel, that runs each command it is sent through the shell in its own process
 * group, collects stdout (up to a limit) and the tail of stderr, and reports the pid at start and the outcome at
 * exit (spawnProtocol.ts). It ends when the integrator disconnects.
 *
 * The program is one function, `handlerRunner`, and the integrator starts it as `node -e` with the function's own
 * source (`helperArgs`): the same way from the sources, the package, the Action and a single executable (whose
 * entry, src/cli/bundleEntry.ts, evaluates `-e <source>` as node would), with no file to find. So the function
 * refers to nothing outside itself but globals: the builtin module it needs comes from
 * `process.getBuiltinModule`, which evaluated source can reach where it has no `require`.
 */
import type { HelperMessage, HelperRequest } from './spawnProtocol.js';

/** The handler runner: listens on the IPC channel until the integrator disconnects. */
export function handlerRunner(): void {
  const { spawn } = process.getBuiltinModule('node:child_process');

  /** A message to the integrator, while it is still connected. */
  const send = (message: HelperMessage): void => {
    if (process.connected) process.send?.(message);
  };

  /** Kills what is left of a handler's process group (a background process holding stdout open). */
  const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
    if (pid === undefined) return;
    try {
      process.kill(process.platform === 'win32' ? pid : -pid, signal);
    } catch {
      // already gone
    }
  };

  /** Starts one handler and reports on it: `started` with its pid, then exactly one `ended`. */
  const runHandler = ({ id, request }: HelperRequest): void => {
    let stdout = '';
    let stdoutTruncated = false;
    let stderr = '';
    let done = false;
    const end = (outcome: {
      exitCode: number | null;
      signal: NodeJS.Signals | null;
      spawnError?: string;
    }): void => {
      if (done) return;
      done = true;
      child.stdout?.destroy();
      child.stderr?.destroy();
      send({ type: 'ended', id, stdout, stdoutTruncated, stderrTail: stderr, ...outcome });
    };
    const child = spawn(request.command, {
      shell: true,
      cwd: request.cwd,
      env: request.env,
      detached: process.platform !== 'win32',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.on('spawn', () => send({ type: 'started', id, pid: child.pid! }));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length + chunk.length > request.stdoutLimit) {
        stdoutTruncated = true;
        stdout += chunk.slice(0, Math.max(0, request.stdoutLimit - stdout.length));
      } else stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-request.stderrTail);
    });
    child.on('error', (error: Error) => end({ exitCode: null, signal: null, spawnError: error.message }));
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      // Leftovers in the group (a background process holding stdout open) go with the handler.
      killGroup(child.pid, 'SIGKILL');
      const closeWait = setTimeout(() => end({ exitCode: code, signal }), request.closeWaitMs);
      child.on('close', () => {
        clearTimeout(closeWait);
        end({ exitCode: code, signal });
      });
    });
  };

  // This function is the helper process's whole program (its own src/cli/): the process it reads is the helper's.
  // eslint-disable-next-line no-restricted-properties -- the helper's own main program, see above
  process.on('disconnect', () => process.exit(0));
  // eslint-disable-next-line no-restricted-properties -- the helper's own main program, see above
  process.on('message', (message: HelperRequest) => runHandler(message));
}

/** Node's arguments that run the handler runner: its source, called. */
export function helperArgs(): string[] {
  return ['-e', `(${handlerRunner.toString()})();`];
}
