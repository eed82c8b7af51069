/**
 * One task result on the platform: its status and timestamps, and its two windows (run-tasks.md §6): the
 * progress window, restarted by every accepted update, and the maximum duration, both counted from the moment
 * the request was sent. When one closes before a final status, the platform errors the task result.
 */
import type { PlatformEvents, PlatformTaskStatus } from './events.js';
import type { Outcome } from '../../terraform/runtask/result.js';
import type { IssuedTask } from './issue.js';

/** How long the platform waits. */
export interface TaskWindows {
  progressWindowMs: number;
  maxDurationMs: number;
}

const FINAL: readonly PlatformTaskStatus[] = ['passed', 'failed', 'errored', 'unreachable'];

/** A task result and its windows. */
export class PlatformTaskResult {
  status: PlatformTaskStatus = 'pending';
  message: string | undefined;
  url: string | undefined;
  /**
   * The outcomes the run page shows: those of the latest accepted callback that carried any. Whether the real
   * platform replaces or appends when several callbacks carry outcomes is undocumented (run-tasks.md §4.3 only
   * calls sending them once, while running, good practice); replacing never shows one twice.
   */
  outcomes: Outcome[] = [];
  readonly timestamps: Record<string, string> = {};
  private progressTimer: NodeJS.Timeout | undefined;
  private maxTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly issued: IssuedTask,
    private readonly windows: TaskWindows,
    readonly events: PlatformEvents,
    readonly now: () => number,
    readonly issuedAt: number = now(),
  ) {}

  /** True once nothing can change the status any more. */
  get final(): boolean {
    return FINAL.includes(this.status);
  }

  /** The request went out: the maximum duration and the progress window start now. */
  requestSent(): void {
    if (this.issued.kind === 'verification' || this.maxTimer !== undefined) return;
    const { maxDurationMs } = this.windows;
    this.maxTimer = setTimeout(() => this.timeOut('max-duration', maxDurationMs), maxDurationMs);
    this.restartProgressWindow();
  }

  /** The integrator never accepted the request: the platform gives up on it. */
  unreachable(): void {
    if (!this.final) this.setStatus('unreachable');
    this.stopTimers();
  }

  /** Stops the windows (a final status, or the platform closing). */
  stopTimers(): void {
    clearTimeout(this.progressTimer);
    clearTimeout(this.maxTimer);
  }

  /** True when the header carries this run's access token (the verification's "test-token" is no token). */
  acceptsToken(header: string | undefined): boolean {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    return this.issued.kind === 'run' && match?.[1] === this.issued.accessToken;
  }

  /** Applies an accepted update: a final status stops the windows, `running` restarts the progress window. */
  update(
    status: 'running' | 'passed' | 'failed',
    message: string | undefined,
    url: string | undefined,
  ): void {
    this.message = message ?? this.message;
    this.url = url ?? this.url;
    this.setStatus(status);
    if (this.final) this.stopTimers();
    else this.restartProgressWindow();
  }

  /** The task result as the API shows it (run-tasks.md §4.5). */
  document(): unknown {
    return {
      data: {
        id: this.issued.taskResultId,
        type: 'task-results',
        attributes: {
          status: this.status,
          message: this.message ?? null,
          url: this.url ?? null,
          'status-timestamps': this.timestamps,
          stage: this.issued.stage,
          'is-speculative': false,
          'workspace-task-enforcement-level': this.issued.enforcement,
        },
      },
    };
  }

  private setStatus(status: PlatformTaskStatus): void {
    this.status = status;
    this.timestamps[`${status}-at`] = new Date(this.now()).toISOString();
  }

  private restartProgressWindow(): void {
    clearTimeout(this.progressTimer);
    const ms = this.windows.progressWindowMs;
    this.progressTimer = setTimeout(() => this.timeOut('progress-window', ms), ms);
  }

  private timeOut(window: 'progress-window' | 'max-duration', ms: number): void {
    if (this.final) return;
    this.stopTimers();
    this.setStatus('errored');
    this.events.add({ kind: 'timeout', at: this.now(), window, ms });
  }
}
