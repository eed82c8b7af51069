/**
 * The process as a command core sees it: the one context type every core takes first. Only src/cli/ builds one
 * from the real process (src/cli/context.ts); tests build their own. Below src/cli/, nothing reads the process's
 * context (`process.env`, `argv`, `cwd()`, the standard streams, `exit`, signals) but through this.
 */
import type { Output, TextStream } from '../ui/output.js';
import type { Confirm } from '../ui/prompt.js';

/** The process of one command run: environment, folders, the output sink, the terminal, stdin, Ctrl-C, clock. */
export interface RunContext {
  env: Record<string, string | undefined>;
  cwd: string;
  homeDir: string;
  /** The system's temporary folder (runtask serve's default state folder lives under it). */
  tmpDir: string;
  /** Tells users apart under a shared temporary folder: the uid where there is one. */
  user: string;
  /** The sink of this run, built from the global flags (--json, --quiet, --verbose, --no-color). */
  output: Output;
  /** The terminal spinners draw on (the run's stderr); plain lines go through `output` regardless. */
  stderr: TextStream;
  /** Reads all of standard input (`runtask callback --outcomes -`). */
  readStdin: () => Promise<string>;
  /** Aborted on SIGINT or SIGTERM; `reason` is the signal name. */
  signal: AbortSignal;
  /** Asks the person at the terminal a yes/no question; absent when nobody can be asked (no terminal). */
  confirm?: Confirm | undefined;
  /** The wall clock. */
  now: () => Date;
}
