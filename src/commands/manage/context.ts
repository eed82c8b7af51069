/**
 * What every read, delete and check starts from: the run's registry session on the provider the flags name, and
 * the command-line arguments that address a version or a platform, checked before any request.
 */
import * as path from 'node:path';
import { ApiError, UsageError } from '../../errors.js';
import { soleProviderName } from '../../release/layout.js';
import { normalizeVersion } from '../../release/version.js';
import type { RegistryClient } from '../../registry/http.js';
import type { ProviderAddress } from '../../registry/paths.js';
import type { RunContext } from '../context.js';
import { providerAddress, type Session } from '../session.js';
import { parsePlatformName, type PlatformKey } from '../../terraform/names.js';

/** The run's registry session on one provider. */
export interface ProviderSession {
  client: RegistryClient;
  address: ProviderAddress;
  /** `host[:port]` of the API, as Terraform's source addresses write it. */
  hostname: string;
  /** `hostname/namespace/name`: the provider's source address for `required_providers`. */
  source: string;
}

/** The release folder a provider name is taken from when none is given: where `publish` looks by default. */
const DEFAULT_RELEASE_DIR = 'dist';

/**
 * Opens the run's session on the provider: `--name`, the configuration file, or else the one provider released
 * in ./dist (the folder just published from), said on stderr so the user knows where it came from.
 */
export async function openProvider(context: RunContext, session: Session): Promise<ProviderSession> {
  const registry = await session.registry();
  let name = registry.settings.name;
  if (name === undefined) {
    name = await soleProviderName(path.resolve(context.cwd, DEFAULT_RELEASE_DIR));
    if (name !== undefined) context.output.info(`provider name ${name} (from ./${DEFAULT_RELEASE_DIR})`);
  }
  const address = providerAddress(registry, name);
  const hostname = registry.settings.apiHost.host;
  return {
    client: registry.client,
    address,
    hostname,
    source: `${hostname}/${address.namespace}/${address.name}`,
  };
}

/** The `<version>` argument of a command, as given. */
export interface VersionArgument {
  version: string | undefined;
}

/** The provider a command works on and the version its `<version>` argument names. */
export interface ProviderVersion {
  provider: ProviderSession;
  version: string;
}

/**
 * Opens the provider once the arguments hold: `<version>` first, then what `more` checks (a platform), all before
 * any request, so that a mistyped argument is said without a token or a network.
 */
export async function openVersion(
  context: RunContext,
  session: Session,
  text: string | undefined,
): Promise<ProviderVersion>;
export async function openVersion<More>(
  context: RunContext,
  session: Session,
  text: string | undefined,
  more: () => More,
): Promise<ProviderVersion & { more: More }>;
export async function openVersion<More>(
  context: RunContext,
  session: Session,
  text: string | undefined,
  more?: () => More,
): Promise<ProviderVersion & { more: More | undefined }> {
  const version = parseVersionArgument(text);
  const checked = more?.();
  return { provider: await openProvider(context, session), version, more: checked };
}

/** The `<version>` argument: strict semver, a leading `v` dropped. */
export function parseVersionArgument(text: string | undefined): string {
  const version = text === undefined ? undefined : normalizeVersion(text.trim());
  if (version === undefined) {
    throw new UsageError(`"${text ?? ''}" is not a provider version`, {
      hint: 'Give the version as MAJOR.MINOR.PATCH with an optional pre-release, such as 1.2.3 or 2.0.0-beta.1 (provider versions list shows them).',
    });
  }
  return version;
}

/** A platform argument, `linux_amd64` or `linux/amd64`; a usage error naming `what` otherwise. */
export function parsePlatformArgument(text: string, what = 'platform'): PlatformKey {
  const key = parsePlatformName(text);
  if (!key) {
    throw new UsageError(`${what} "${text}" is not <os>_<arch>`, {
      hint: 'Write it as Go names it, e.g. linux_amd64 or darwin/arm64 (provider platforms list <version> shows them).',
    });
  }
  return key;
}

/** The error for a version the registry does not have (or does not show this token). */
export function versionNotFound(provider: ProviderSession, version: string): ApiError {
  const { address, hostname } = provider;
  return new ApiError(`Version ${version} of ${address.namespace}/${address.name} is not on ${hostname}`, {
    status: 404,
    hint: `provider versions list --name ${address.name} shows the versions there are; check --organization and --namespace, and that the token may read the private registry.`,
    details: { provider: address, version },
  });
}

/** True for the ApiError of a 404 answer. */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

/** The error for a provider the registry does not have (or does not show this token). */
export function providerNotFound(provider: ProviderSession, cause: unknown): ApiError {
  const { address, hostname } = provider;
  return new ApiError(`Provider ${address.namespace}/${address.name} is not on ${hostname}`, {
    status: 404,
    hint: 'Check --name, --organization and --namespace, and that the token may read the private registry (the platform answers 404 for both).',
    details: { provider: address },
    cause,
  });
}
