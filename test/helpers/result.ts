/**
 * The one shape of a finished CLI run, whether it ran in-process (`runCli` in cli.ts) or as a spawned process
 * (`spawnCli`/`spawnOnTerminal` in spawn-cli.ts and the suites' own spawns of bin/provider.cjs).
 */

/** What one run of the CLI produced. */
export interface CliResult {
  /** The exit code; null only when a spawned process was ended by a signal. */
  exitCode: number | null;
  /** The signal that ended a spawned process, when the spawner records it (null: it exited by itself). */
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** An in-process run's result: no signal ends it, so it always has an exit code. */
export type InProcessResult = CliResult & { exitCode: number };
