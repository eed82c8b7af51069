/**
 * One check, start to result: a private temp folder, the payload file (without the access token), the plan
 * JSON when the stage has one and the configuration version when asked for (checkInputs.ts), the handler with
 * its environment, and the result read from what it did. The handler's environment never holds the access
 * token or the HMAC key.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareConfiguration, preparePlanJson, type FetchSettings } from './checkInputs.js';
import {
  interpretHandlerExit,
  lastLine,
  type InterpretedResult,
  type ResultReading,
} from '../handler/handlerResult.js';
import { runHandler } from '../handler/handler.js';
import type { EventLog } from '../log.js';
import { databaseEnvRemoved, holdsSecret } from '../redact.js';
import { withoutAccessToken, type RunTaskRequest } from '../../../terraform/runtask/payload.js';

/** How checks run. */
export interface CheckSettings extends FetchSettings {
  exec: string;
  timeoutMs: number;
  /** The timeout as the user wrote it, for messages. */
  timeoutText: string;
  /** Where per-job temp folders go. */
  workRoot: string;
  /** The environment handlers inherit (secrets removed before use). */
  env: Record<string, string | undefined>;
  /** Variables never passed on (the HMAC key's variable, RUNTASK_ACCESS_TOKEN). */
  secretEnvNames: readonly string[];
  hmacKey?: string | undefined;
  /** How the handler's output is read (default: auto, failing on errors). */
  reading?: ResultReading;
  killGraceMs?: number;
}

/** The job as a check sees it. */
export interface CheckInput {
  id: string;
  request: RunTaskRequest;
  raw: Record<string, unknown>;
}

/** The inherited environment without the integrator's secrets, and the names of the variables left out. */
function inheritedEnvironment(
  settings: CheckSettings,
  input: CheckInput,
): { env: Record<string, string>; removed: string[] } {
  const secrets = [input.request.access_token, settings.hmacKey].filter((s): s is string => !!s);
  const env: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(settings.env)) {
    if (value === undefined) continue;
    const secret = settings.secretEnvNames.includes(name) || holdsSecret(value, secrets);
    if (secret || name.startsWith('RUNTASK_')) removed.push(name);
    else env[name] = value;
  }
  return { env, removed };
}

/**
 * The names of the variables the integrator inherited that its handlers do not get: those the database's
 * credentials took away (`withoutDatabaseEnv`), and those `handlerEnvironment` leaves out for `input`.
 */
export function removedFromHandlers(settings: CheckSettings, input: CheckInput): string[] {
  const removed = [...databaseEnvRemoved(settings.env), ...inheritedEnvironment(settings, input).removed];
  return [...new Set(removed)].sort();
}

/** The settings (one a route) whose handlers' missing variables were logged: once each, at the first check. */
const logged = new WeakSet<CheckSettings>();

/** Logs, once for `settings`, the names (never the values) of the variables its handlers do not get. */
function logRemovedOnce(settings: CheckSettings, input: CheckInput, log: EventLog): void {
  if (logged.has(settings)) return;
  logged.add(settings);
  const names = removedFromHandlers(settings, input);
  if (names.length === 0) return;
  log.info('handler.env_removed', `handlers do not get these variables: ${names.join(', ')}`, {
    names: names.join(','),
  });
}

/**
 * The handler's environment: the inherited one without the integrator's secrets (the variables that name them,
 * and values that hold the access token or the HMAC key: `holdsSecret`), plus the RUNTASK_* facts of this run.
 */
export function handlerEnvironment(
  settings: CheckSettings,
  input: CheckInput,
  files: { payload: string; plan?: string | undefined; configuration?: string | undefined },
): Record<string, string> {
  const { env } = inheritedEnvironment(settings, input);
  const r = input.request;
  const facts: Record<string, string | undefined> = {
    RUNTASK_PAYLOAD: files.payload,
    RUNTASK_PLAN_JSON: files.plan,
    RUNTASK_CONFIGURATION_DIR: files.configuration,
    RUNTASK_STAGE: r.stage,
    RUNTASK_RUN_ID: r.run_id,
    RUNTASK_WORKSPACE_NAME: r.workspace_name,
    RUNTASK_WORKSPACE_ID: r.workspace_id,
    RUNTASK_ORGANIZATION: r.organization_name,
    RUNTASK_TASK_RESULT_ID: r.task_result_id,
    RUNTASK_ENFORCEMENT_LEVEL: r.task_result_enforcement_level,
    RUNTASK_IS_SPECULATIVE: r.is_speculative === undefined ? undefined : String(r.is_speculative),
  };
  for (const [name, value] of Object.entries(facts)) if (value !== undefined) env[name] = value;
  return env;
}

/** Runs one check to its result. Aborting `signal` stops it (the caller reports why). */
export async function runCheck(
  settings: CheckSettings,
  input: CheckInput,
  log: EventLog,
  signal: AbortSignal,
): Promise<InterpretedResult> {
  await mkdir(settings.workRoot, { recursive: true });
  const root = await mkdtemp(join(settings.workRoot, 'provider-runtask-job-'));
  const fields = { job: input.id, run_id: input.request.run_id };
  try {
    const payload = join(root, 'payload.json');
    await writeFile(payload, JSON.stringify(withoutAccessToken(input.raw), null, 2) + '\n', { mode: 0o600 });
    const fetch = { settings, input, root, log, signal };
    const plan = await preparePlanJson(fetch);
    if ('failed' in plan) return plan.failed;
    const configuration = await prepareConfiguration(fetch);
    if ('failed' in configuration) return configuration.failed;
    const cwd = join(root, 'work');
    await mkdir(cwd, { mode: 0o700 });
    logRemovedOnce(settings, input, log);
    log.info('handler.started', 'handler started', fields);
    const exit = await runHandler({
      command: settings.exec,
      cwd,
      env: handlerEnvironment(settings, input, {
        payload,
        plan: plan.path,
        configuration: configuration.path,
      }),
      timeoutMs: settings.timeoutMs,
      signal,
      ...(settings.killGraceMs === undefined ? {} : { killGraceMs: settings.killGraceMs }),
    });
    // Reading a large report takes a while (yielding to the other requests as it goes): say when it starts.
    log.debug('handler.exited', 'handler exited; reading its output', {
      ...fields,
      exit_code: exit.exitCode,
      stdout_bytes: Buffer.byteLength(exit.stdout),
    });
    const interpreted = await interpretHandlerExit(exit, settings.timeoutText, settings.reading);
    const level = exit.timedOut || exit.spawnError !== undefined ? 'error' : 'info';
    log[level]('handler.finished', `handler finished: ${interpreted.result.status} (${interpreted.source})`, {
      ...fields,
      status: interpreted.result.status,
      exit_code: exit.exitCode,
      signal: exit.signal,
      timed_out: exit.timedOut,
      aborted: exit.aborted,
      duration_ms: exit.durationMs,
      stdout_truncated: exit.stdoutTruncated || undefined,
      last_stderr: exit.exitCode === 0 ? undefined : lastLine(exit.stderrTail)?.slice(0, 300),
    });
    return interpreted;
  } finally {
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
}
