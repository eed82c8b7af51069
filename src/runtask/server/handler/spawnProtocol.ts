/**
 * What the integrator (spawner.ts) and its handler runner (spawnHelper.ts) say to each other over the IPC
 * channel: a request to start one handler, and the runner's answers, its pid once it started and its outcome
 * once it is over. Types only: the runner imports nothing at run time.
 */

/** One handler to start. */
export interface SpawnRequest {
  command: string;
  cwd: string;
  env: Record<string, string>;
  stdoutLimit: number;
  stderrTail: number;
  /** How long to wait for the output pipes to close once the handler itself has exited. */
  closeWaitMs: number;
}

/** How a handler ended, as the helper saw it. */
export interface SpawnOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stdoutTruncated: boolean;
  stderrTail: string;
  spawnError?: string;
}

/** What the integrator sends the runner: a handler to start, by an id of the integrator's. */
export interface HelperRequest {
  id: number;
  request: SpawnRequest;
}

/** What the runner sends back: the handler's pid once it started, and its outcome once it is over. */
export type HelperMessage =
  { type: 'started'; id: number; pid: number } | ({ type: 'ended'; id: number } & SpawnOutcome);
