/**
 * The `provider runtask callback` core: send one task result callback, e.g. from a CI job that did the check.
 * Everything is validated locally first (exit 2: status, message, URL, outcomes against the documented limits,
 * where the token may go); outcomes are dropped with a warning when the saved request says the platform does
 * not accept them; then one PATCH, retried on transient failures: 0 on success, 4 on a refusal.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseDuration } from '../../config/duration.js';
import { ApiError, InterruptedError, TimeoutError, UsageError } from '../../errors.js';
import { sendCallback, type CallbackOutcome } from '../../runtask/callback/client.js';
import {
  loggableUrl,
  originNotAllowed,
  parsePlatformHosts,
  type PlatformOrigins,
} from '../../runtask/callback/origins.js';
import {
  TASK_RESULT_STATUSES,
  VERIFICATION_TOKEN,
  acceptsOutcomes,
  checkTaskResult,
  parseRunTaskRequest,
  type RunTaskRequest,
  type TaskResult,
} from '../../terraform/runtask/payload.js';
import type { RunContext } from '../context.js';
import type { FailOn } from '../../runtask/formats/findings.js';
import { FAIL_ON, ReportError, detectReport, reportResult } from '../../runtask/formats/report.js';

/** Flags of `provider runtask callback`. */
export interface CallbackFlags {
  status?: string;
  message?: string;
  resultUrl?: string;
  outcomes?: string;
  /** `--fail-on`: with a SARIF or JUnit report and no --status, the least severe level that fails. */
  failOn?: string;
  payload?: string;
  url?: string;
  platformHost?: string[];
  timeout: string;
}

async function readText(path: string, what: string, flag: string, context: RunContext): Promise<string> {
  if (path === '-') return context.readStdin();
  const full = resolve(context.cwd, path);
  try {
    return await readFile(full, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read the ${what} ${full}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      {
        hint: `Check the path given to ${flag}.`,
      },
    );
  }
}

async function readPayload(flags: CallbackFlags, context: RunContext): Promise<RunTaskRequest | undefined> {
  if (flags.payload === undefined) return undefined;
  const parsed = parseRunTaskRequest(await readText(flags.payload, 'saved request', '--payload', context));
  if (parsed.kind === 'malformed') {
    throw new UsageError(`--payload ${flags.payload}: ${parsed.reason}`, {
      hint: 'Give the run task request body exactly as the platform sent it (a JSON object).',
    });
  }
  return parsed.request;
}

/** What `--outcomes` held: outcomes as JSON, or a scanner's report (SARIF, JUnit) made into a result. */
type OutcomesInput =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'report'; result: TaskResult; format: string };

