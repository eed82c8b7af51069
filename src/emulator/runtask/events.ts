/**
 * What the run task side of the platform saw, as events: each callback with the platform's answer and the
 * contract violations it found, each download (plan JSON 307, configuration version 302, blob), each request to a
 * path it does not serve, the timeouts that errored a task result, and warnings. `runtask send` turns them into its timeline and report.
 */

/** Task result statuses on the platform (run-tasks.md §6); the integrator may only report the middle three. */
export type PlatformTaskStatus = 'pending' | 'running' | 'passed' | 'failed' | 'errored' | 'unreachable';

/** The rules a callback can break, one code each (used in `--json` reports). */
export type ViolationRule =
  | 'callback-method'
  | 'token'
  | 'content-type'
  | 'not-json'
  | 'document'
  | 'status'
  | 'limits'
  | 'outcomes-not-offered'
  | 'after-final'
  | 'verification-callback'
  | 'callback-url';

/** One broken rule, in words that say what the platform expects. */
export interface Violation {
  rule: ViolationRule;
  message: string;
}

/** A callback as the platform judged it. */
export interface CallbackEvent {
  kind: 'callback';
  at: number;
  method: string;
  /** The platform's answer. */
  http: number;
  /** What the integrator reported, when the document was readable. */
  status?: string | undefined;
  message?: string | undefined;
  url?: string | undefined;
  outcomes: number;
  violations: Violation[];
  /** The task result's status after this callback (absent when the URL named no task result). */
  taskStatus?: PlatformTaskStatus | undefined;
}

/** A plan JSON, configuration version or blob request. */
export interface DownloadEvent {
  kind: 'download';
  at: number;
  what: 'plan-json' | 'configuration-version' | 'blob';
  http: number;
  /** Bytes sent (blobs) or why it was refused. */
  bytes?: number | undefined;
  detail?: string | undefined;
}

/** The platform errored the task result: no progress within the window, or past the maximum duration. */
export interface TimeoutEvent {
  kind: 'timeout';
  at: number;
  window: 'progress-window' | 'max-duration';
  ms: number;
}

/**
 * A request to a path the local platform does not serve (answered 404): an integrator that calls more of the
 * platform's API than the run task paths (`GET /api/v2/runs/<id>`, say), which a real platform would answer.
 */
export interface UnservedEvent {
  kind: 'unserved';
  at: number;
  method: string;
  /** The path, without its query. */
  path: string;
  http: number;
}

/** Something worth knowing that is not a broken rule. */
export interface WarningEvent {
  kind: 'warning';
  at: number;
  message: string;
}

/** Any event of the platform. */
export type PlatformEvent = CallbackEvent | DownloadEvent | UnservedEvent | TimeoutEvent | WarningEvent;

/** The events of one platform, in order, with listeners (the driver awaits them instead of polling). */
export class PlatformEvents {
  readonly list: PlatformEvent[] = [];
  private readonly listeners = new Set<(event: PlatformEvent) => void>();

  /** Records an event and tells the listeners. */
  add(event: PlatformEvent): void {
    this.list.push(event);
    for (const listener of [...this.listeners]) listener(event);
  }

  /** Calls `listener` for every new event; returns the unsubscribe function. */
  subscribe(listener: (event: PlatformEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
