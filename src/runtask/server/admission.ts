/** Whether a (signed, well-formed, non-verification) request can become a job: it must be possible to report. */
import { loggableUrl, type PlatformOrigins } from '../callback/origins.js';
import type { RunTaskRequest } from '../../terraform/runtask/payload.js';

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Why the request cannot be handled, or undefined when it can. */
export function admissionProblem(request: RunTaskRequest, allowed: PlatformOrigins): string | undefined {
  const callback = request.task_result_callback_url;
  if (callback === undefined || callback === '') {
    return 'the request has no task_result_callback_url, so no result could be reported';
  }
  if (request.access_token === undefined || request.access_token === '') {
    return 'the request has no access_token, so no result could be reported';
  }
  if (!allowed.allows(callback)) {
    return `the callback URL ${loggableUrl(callback)} is not on an allowed platform host (${allowed.describe()}); the access token is never sent elsewhere. If ${origin(callback)} is your platform, start the integrator with --platform-host ${origin(callback)}`;
  }
  const plan = request.plan_json_api_url;
  if (plan !== undefined && !allowed.allows(plan)) {
    return `the plan JSON URL ${loggableUrl(plan)} is not on an allowed platform host (${allowed.describe()}); the access token is never sent elsewhere`;
  }
  return undefined;
}