async function readOutcomes(flags: CallbackFlags, context: RunContext): Promise<OutcomesInput> {
  if (flags.outcomes === undefined) return { kind: 'none' };
  const text = await readText(flags.outcomes, 'outcomes file', '--outcomes', context);
  const detected = detectReport(text);
  if (detected !== undefined) {
    const { format } = detected;
    const failOn = (flags.failOn ?? 'error') as FailOn;
    try {
      const { result } = await reportResult(text, format, failOn, detected.parsed);
      return { kind: 'report', result, format };
    } catch (error) {
      if (!(error instanceof ReportError)) throw error;
      throw new UsageError(`--outcomes ${flags.outcomes}: ${error.message}`, {
        hint: `Give the ${format === 'sarif' ? 'SARIF 2.1.0' : 'JUnit XML'} report as the tool wrote it, or a JSON array of outcomes.`,
      });
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--outcomes ${flags.outcomes} is not JSON: ${(error as Error).message}`, {
      hint: 'Give a JSON array of {"id","description","body","url","tags"} objects, or {"outcomes": [...]}, or a SARIF 2.1.0 or JUnit XML report.',
    });
  }
  const wrapped = value as { outcomes?: unknown } | null;
  return {
    kind: 'json',
    value:
      !Array.isArray(value) && typeof wrapped === 'object' && wrapped !== null && 'outcomes' in wrapped
        ? wrapped.outcomes
        : value,
  };
}

/** Checks `--fail-on` (exit 2 on a bad one). */
function checkFailOn(flags: CallbackFlags): void {
  if (flags.failOn !== undefined && !(FAIL_ON as readonly string[]).includes(flags.failOn)) {
    throw new UsageError(`--fail-on must be one of ${FAIL_ON.join(', ')}, got "${flags.failOn}"`, {
      hint: 'error fails on errors only (the default); never always passes.',
    });
  }
}

/** The flags with the status and message a scanner's report decides, unless given; checks the status. */
function withReportStatus(flags: CallbackFlags, outcomes: OutcomesInput): CallbackFlags & { status: string } {
  const fromReport = outcomes.kind === 'report' ? outcomes.result : undefined;
  if (fromReport !== undefined) {
    flags = {
      ...flags,
      status: flags.status ?? fromReport.status,
      message: flags.message ?? fromReport.message,
    };
  }
  if (flags.status === undefined || !(TASK_RESULT_STATUSES as readonly string[]).includes(flags.status)) {
    throw new UsageError(
      `--status must be one of ${TASK_RESULT_STATUSES.join(', ')}, got "${flags.status ?? ''}"`,
      {
        hint: 'running reports progress; passed and failed are final.',
      },
    );
  }
  return { ...flags, status: flags.status };
}

/** Where the callback goes, with what token, and the saved request it answers (when given). */
interface CallbackTarget {
  url: string;
  token: string;
  allowed: PlatformOrigins;
  payload: RunTaskRequest | undefined;
}

/**
 * The callback URL and the access token, from the flags, the environment or the saved request; refuses the
 * verification request's token and a URL on a host the token may not go to.
 */
async function callbackTarget(flags: CallbackFlags, context: RunContext): Promise<CallbackTarget> {
  const allowed = parsePlatformHosts(flags.platformHost);
  const payload = await readPayload(flags, context);
  const url = flags.url ?? payload?.task_result_callback_url;
  if (!url) {
    throw new UsageError(
      'no callback URL: give --payload <saved request> or --url <task_result_callback_url>',
      {
        hint: 'The URL is the task_result_callback_url of the run task request.',
      },
    );
  }
  const token = context.env.RUNTASK_ACCESS_TOKEN || payload?.access_token;
  if (!token) {
    throw new UsageError('no access token: set RUNTASK_ACCESS_TOKEN or give --payload <saved request>', {
      hint: 'The token is the access_token of the run task request; it lives 10 minutes.',
    });
  }
  context.output.addSecret(token);
  if (token === VERIFICATION_TOKEN) {
    throw new UsageError(
      'the saved request is the platform\'s verification request ("test-token"): it expects no callback',
      {
        hint: 'Use the request of a real run.',
      },
    );
  }
  if (!allowed.allows(url)) throw originNotAllowed('callback URL', url, allowed);
  return { url, token, allowed, payload };
}

/**
 * The task result to send, checked against the documented limits; its outcomes dropped (with a warning) when the
 * saved request says the platform does not accept them.
 */
function checkedResult(
  flags: CallbackFlags & { status: string },
  outcomes: OutcomesInput,
  payload: RunTaskRequest | undefined,
  context: RunContext,
): TaskResult {
  const candidate = {
    status: flags.status,
    message: flags.message,
    url: flags.resultUrl,
    outcomes:
      outcomes.kind === 'report'
        ? outcomes.result.outcomes
        : outcomes.kind === 'json'
          ? outcomes.value
          : undefined,
  };
  const checked = checkTaskResult(candidate);
  if (checked.result === undefined || checked.problems.length > 0) {
    const list = checked.problems
      .slice(0, 10)
      .map((p) => `${p.path.replace(/^url$/, 'result-url') || 'result'} ${p.message}`);
    throw new UsageError(
      `the result cannot be sent: ${list.join('; ')}${checked.problems.length > 10 ? '; …' : ''}`,
      {
        hint: 'Fix the values (limits: message 1000 characters, URLs 500, 250 outcomes, body 10000, …) and run again.',
        details: { problems: checked.problems },
      },
    );
  }
  const result = checked.result;
  if (payload !== undefined && result.outcomes !== undefined && !acceptsOutcomes(payload)) {
    if (result.outcomes.length > 0) {
      context.output.warn(
        `the platform did not offer outcomes (capabilities.outcomes is not true): ${result.outcomes.length} not sent`,
      );
    }
    delete result.outcomes;
  }
  return result;
}

/** What the delivery came to: exit 0 with a summary when sent, else the error that decides the exit code. */
function deliveryOutcome(
  sent: CallbackOutcome,
  result: TaskResult,
  target: CallbackTarget,
  flags: CallbackFlags,
  context: RunContext,
): number {
  const { output } = context;
  switch (sent.kind) {
    case 'sent': {
      const summary = {
        ok: true,
        status: result.status,
        http: sent.status,
        outcomes: result.outcomes?.length ?? 0,
        attempts: sent.attempts,
      };
      if (output.json) output.resultJson(summary);
      else output.result(`sent the ${result.status} callback (${sent.status})`);
      return 0;
    }
    case 'refused':
      throw new ApiError(
        `the platform refused the callback: ${sent.status}${sent.detail ? ` ${sent.detail}` : ''}`,
        {
          status: sent.status,
          serverDetail: sent.detail,
          hint:
            sent.status === 401
              ? 'The access token is invalid or expired (run task tokens live 10 minutes).'
              : sent.status === 409
                ? 'The task result already has a final status.'
                : 'Fix what the platform named and send again.',
        },
      );
    case 'gave-up':
      throw new TimeoutError(`could not deliver the callback within ${flags.timeout}: ${sent.reason}`, {
        hint: 'Check that this machine can reach the platform, then send again (before the token expires).',
      });
    case 'aborted':
      throw new InterruptedError('interrupted before the callback was delivered');
    case 'not-allowed':
      throw originNotAllowed('callback URL', target.url, target.allowed);
  }
}

/** Sends the callback; resolves with the exit code or throws the error that decides it. */
export async function runCallbackCommand(context: RunContext, given: CallbackFlags): Promise<number> {
  const { output } = context;
  checkFailOn(given);
  // A scanner's report decides the status and message unless they are given (read first: exit 2 on a bad one).
  const outcomes = await readOutcomes(given, context);
  const flags = withReportStatus(given, outcomes);
  const deadlineMs = parseDuration(flags.timeout, '--timeout');
  const target = await callbackTarget(flags, context);
  const result = checkedResult(flags, outcomes, target.payload, context);
  output.debug(`→ PATCH ${loggableUrl(target.url)}`);
  const sent = await sendCallback({
    url: target.url,
    token: target.token,
    result,
    allowed: target.allowed,
    deadlineMs,
    signal: context.signal,
    onRetry: (info) => output.info(`retrying the callback in ${info.delayMs}ms: ${info.reason}`),
  });
  return deliveryOutcome(sent, result, target, flags, context);
}
