/**
 * `provider verify` below the command line: the settings from the run's session, where the public key comes
 * from, verify, render. The only network use is the session's registry key lookup, only when no key was given.
 */
import * as path from 'node:path';
import type { Settings } from '../config/index.js';
import { UsageError } from '../errors.js';
import {
  fileKeySource,
  folderKeySource,
  registryKeySource,
  textKeySource,
  type KeySource,
} from '../release/keySource.js';
import { requireReleaseFolder } from '../release/layout.js';
import { parseProtocolsFlag } from '../release/protocols.js';
import { renderVerification } from '../release/report.js';
import { parseVersionFlag } from '../release/version.js';
import type { VerifiedRelease } from '../release/types.js';
import type { VerifyReleaseOptions } from '../release/stages.js';
import { verifyRelease } from '../release/verify.js';
import type { RunContext } from './context.js';
import type { Session, SessionCore } from './session.js';

/** The flags of `provider verify`, as commander hands them over (the global ones go to the session). */
export interface VerifyFlags {
  key?: string;
  offline?: boolean;
  version?: string;
  protocols?: string;
  dearmorSignature?: boolean;
}

/** What `provider verify` is asked to do: the flags and the release folder. */
export interface VerifyOptions extends VerifyFlags {
  dir: string;
}

/** The environment variable that may hold an armored public key. */
export const KEY_VARIABLE = 'PROVIDER_GPG_KEY';

/** Runs `provider verify [dir]`; returns the exit code (0) or throws. */
export const runVerify: SessionCore<VerifyOptions> = async (context, session, options) => {
  const { release, settings } = await verifyWithFlags(context, session, options, 'verify');
  renderVerification(context.output, release, settings.namespace);
  return 0;
};

/**
 * Verifies the release the options describe, in a hashing session of its own; shared with `lock`. `command` is
 * the command running (`verify`, `lock`): its hints name it. The registry is reached only through the session's
 * key lookup, and only when no key was given.
 */
export async function verifyWithFlags(
  context: RunContext,
  session: Session,
  options: VerifyOptions,
  command: string,
): Promise<{ release: VerifiedRelease; settings: Settings }> {
  const { releaseOptions, settings } = await verifyOptionsFromFlags(context, session, options, command);
  return { release: await verifyRelease(releaseOptions), settings };
}

/** What the verification needs from the flags, the settings and the key's source, each checked in turn. */
export async function verifyOptionsFromFlags(
  context: RunContext,
  session: Session,
  options: VerifyOptions,
  command: string,
): Promise<{ releaseOptions: VerifyReleaseOptions; settings: Settings }> {
  const { output, cwd } = context;
  // No folder means the wrong place or a typo: said first, as no other setting matters until it is right.
  await requireReleaseFolder(path.resolve(cwd, options.dir), command);
  // Flags are checked before the release is read: a usage mistake should not wait for hashing.
  const version = options.version === undefined ? undefined : parseVersionFlag(options.version);
  const protocols = options.protocols === undefined ? undefined : parseProtocolsFlag(options.protocols);
  const settings = await session.settings();
  const keySource = await chooseKeySource(context, session, options, settings);
  const releaseOptions: VerifyReleaseOptions = {
    dir: options.dir,
    cwd,
    output,
    now: context.now,
    keySource,
    name: settings.name,
    version,
    protocols,
    configProtocols: settings.protocols,
    dearmorSignature: options.dearmorSignature,
    hashing: { signal: context.signal },
    command,
  };
  return { releaseOptions, settings };
}

/**
 * `--key` > PROVIDER_GPG_KEY > a key file in the release folder > `key` in the configuration file > the registry
 * (unless `--offline`).
 */
async function chooseKeySource(
  context: RunContext,
  session: Session,
  flags: VerifyOptions,
  settings: Settings,
): Promise<KeySource> {
  if (flags.key !== undefined) {
    if (flags.key.trim() === '')
      throw new UsageError('--key was given an empty value', {
        hint: 'Give the path of an armored public key file.',
      });
    return fileKeySource(path.resolve(context.cwd, flags.key), flags.key, 'flag');
  }
  const text = context.env[KEY_VARIABLE];
  if (text !== undefined && text.trim() !== '') return textKeySource(text, KEY_VARIABLE);
  // A mirrored folder's own signer key comes before the project's: it is the key of that release.
  const inFolder = await folderKeySource(path.resolve(context.cwd, flags.dir));
  if (inFolder !== undefined) return inFolder;
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
  // The token is resolved now (none is a usage error before hashing); the client only at the lookup.
  return registryKeySource(await session.keyLookup(), namespace, apiHost.host);
}
