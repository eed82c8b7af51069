/**
 * `provider verify` below the command line: resolve the settings, choose where the public key comes from,
 * verify, render. The only network use is the registry key lookup, and only when no key was given.
 */
import * as path from 'node:path';
import { resolveSettings, resolveToken, type Settings } from '../config/index.js';
import { UsageError } from '../errors.js';
import type { Output } from '../ui/output.js';
import { fileKeySource, registryKeySource, textKeySource, type KeySource } from '../release/keySource.js';
import { requireReleaseFolder } from '../release/layout.js';
import { parseProtocolsFlag } from '../release/protocols.js';
import { renderVerification } from '../release/report.js';
import type { VerifiedRelease } from '../release/types.js';
import { parseVersionFlag } from '../release/version.js';
import { verifyRelease } from '../release/verify.js';

/** The flags of `provider verify`, merged with the global ones, as commander hands them over. */
export interface VerifyFlags {
  key?: string;
  offline?: boolean;
  version?: string;
  protocols?: string;
  dearmorSignature?: boolean;
  hostname?: string;
  organization?: string;
  namespace?: string;
  name?: string;
  token?: string;
  config?: string;
}

/** The process as `runVerify` sees it. */
export interface VerifyWorld {
  env: Record<string, string | undefined>;
  cwd: string;
  homeDir: string;
  signal?: AbortSignal | undefined;
  now?: () => Date;
}

/** The environment variable that may hold an armored public key. */
export const KEY_VARIABLE = 'PROVIDER_GPG_KEY';

/** Runs `provider verify [dir]`; returns the exit code (0) or throws. */
export async function runVerify(input: {
  output: Output;
  flags: VerifyFlags;
  dir: string;
  world: VerifyWorld;
}): Promise<number> {
  const { release, settings } = await verifyWithFlags({ ...input, command: 'verify' });
  renderVerification(input.output, release, settings.namespace);
  return 0;
}

/** Verifies the release the flags describe; shared with `publish`, which verifies first. */
export async function verifyWithFlags(input: {
  output: Output;
  flags: VerifyFlags;
  dir: string;
  world: VerifyWorld;
  /** The command running (`verify`, `publish`): its hints name it. */
  command: string;
}): Promise<{ release: VerifiedRelease; settings: Settings }> {
  const { output, flags, world, command } = input;
  // No folder means the wrong place or a typo: said first, as no other setting matters until it is right.
  await requireReleaseFolder(path.resolve(world.cwd, input.dir), command);
  // Flags are checked before the release is read: a usage mistake should not wait for hashing.
  const version = flags.version === undefined ? undefined : parseVersionFlag(flags.version);
  const protocols = flags.protocols === undefined ? undefined : parseProtocolsFlag(flags.protocols);
  const settings = await resolveSettings({ flags, env: world.env, cwd: world.cwd });
  settings.warnings.forEach((w) => output.warn(w));
  const keySource = chooseKeySource(output, flags, world, settings);
  const release = await verifyRelease({
    dir: input.dir,
    cwd: world.cwd,
    output,
    now: world.now ?? (() => new Date()),
    keySource,
    name: settings.name,
    version,
    protocols,
    configProtocols: settings.protocols,
    dearmorSignature: flags.dearmorSignature,
    hashing: { signal: world.signal },
    command,
  });
  return { release, settings };
}

/** `--key` > PROVIDER_GPG_KEY > `key` in the configuration file > the registry (unless `--offline`). */
function chooseKeySource(
  output: Output,
  flags: VerifyFlags,
  world: VerifyWorld,
  settings: Settings,
): KeySource {
  if (flags.key !== undefined) {
    if (flags.key.trim() === '')
      throw new UsageError('--key was given an empty value', {
        hint: 'Give the path of an armored public key file.',
      });
    return fileKeySource(path.resolve(world.cwd, flags.key), flags.key, 'flag');
  }
  const text = world.env[KEY_VARIABLE];
  if (text !== undefined && text.trim() !== '') return textKeySource(text, KEY_VARIABLE);
  if (settings.keyFile !== undefined) return fileKeySource(settings.keyFile, settings.keyFile, 'config');
  if (flags.offline === true) {
    throw new UsageError('--offline needs a public key to check the signature with, and none was given', {
      hint: `Pass --key <armored-public-key-file> or set ${KEY_VARIABLE} to the armored key (gpg --armor --export <key id>).`,
    });
  }
  const namespace = settings.namespace;
  const { apiHost } = settings;
  if (namespace === undefined) {
    throw new UsageError(
      `No public key was given, and no namespace to look up the keys registered on ${apiHost.host}`,
      {
        hint: `Pass --key <armored-public-key-file> (or set ${KEY_VARIABLE}), or give --organization (and --namespace if it differs) to use the registered keys.`,
      },
    );
  }
  const resolved = resolveToken({ apiHost, flagToken: flags.token, env: world.env, homeDir: world.homeDir });
  if (resolved.warning !== undefined) output.warn(resolved.warning);
  // The HTTP client (got) is loaded only when the registry is asked: `verify --key` never needs it.
  const lookup = async () => {
    const [{ createRegistryClient }, { listGpgKeys }] = await Promise.all([
      import('../registry/http.js'),
      import('../registry/gpgKeys.js'),
    ]);
    const client = createRegistryClient({ apiHost, token: resolved.token, output, signal: world.signal });
    return listGpgKeys(client, namespace);
  };
  return registryKeySource(lookup, namespace, apiHost.host);
}
