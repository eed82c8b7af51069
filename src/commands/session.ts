/**
 * One registry session per command run, opened by the command layer (src/cli/) and handed to the core: the
 * settings resolved once (their warnings said once), the token resolved once (`--token`'s warning said once,
 * even by `publish`, which verifies first) and one HTTP client for the whole run. Each is made on first use, in
 * the order the core asks: `verify --key` resolves no token and never loads the HTTP client.
 */
import {
  resolveSettings,
  resolveToken,
  type GlobalFlags,
  type Settings,
  type SettingsFlags,
} from '../config/index.js';
import { UsageError } from '../errors.js';
import type { RegistryClient, RegistryClientOptions } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import type { RegistryKeyLookup } from '../release/keySource.js';
import type { RunContext } from './context.js';

/** The flags a session reads: the global ones naming the registry and the provider, the token, publish's tuning. */
export type SessionFlags = SettingsFlags & Pick<GlobalFlags, 'token'>;

/** Retry and timeout tuning of the client (publish passes its own; the client's defaults otherwise). */
export type ClientTuning = Pick<RegistryClientOptions, 'retry' | 'timeout'>;

/** The registry session of one command run; every part is made on first use, then shared. */
export interface Session {
  /** The resolved settings (flag > environment > file > default); their warnings are printed once. */
  settings(): Promise<Settings>;
  /** The API token for the settings' host; none is a UsageError, and `--token`'s warning is printed once. */
  token(): Promise<string>;
  /** The run's one registry client (the HTTP client is loaded then). */
  client(): Promise<RegistryClient>;
  /** The settings, the organization (a UsageError without one), the namespace and the client. */
  registry(): Promise<RegistrySession>;
  /**
   * Resolves the token now (a missing one is said before any release is hashed) and returns the lookup of a
   * namespace's registered keys, made over `client()` when verification reaches the signature.
   */
  keyLookup(): Promise<RegistryKeyLookup>;
}

/** A command core that talks to the registry: the run's context, its registry session, what it is asked to do. */
export type SessionCore<O> = (context: RunContext, session: Session, options: O) => Promise<number>;

/** A session whose organization is known: what every registry read and write starts from. */
export interface RegistrySession {
  settings: Settings;
  client: RegistryClient;
  organization: string;
  namespace: string;
}

/** Opens the session of a run: nothing is resolved, read or loaded until a core asks for it. */
export function openSession(context: RunContext, flags: SessionFlags, tuning: ClientTuning = {}): Session {
  const { env, cwd, homeDir, output, signal } = context;
  const settings = once(async () => {
    const resolved = await resolveSettings({ flags, env, cwd });
    resolved.warnings.forEach((w) => output.warn(w));
    return resolved;
  });
  const token = once(async () => {
    const { apiHost } = await settings();
    const resolved = resolveToken({ apiHost, flagToken: flags.token, env, homeDir });
    if (resolved.warning !== undefined) output.warn(resolved.warning);
    return resolved.token;
  });
  const client = once(async () => {
    const { apiHost } = await settings();
    const apiToken = await token();
    // Loaded here, not above: got costs start-up time that `verify --key` and `--help` never need.
    const { createRegistryClient } = await import('../registry/http.js');
    return createRegistryClient({ apiHost, token: apiToken, output, signal, ...tuning });
  });
  const registry = once(async (): Promise<RegistrySession> => {
    const resolved = await settings();
    const organization = resolved.organization;
    if (organization === undefined) {
      throw new UsageError(`No organization given for ${resolved.apiHost.host}`, {
        hint: 'Pass --organization <name>, set TFE_ORGANIZATION, or put "organization" in .providerrc.json.',
      });
    }
    await token();
    return {
      settings: resolved,
      client: await client(),
      organization,
      namespace: resolved.namespace ?? organization,
    };
  });
  return {
    settings,
    token,
    client,
    registry,
    async keyLookup() {
      await token();
      return async (namespace) => {
        const { listGpgKeys } = await import('../registry/gpgKeys.js');
        return listGpgKeys(await client(), namespace);
      };
    },
  };
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

/** Makes `make` run once, on the first call; every call gets the same promise. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}
