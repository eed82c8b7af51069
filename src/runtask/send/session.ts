/**
 * One `runtask send` session: start the platform, issue the task, POST the signed request (retrying anything
 * but 200, as the platform does; the verification request once), then wait for the end: a final status, the
 * platform erroring the task (the progress window or the maximum duration), or a broken contract; after the
 * first two of those it keeps listening for `lingerMs` of quiet, so that a late callback (an update after the
 * final status) is caught. A request that no attempt got accepted ends the session at once.
 */
import { startRunTaskPlatform } from '../../emulator/runtask/platform.js';
import type { PlatformTaskStatus } from '../../emulator/runtask/events.js';
import type { IssuedTask } from '../../emulator/runtask/issue.js';
import type { PlatformTaskResult } from '../../emulator/runtask/taskResult.js';
import { signBody } from '../../terraform/runtask/hmac.js';
import type { RunTaskStage } from '../../terraform/runtask/payload.js';
import type { Outcome } from '../../terraform/runtask/result.js';
import { postRequest, type SendTuning } from './post.js';
import { buildRunTaskRequest, requestBytes } from './request.js';
import { violationsOf, type SendEvent } from './events.js';

/** Everything a session needs. */
export interface SessionSettings {
  integratorUrl: URL;
  verification: boolean;
  stage: RunTaskStage;
  enforcement: 'mandatory' | 'advisory';
  outcomesOffered: boolean;
  hmacKey?: string | undefined;
  planJson: Buffer;
  configurationVersion: Buffer;
  organization: string;
  workspace: string;
  progressWindowMs: number;
  maxDurationMs: number;
  host: string;
  port: number;
  publicUrl?: string | undefined;
  tuning: SendTuning;
}

/** How the session ended. */
export type SessionEnd = 'settled' | 'timeout' | 'unreachable' | 'interrupted';

/** What happened. */
export interface SessionRecord {
  startedAt: number;
  endedAt: number;
  platformUrl: string;
  issued: IssuedTask;
  bytes: number;
  signed: boolean;
  accepted: boolean;
  events: SendEvent[];
  taskStatus: PlatformTaskStatus;
  /** The task result's last message, URL and outcomes, as the run page shows them. */
  taskMessage: string | undefined;
  taskUrl: string | undefined;
  outcomes: Outcome[];
  end: SessionEnd;
}

function waitForEnd(
  task: PlatformTaskResult,
  events: SendEvent[],
  settings: SessionSettings,
  signal: AbortSignal,
): Promise<SessionEnd> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (end: SessionEnd): void => {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
      resolve(end);
    };
    const onAbort = (): void => done('interrupted');
    const check = (): void => {
      if (task.status === 'errored') return done('timeout');
      if (task.final || settings.verification || violationsOf(events).length > 0) {
        clearTimeout(timer);
        timer = setTimeout(() => done('settled'), settings.tuning.lingerMs);
      }
    };
    const unsubscribe = task.events.subscribe(() => check());
    if (signal.aborted) return done('interrupted');
    signal.addEventListener('abort', onAbort, { once: true });
    check();
  });
}

/** Runs one session; `onEvent` sees every event as it happens. */
export async function runSession(
  settings: SessionSettings,
  onEvent: (event: SendEvent) => void,
  signal: AbortSignal,
  onToken: (token: string) => void = () => undefined,
): Promise<SessionRecord> {
  const startedAt = Date.now();
  const events: SendEvent[] = [];
  const emit = (event: SendEvent): void => {
    events.push(event);
    onEvent(event);
  };
  const platform = await startRunTaskPlatform({
    host: settings.host,
    port: settings.port,
    publicUrl: settings.publicUrl,
    progressWindowMs: settings.progressWindowMs,
    maxDurationMs: settings.maxDurationMs,
  });
  const unsubscribe = platform.events.subscribe(emit);
  try {
    const setup = { stage: settings.stage, outcomesOffered: settings.outcomesOffered };
    const task = settings.verification
      ? platform.issueVerification(setup)
      : platform.issueRun({ ...settings, ...setup });
    const { issued } = task;
    if (issued.kind === 'run') onToken(issued.accessToken);
    emit({
      kind: 'platform',
      at: Date.now(),
      url: platform.url,
      taskResultId: issued.taskResultId,
      stage: issued.stage,
      enforcement: issued.enforcement,
      outcomesOffered: issued.outcomesOffered,
      verification: settings.verification,
    });
    const body = requestBytes(buildRunTaskRequest(issued));
    const signature = settings.hmacKey === undefined ? '' : signBody(settings.hmacKey, body);
    const accepted = await postRequest({ settings, task, body, signature, emit, signal });
    let end: SessionEnd;
    if (signal.aborted) end = 'interrupted';
    else if (!accepted && !task.final) {
      // Never accepted, whichever request it was: the platform stops here (post.ts judged why).
      task.unreachable();
      end = 'unreachable';
    } else end = await waitForEnd(task, events, settings, signal);
    return {
      startedAt,
      endedAt: Date.now(),
      platformUrl: platform.url,
      issued,
      bytes: body.length,
      signed: signature !== '',
      accepted,
      events,
      taskStatus: task.status,
      taskMessage: task.message,
      taskUrl: task.url,
      outcomes: task.outcomes,
      end,
    };
  } finally {
    unsubscribe();
    await platform.close();
  }
}
