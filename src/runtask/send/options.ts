/**
 * `runtask send` flags → session settings, every check done before anything listens or is sent (exit 2): the
 * integrator URL, stage, enforcement, `--expect`, durations, port, the HMAC key (a file or an environment
 * variable, never a flag value; the same default variable as `runtask serve`), and the files to serve (the
 * configuration version: configuration.ts).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseDuration } from '../../config/duration.js';
import type { GlobalFlags } from '../../config/index.js';
import { UsageError } from '../../errors.js';
import { RUN_TASK_STAGES, type RunTaskStage } from '../../terraform/runtask/payload.js';
import { resolveHmacKey } from '../server/options.js';
import { configurationVersion } from './configuration.js';
import { defaultPlanJson } from './defaults.js';
import type { SessionSettings } from './session.js';
import { DEFAULT_TUNING } from './post.js';

/**
 * Flags of `provider runtask send`, as commander hands them over; the global `--organization` is sent as
 * `organization_name`.
 */
export interface SendFlags extends Pick<GlobalFlags, 'organization'> {
  stage: string;
  hmacKeyEnv?: string;
  hmacKeyFile?: string;
  planJson?: string;
  configVersion?: string;
  enforcement: string;
  /** `--no-outcomes` sets this to false. */
  outcomes: boolean;
  verification?: boolean;
  expect?: string;
  progressWindow: string;
  maxDuration: string;
  /** `--report <file.html>`: the preview page of the task result. */
  report?: string;
  host: string;
  port: string;
  publicUrl?: string;
}

/** The world the flags are read in. */
export interface SendWorld {
  env: Record<string, string | undefined>;
  cwd: string;
  now: () => Date;
}

/** Settings plus what the report needs to say. */
export interface SendOptions {
  settings: SessionSettings;
  expected?: 'passed' | 'failed' | undefined;
  warnings: string[];
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new UsageError(`${flag} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}

function webUrl(text: string, what: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`${what} must be an http:// or https:// URL, got "${text}"`, {
      hint: 'For example: provider runtask send http://127.0.0.1:8080/',
    });
  }
  return url;
}

async function readInput(path: string, flag: string, cwd: string): Promise<Buffer> {
  const full = resolve(cwd, path);
  try {
    return await readFile(full);
  } catch (error) {
    throw new UsageError(
      `cannot read ${flag} ${full}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      {
        hint: `Check the path given to ${flag}.`,
      },
    );
  }
}

async function planJson(
  flags: SendFlags,
  stage: RunTaskStage,
  world: SendWorld,
  warnings: string[],
): Promise<Buffer> {
  if (flags.planJson === undefined) return defaultPlanJson(world.now());
  const bytes = await readInput(flags.planJson, '--plan-json', world.cwd);
  let plan: unknown;
  try {
    plan = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new UsageError(`--plan-json ${flags.planJson} is not JSON: ${(error as Error).message}`, {
      hint: 'Give the output of `terraform show -json <planfile>`.',
    });
  }
  if (typeof plan !== 'object' || plan === null || !('format_version' in plan))
    warnings.push(
      `--plan-json ${flags.planJson} has no format_version: is it \`terraform show -json\` output?`,
    );
  if (stage === 'pre_plan')
    warnings.push('--plan-json is not served at pre_plan: that stage carries no plan');
  return bytes;
}

/** Reads and checks the flags. */
export async function sendOptionsFromFlags(
  integratorUrl: string | undefined,
  flags: SendFlags,
  world: SendWorld,
): Promise<SendOptions> {
  if (integratorUrl === undefined) throw new UsageError('runtask send needs the integrator URL');
  const url = webUrl(integratorUrl, 'the integrator URL');
  const stage = oneOf(flags.stage, RUN_TASK_STAGES, '--stage');
  const enforcement = oneOf(flags.enforcement, ['mandatory', 'advisory'] as const, '--enforcement');
  const expected =
    flags.expect === undefined ? undefined : oneOf(flags.expect, ['passed', 'failed'] as const, '--expect');
  const verification = flags.verification === true;
  if (verification && expected !== undefined) {
    throw new UsageError(
      '--expect does not apply to --verification: that request expects a 200 and no callback',
    );
  }
  if (!/^\d+$/.test(flags.port) || Number(flags.port) > 65535)
    throw new UsageError(`--port must be a whole number between 0 and 65535, got "${flags.port}"`);
  const publicUrl =
    flags.publicUrl === undefined ? undefined : webUrl(flags.publicUrl, '--public-url').origin;
  const warnings: string[] = [];
  const { key } = resolveHmacKey(flags, world);
  const served = await configurationVersion(flags.configVersion, world.cwd, world.now(), warnings);
  return {
    expected,
    warnings,
    settings: {
      integratorUrl: url,
      verification,
      stage,
      enforcement,
      outcomesOffered: flags.outcomes !== false,
      hmacKey: key,
      planJson: await planJson(flags, stage, world, warnings),
      configurationVersion: served,
      organization: flags.organization ?? 'example-org',
      workspace: 'example-workspace',
      progressWindowMs: parseDuration(flags.progressWindow, '--progress-window'),
      maxDurationMs: parseDuration(flags.maxDuration, '--max-duration'),
      host: flags.host,
      port: Number(flags.port),
      publicUrl,
      tuning: DEFAULT_TUNING,
    },
  };
}
