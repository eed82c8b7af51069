/**
 * Opening a registry session from a command's flags: the resolved settings, the token (never printed, sent
 * to the API host only), the client, and the provider address. Every registry command starts here.
 */
import { resolveSettings, resolveToken, type Settings, type SettingsFlags } from '../config/index.js';
import { UsageError } from '../errors.js';
import type { Output } from '../ui/output.js';
import { createRegistryClient, type RegistryClient, type RegistryClientOptions } from './http.js';
import type { ProviderAddress } from './paths.js';

/** The parts of the process a session needs. */
export interface SessionWorld {
  env: Record<string, string | undefined>;
  cwd: string;
  homeDir: string;
  signal?: AbortSignal | undefined;
}

/** A ready registry session. */
export interface RegistrySession {
  settings: Settings;
  client: RegistryClient;
  organization: string;
  namespace: string;
}

/** Resolves settings and credentials and builds the client; `--organization` is required. */
export async function openSession(input: {
  flags: SettingsFlags & { token?: string | undefined };
  world: SessionWorld;
  output: Output;
  settings?: Settings;
  /** Retry and timeout tuning for the client (publish passes its own; defaults otherwise). */
  client?: Pick<RegistryClientOptions, 'retry' | 'timeout'>;
}): Promise<RegistrySession> {
  const { flags, world, output } = input;
  const settings = input.settings ?? (await resolveSettings({ flags, env: world.env, cwd: world.cwd }));
  if (input.settings === undefined) settings.warnings.forEach((w) => output.warn(w));
  const organization = settings.organization;
  if (organization === undefined) {
    throw new UsageError(`No organization given for ${settings.apiHost.host}`, {
      hint: 'Pass --organization <name>, set TFE_ORGANIZATION, or put "organization" in .providerrc.json.',
    });
  }
  const token = resolveToken({
    apiHost: settings.apiHost,
    flagToken: flags.token,
    env: world.env,
    homeDir: world.homeDir,
  });
  if (token.warning !== undefined) output.warn(token.warning);
  const client = createRegistryClient({
    apiHost: settings.apiHost,
    token: token.token,
    output,
    signal: world.signal,
    ...input.client,
  });
  return { settings, client, organization, namespace: settings.namespace ?? organization };
}

/** The provider address of a session, once the provider name is known (flag, config, or the release). */
export function providerAddress(session: RegistrySession, name: string | undefined): ProviderAddress {
  if (name === undefined) {
    throw new UsageError('No provider name given', {
      hint: 'Pass --name <provider> (the part after terraform-provider-), or put "name" in .providerrc.json.',
    });
  }
  return { organization: session.organization, namespace: session.namespace, name };
}
