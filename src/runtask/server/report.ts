/**
 * A job's callbacks, logged: what the final result may carry (outcomes only when the platform offered them,
 * trimmed to the documented limits) and one send with every ending written to the event log.
 */
import { sendCallback, type CallbackBackoff, type CallbackOutcome } from '../callback/client.js';
import type { EventLog } from './log.js';
import { loggableUrl, type PlatformOrigins } from '../callback/origins.js';
import {
  acceptsOutcomes,
  trimTaskResult,
  type RunTaskRequest,
  type TaskResult,
} from '../../terraform/runtask/payload.js';

/** The reason a final delivery's signal carries when the job's lease stopped being sure (delivery.ts). */
export const LEASE_UNSURE = 'lease-unsure';

/** Who reports, where, and with which signal. */
export interface ReportDeps {
  id: string;
  request: RunTaskRequest;
  allowed: PlatformOrigins;
  log: EventLog;
  signal: AbortSignal;
  retry?: CallbackBackoff | undefined;
}

/** The final result as it may be sent: outcomes dropped unless offered, everything fitted to the limits. */
export function shapeFinalResult(
  result: TaskResult,
  request: RunTaskRequest,
  log: EventLog,
  id: string,
): TaskResult {
  let shaped = result;
  if (shaped.outcomes !== undefined && !acceptsOutcomes(request)) {
    if (shaped.outcomes.length > 0) {
      log.info(
        'outcomes.dropped',
        `the platform did not offer outcomes; ${shaped.outcomes.length} not sent`,
        {
          job: id,
          outcomes: shaped.outcomes.length,
        },
      );
    }
    const { outcomes: _dropped, ...rest } = shaped;
    shaped = rest;
  }
  const trimmed = trimTaskResult(shaped);
  if (trimmed.notes.length > 0) {
    log.warn('result.trimmed', `the result was trimmed to the run task limits: ${trimmed.notes.join('; ')}`, {
      job: id,
    });
  }
  return trimmed.result;
}

/** Sends one callback for a job and logs how it ended. */
export async function reportResult(
  deps: ReportDeps,
  result: TaskResult,
  deadlineMs: number,
  kind: 'progress' | 'final',
): Promise<CallbackOutcome> {
  const { request, log } = deps;
  const fields = {
    job: deps.id,
    run_id: request.run_id,
    status: result.status,
    callback: loggableUrl(request.task_result_callback_url),
  };
  const outcome = await sendCallback({
    url: request.task_result_callback_url ?? '',
    token: request.access_token ?? '',
    result,
    allowed: deps.allowed,
    deadlineMs,
    signal: deps.signal,
    retry: deps.retry,
    onRetry: (info) =>
      log.warn('callback.retry', `retrying the ${result.status} callback: ${info.reason}`, {
        ...fields,
        attempt: info.attempt,
        delay_ms: info.delayMs,
      }),
  });
  switch (outcome.kind) {
    case 'sent':
      log.info('callback.sent', `sent the ${result.status} callback`, {
        ...fields,
        http: outcome.status,
        attempts: outcome.attempts,
        outcomes: result.outcomes?.length,
      });
      break;
    case 'refused':
      log.error(
        'callback.refused',
        `the platform refused the ${result.status} callback: ${outcome.status}${outcome.detail ? ` ${outcome.detail}` : ''}`,
        { ...fields, http: outcome.status, detail: outcome.detail, hint: refusalHint(outcome.status) },
      );
      break;
    case 'gave-up':
      log.error('callback.failed', `gave up sending the ${result.status} callback: ${outcome.reason}`, {
        ...fields,
        attempts: outcome.attempts,
        hint: 'Check that the integrator can reach the platform.',
      });
      break;
    case 'not-allowed':
      log.error(
        'callback.not_allowed',
        'the callback URL is not on an allowed platform host; nothing sent',
        fields,
      );
      break;
    case 'aborted':
      // Cut short by an unsure lease, the delivery says so itself and claims the job again.
      if (kind === 'final' && deps.signal.reason !== LEASE_UNSURE)
        log.warn('callback.deferred', 'the final callback was not delivered before stopping', fields);
      break;
  }
  return outcome;
}

function refusalHint(status: number): string {
  if (status === 401) return 'The run task access token is invalid or expired (it lives 10 minutes).';
  if (status === 409) return 'The task result already has a final status.';
  if (status === 422) return 'The platform refused a value in the result; see the detail.';
  return 'See the detail from the platform.';
}
