/**
 * What a command gets from the process: argv, env, cwd, streams and a signal that fires on SIGINT/SIGTERM.
 * Tests build one of these with buffers instead of the real process.
 */
import type { TextStream } from '../ui/output.js';
import { Output } from '../ui/output.js';
import type { Confirm } from '../ui/prompt.js';

/** The process, as seen by the program. */
export interface CliIo {
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  homeDir: string;
  stdout: TextStream;
  stderr: TextStream;
  stdinIsTTY: boolean;
  /** Aborted on SIGINT or SIGTERM; `reason` is the signal name. */
  signal: AbortSignal;
  /** Asks the person at the terminal a yes/no question; absent means nobody can be asked. */
  confirm?: Confirm | undefined;
}

/** The options every command shares (declared once on the program). */
export interface GlobalOptions {
  hostname?: string;
  organization?: string;
  namespace?: string;
  name?: string;
  token?: string;
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
  config?: string;
}

/** Builds the output sink for one run from the global options. */
export function createOutput(io: CliIo, options: GlobalOptions): Output {
  return new Output({
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    json: options.json,
    quiet: options.quiet,
    verbose: options.verbose,
    color: options.color === false ? false : undefined,
  });
}
