/**
 * The one place the common options are decided: flag > environment > config file > default. Each value
 * remembers its source so `--verbose` can say why a setting has the value it has.
 */
import * as path from 'node:path';
import { UsageError } from '../errors.js';
import { parseDuration } from './duration.js';
import { parseHostname, type ApiHost } from './hostname.js';
import { loadConfigFile } from './load.js';

/** Where a setting's value came from. */
export type SettingSource = 'flag' | 'env' | 'config' | 'default';

/** The options every command shares, as the CLI parsed them: declared here once, for the program and the cores. */
export interface GlobalFlags {
  hostname?: string | undefined;
  organization?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
  /** Visible in the process list: the token is better in TF_TOKEN_<host> or TFE_TOKEN (a warning says so). */
  token?: string | undefined;
  json?: boolean | undefined;
  quiet?: boolean | undefined;
  verbose?: boolean | undefined;
  /** false with --no-color. */
  color?: boolean | undefined;
  config?: string | undefined;
}

/** The flags this resolver reads: the global ones that name the registry and provider, and publish's tuning. */
export interface SettingsFlags extends Pick<
  GlobalFlags,
  'hostname' | 'organization' | 'namespace' | 'name' | 'config'
> {
  concurrency?: number | string | undefined;
  waitTimeout?: string | undefined;
}

/** Everything from the process that the resolver needs, passed in. */
export interface ResolveSettingsInput {
  flags: SettingsFlags;
  env: Record<string, string | undefined>;
  cwd: string;
}

/** The resolved common settings. */
export interface Settings {
  apiHost: ApiHost;
  organization?: string;
  /** Defaults to the organization: a private registry's namespace is its organization's name. */
  namespace?: string;
  name?: string;
  concurrency: Concurrency;
  waitTimeoutMs: number;
  protocols?: string[];
  /** Absolute; a relative `key` in the config file is taken from the config file's folder. */
  keyFile?: string;
  /** From the config file only; the CLI applies `--no-color` itself. */
  color?: boolean;
  /** From the config file only (`--policy` wins), absolute: taken from the config file's folder. */
  policyFile?: string;
  warnings: string[];
  sources: Record<string, SettingSource>;
  configFile?: string;
}

/** The hostname used when nothing names one. */
export const DEFAULT_HOSTNAME = 'app.terraform.io';
/**
 * Uploads in flight at once: a fixed number from 1 to 32, or `auto`, a number that grows while the throughput
 * grows with it (src/publish/adaptive.ts).
 */
export type Concurrency = number | 'auto';
/** Uploads in flight at once when nothing says otherwise: adapted to the network. */
export const DEFAULT_CONCURRENCY: Concurrency = 'auto';
/** How long to wait for the registry to process an upload when nothing says otherwise: 5 minutes. */
export const DEFAULT_WAIT_TIMEOUT_MS = 5 * 60_000;

interface Candidate<T> {
  value: T | undefined;
  source: SettingSource;
  /** How to name this source in an error: `--concurrency`, `PROVIDER_CONCURRENCY`, `"concurrency" in <file>`. */
  label: string;
}

