/**
 * What a check fetches from the platform before its handler runs, into the job's private folder: the plan JSON
 * (when the stage has one) and, with `--with-configuration`, the configuration version, unpacked safely
 * (unpack.ts) into a folder of its own. Either one failing fails the task with a message saying why; the
 * handler does not run then.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunTaskRequest } from '../../../terraform/runtask/payload.js';
import type { CallbackBackoff } from '../../callback/client.js';
import { fetchConfigurationVersion } from '../../callback/configurationVersion.js';
import type { PlatformOrigins } from '../../callback/origins.js';
import { fetchPlanJson } from '../../callback/planJson.js';
import type { InterpretedResult } from '../handler/handlerResult.js';
import type { EventLog, LogFields } from '../log.js';
import { DEFAULT_UNPACK_LIMITS, unpackConfiguration } from './unpack.js';

/** How a check fetches from the platform (part of its settings, check.ts). */
export interface FetchSettings {
  /** Where the access token may be sent. */
  allowed: PlatformOrigins;
  /** How long each download may take, retries included (default 2 minutes). */
  planTimeoutMs?: number;
  retry?: CallbackBackoff | undefined;
  /** Download and unpack the configuration version for the handler (`--with-configuration`). */
  withConfiguration?: boolean;
}

/** The job whose files are fetched. */
interface FetchInput {
  id: string;
  request: RunTaskRequest;
}

/** One check's fetch: its settings, its job, the job's folder, its log and its abort signal. */
export interface CheckFetch {
  settings: FetchSettings;
  input: FetchInput;
  /** The job's own folder: the files go in here. */
  root: string;
  log: EventLog;
  signal: AbortSignal;
}

/** A file or folder made ready for the handler, or the failed result that ends the check. */
export type Prepared = { path: string | undefined } | { failed: InterpretedResult };

/** How long a download may take by default (retries included). */
const DOWNLOAD_DEADLINE_MS = 120_000;

/** The failed result of a check that could not start, logged as `<event>`. */
function couldNotStart(
  error: unknown,
  source: 'plan-error' | 'configuration-error',
  log: EventLog,
  event: string,
  what: string,
  fields: LogFields,
): { failed: InterpretedResult } {
  const why = error instanceof Error ? error.message : String(error);
  log.error(event, `could not fetch ${what}: ${why}`, fields);
  return {
    failed: {
      result: { status: 'failed', message: `The check could not start: ${why}` },
      source,
      limits: [],
    },
  };
}

/** Downloads the plan JSON into `root/plan.json` when the request carries its URL. */
export async function preparePlanJson({ settings, input, root, log, signal }: CheckFetch): Promise<Prepared> {
  const planUrl = input.request.plan_json_api_url;
  const token = input.request.access_token;
  if (planUrl === undefined || token === undefined) return { path: undefined };
  const fields = { job: input.id, run_id: input.request.run_id };
  const plan = join(root, 'plan.json');
  try {
    const bytes = await fetchPlanJson({
      url: planUrl,
      token,
      allowed: settings.allowed,
      file: plan,
      deadlineMs: settings.planTimeoutMs ?? DOWNLOAD_DEADLINE_MS,
      signal,
      retry: settings.retry,
      onRetry: (info) =>
        log.warn('plan.retry', `retrying the plan JSON download: ${info.reason}`, { ...fields, ...info }),
    });
    log.info('plan.fetched', 'fetched the plan JSON', { ...fields, bytes });
    return { path: plan };
  } catch (error) {
    if (signal.aborted) throw error;
    return couldNotStart(error, 'plan-error', log, 'plan.failed', 'the plan JSON', fields);
  }
}

/**
 * With `withConfiguration`, downloads the configuration version and unpacks it into `root/configuration`;
 * the archive itself is removed once unpacked.
 */
export async function prepareConfiguration({
  settings,
  input,
  root,
  log,
  signal,
}: CheckFetch): Promise<Prepared> {
  if (settings.withConfiguration !== true) return { path: undefined };
  const fields = { job: input.id, run_id: input.request.run_id };
  const what = 'the configuration version';
  const url = input.request.configuration_version_download_url;
  const token = input.request.access_token;
  if (url === undefined || url === null || url === '' || token === undefined) {
    const missing = new Error('the request carries no configuration_version_download_url or access_token');
    return couldNotStart(missing, 'configuration-error', log, 'configuration.failed', what, fields);
  }
  const archive = join(root, 'configuration.tar.gz');
  const folder = join(root, 'configuration');
  try {
    const bytes = await fetchConfigurationVersion({
      url,
      token,
      allowed: settings.allowed,
      file: archive,
      deadlineMs: settings.planTimeoutMs ?? DOWNLOAD_DEADLINE_MS,
      signal,
      retry: settings.retry,
      onRetry: (info) =>
        log.warn('configuration.retry', `retrying the configuration version download: ${info.reason}`, {
          ...fields,
          ...info,
        }),
    });
    await mkdir(folder, { mode: 0o700 });
    const entries = await unpackConfiguration(archive, folder, DEFAULT_UNPACK_LIMITS, signal);
    log.info('configuration.fetched', 'fetched and unpacked the configuration version', {
      ...fields,
      bytes,
      entries,
    });
    return { path: folder };
  } catch (error) {
    if (signal.aborted) throw error;
    return couldNotStart(error, 'configuration-error', log, 'configuration.failed', what, fields);
  } finally {
    await rm(archive, { force: true }).catch(() => undefined);
  }
}