/** Resolves hostname, organization, namespace, name, concurrency and wait timeout, plus file-only keys. */
export async function resolveSettings(input: ResolveSettingsInput): Promise<Settings> {
  const { flags } = input;
  const env = (name: string): string | undefined => nonEmpty(input.env[name]);
  const loaded = await loadConfigFile({ cwd: input.cwd, explicitPath: flags.config });
  const file = loaded.config;
  const inFile = (key: string): string => `"${key}" in ${loaded.filepath ?? 'the configuration file'}`;
  const sources: Record<string, SettingSource> = {};
  const warnings = [...loaded.warnings];

  // A setting's candidates, highest first: its flag (`--wait-timeout` for `waitTimeout`), its variable when it
  // has one, its value in the file. A default, when there is one, comes after them.
  const layers = <T>(
    key: string,
    flag: T | undefined,
    variable: string | undefined,
    inConfig: T | undefined,
  ): Candidate<T | string>[] => [
    { value: flag, source: 'flag', label: `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` },
    ...(variable === undefined ? [] : [{ value: env(variable), source: 'env' as const, label: variable }]),
    { value: inConfig, source: 'config', label: inFile(key) },
  ];
  const byDefault = <T>(value: T, label: string) => ({ value, source: 'default' as const, label });

  // TFE_HOSTNAME wins over TFE_ADDRESS: it is this tool's own variable, TFE_ADDRESS is shared with go-tfe.
  const hostnameVar = env('TFE_HOSTNAME') !== undefined ? 'TFE_HOSTNAME' : 'TFE_ADDRESS';
  const hostFlag = flagString(flags.hostname, '--hostname');
  const host = pickOr(
    sources,
    'hostname',
    layers('hostname', hostFlag, hostnameVar, file.hostname),
    byDefault(DEFAULT_HOSTNAME, 'the default hostname'),
  );
  const apiHost = parseHostname(host.value, host.label);
  if (host.label === 'TFE_HOSTNAME') warnings.push(...addressConflict(apiHost, env('TFE_ADDRESS')));

  const organizationFlag = flagString(flags.organization, '--organization');
  const organization = pick(
    sources,
    'organization',
    layers('organization', organizationFlag, 'TFE_ORGANIZATION', file.organization),
  );
  const namespace = pick(sources, 'namespace', [
    ...layers('namespace', flagString(flags.namespace, '--namespace'), undefined, file.namespace),
    byDefault(organization?.value, 'the organization'),
  ]);
  const name = pick(sources, 'name', layers('name', flagString(flags.name, '--name'), undefined, file.name));

  const concurrency = pickOr<number | string>(
    sources,
    'concurrency',
    layers('concurrency', flags.concurrency, 'PROVIDER_CONCURRENCY', file.concurrency),
    byDefault(DEFAULT_CONCURRENCY, 'the default concurrency'),
  );
  // A number means seconds wherever it comes from (`90`, `waitTimeout: 90`), so every source goes through parseDuration.
  const waitTimeout = pickOr<number | string>(
    sources,
    'waitTimeout',
    layers('waitTimeout', flags.waitTimeout, 'PROVIDER_WAIT_TIMEOUT', file.waitTimeout),
    byDefault(DEFAULT_WAIT_TIMEOUT_MS / 1_000, 'the default wait timeout'),
  );

  const settings: Settings = {
    apiHost,
    concurrency: parseConcurrency(concurrency.value, concurrency.label),
    waitTimeoutMs: parseDuration(String(waitTimeout.value), waitTimeout.label),
    warnings,
    sources,
  };
  if (organization !== undefined) settings.organization = organization.value;
  if (namespace !== undefined) settings.namespace = namespace.value;
  if (name !== undefined) settings.name = name.value;
  if (file.protocols !== undefined) {
    settings.protocols = [...file.protocols];
    sources.protocols = 'config';
  }
  if (file.key !== undefined && loaded.filepath !== undefined) {
    settings.keyFile = path.resolve(path.dirname(loaded.filepath), file.key);
    sources.key = 'config';
  }
  if (file.color !== undefined) {
    settings.color = file.color;
    sources.color = 'config';
  }
  if (file.policy !== undefined && loaded.filepath !== undefined) {
    settings.policyFile = path.resolve(path.dirname(loaded.filepath), file.policy);
    sources.policy = 'config';
  }
  if (loaded.filepath !== undefined) settings.configFile = loaded.filepath;
  return settings;
}

/** Concurrency from a flag, a variable or the file: an integer from 1 to 32, or `auto`. */
export function parseConcurrency(value: number | string, label: string): Concurrency {
  const text = String(value).trim();
  if (text.toLowerCase() === 'auto') return 'auto';
  const number = typeof value === 'number' ? value : /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(number) || number < 1 || number > 32) {
    throw new UsageError(`${label} must be "auto" or an integer from 1 to 32 (got "${text}")`, {
      hint: 'It is how many uploads run at once; the default is auto, a number that follows the throughput.',
    });
  }
  return number;
}

/** The first candidate with a value, recording its source in `sources`; undefined when none has one. */
function pick<T>(
  sources: Record<string, SettingSource>,
  key: string,
  candidates: Candidate<T>[],
): (Candidate<T> & { value: T }) | undefined {
  for (const candidate of candidates) {
    if (candidate.value !== undefined) {
      sources[key] = candidate.source;
      return { ...candidate, value: candidate.value };
    }
  }
  return undefined;
}

/** Like `pick`, with a default that always has a value. */
function pickOr<T>(
  sources: Record<string, SettingSource>,
  key: string,
  candidates: Candidate<T>[],
  fallback: Candidate<T> & { value: T; source: 'default' },
): Candidate<T> & { value: T } {
  return pick(sources, key, [...candidates, fallback]) ?? fallback;
}

/** A string flag; an empty one is a mistake (often an unset shell variable), not "use the default". */
function flagString(value: string | undefined, flag: string): string | undefined {
  if (value !== undefined && value.trim() === '') {
    throw new UsageError(`${flag} was given an empty value`, {
      hint: `Give ${flag} a value, or leave it out.`,
    });
  }
  return value;
}

/** A warning when TFE_ADDRESS, overridden by TFE_HOSTNAME, names another server (an unparsable one is ignored). */
function addressConflict(apiHost: ApiHost, address: string | undefined): string[] {
  if (address === undefined) return [];
  try {
    const other = parseHostname(address, 'TFE_ADDRESS').baseUrl;
    if (other === apiHost.baseUrl) return [];
    return [`TFE_HOSTNAME (${apiHost.baseUrl}) and TFE_ADDRESS (${other}) differ; using TFE_HOSTNAME`];
  } catch {
    return [];
  }
}

// An empty variable is treated as unset, as most shells and CI systems make "unset" hard to express.
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
