/**
 * Whether a version is already where a mirror writes it, compared with what the origin serves now: its
 * download documents and its signed list (SHA256SUMS and signature, checked as ./signed.ts checks them: small
 * reads, no zip). "Already there" only when each platform's zip has the sum the origin states and the signature
 * is by the same key; other bytes or another key are a conflict (exit 5), and nothing is written or removed. An
 * origin that serves no key has nothing to compare with (exit 3).
 */
import { stat } from 'node:fs/promises';
import { ConflictError, ProviderError } from '../errors.js';
import { platformName, type PlatformKey } from '../terraform/names.js';
import type { Progress } from '../ui/progress.js';
import type { RemoteZip } from '../release/remoteZip.js';
import type { Origin, OriginProvider } from './origin.js';
import { readRecord, type MirrorOrigin } from './record.js';
import type { OriginDownload } from './schemas.js';
import { checkSignedList, servedKeys, type SignedList } from './signed.js';
import { verifyFolder, type MirrorRunContext } from './stage.js';

/** The private registry a mirror publishes to (src/commands/mirrorDestination.ts). */
export interface MirrorDestination {
  host: string;
  organization: string;
  /**
   * `<host>/<namespace>` as a lock file writes the registry's providers (src/lockfile/address.ts: the host in
   * Unicode, the namespace published to): what the policy decides for.
   */
  lockPrefix: string;
  /**
   * What it holds of the version: undefined when it has none; else the key id it is signed with, and whether
   * it is whole (SHA256SUMS, its signature and each platform uploaded as expected).
   */
  holds(
    type: string,
    version: string,
    expected: { platform: string; filename: string; shasum: string }[],
  ): Promise<{ keyId: string; whole: boolean } | undefined>;
  /**
   * Publishes a staged folder with publish's core, its steps and uploads shown on `progress`, its zips in it or
   * at the origin (`remote`, by file name); whether anything was written.
   */
  publish(
    folder: string,
    progress: Progress,
    remote?: ReadonlyMap<string, RemoteZip>,
  ): Promise<{ wrote: boolean }>;
}

/** What the comparison reads with: the run's context and its origin. */
type PresentInput = MirrorRunContext & { origin: Origin };

/** The private registry's address of a provider mirrored into it. */
export function destinationSource(destination: MirrorDestination, provider: OriginProvider): string {
  return `${destination.host}/${destination.organization}/${provider.type}`;
}

/** The origin's download documents of the platforms it serves (a 404 is left out). */
async function originDocuments(
  input: PresentInput,
  provider: OriginProvider,
  version: string,
  platforms: PlatformKey[],
): Promise<OriginDownload[]> {
  const read = await Promise.all(platforms.map((p) => input.origin.download(provider, version, p)));
  return read.filter((d) => d !== undefined);
}

/** The origin's signed list as it stands now, its signer found among the keys it serves. */
function originSigned(
  input: PresentInput,
  provider: OriginProvider,
  version: string,
  documents: OriginDownload[],
): Promise<SignedList> {
  return checkSignedList({
    label: `${provider.namespace}/${provider.type} ${version}`,
    type: provider.type,
    version,
    host: input.origin.host,
    documents,
    downloader: input.downloader,
    now: input.now(),
    warn: (message) => input.output.warn(message),
  });
}

/**
 * Without `--to-dir`: whether the private registry holds the version whole already: the same files with the
 * sums the origin states, signed with the key that signed the origin's SHA256SUMS (the registry's key id is the
 * one publish computed from the key: compared with the signer's, primary or subkey, never with the id the
 * origin writes beside its key).
 */
export async function presentRemote(
  input: PresentInput,
  destination: MirrorDestination,
  provider: OriginProvider,
  version: string,
  platforms: PlatformKey[],
  admit?: (signed: SignedList) => void,
): Promise<{ destination: { source: string; wrote: boolean } } | undefined> {
  const { host } = input.origin;
  const label = `${provider.namespace}/${provider.type} ${version}`;
  const documents = await originDocuments(input, provider, version, platforms);
  if (documents.length === 0) return undefined;
  servedKeys(documents, label, host);
  const expected = documents.map((d) => ({
    platform: `${d.os}_${d.arch}`,
    filename: d.filename,
    shasum: d.shasum.toLowerCase(),
  }));
  const held = await destination.holds(provider.type, version, expected);
  if (held === undefined) return undefined;
  const signed = await originSigned(input, provider, version, documents);
  // The policy decides on what the origin signs before anything is compared: a refusal is said as one.
  admit?.(signed);
  const { signer } = signed;
  const source = destinationSource(destination, provider);
  if (![signer.keyId, signer.signingKeyId].includes(held.keyId.toUpperCase())) {
    throw new ConflictError(
      `${label}: ${source} holds ${version} signed with key ${held.keyId}; ${host} signs it with key ${signer.keyId}`,
      {
        hint: 'The same version under another key is other content, and a version is never re-signed in place: mirror it into another organization, or delete that version there first (provider delete).',
        details: { held: held.keyId, origin: signer.keyId },
      },
    );
  }
  return held.whole ? { destination: { source, wrote: false } } : undefined;
}

/**
 * Under `--to-dir`: the version's folder when it is there, verifies, holds every platform asked for, and holds
 * what the origin serves now (see above): its platforms, protocols and origin as recorded; undefined when it must
 * be (re)written.
 */
export async function presentFolder(
  input: PresentInput,
  provider: OriginProvider,
  version: string,
  folder: string,
  platforms: PlatformKey[],
  admit?: (signed: SignedList) => void,
): Promise<{ platforms: string[]; protocols: string[]; origin: MirrorOrigin | null } | undefined> {
  const exists = await stat(folder).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!exists) return undefined;
  // A folder holding another origin's copy (moved, or written by hand) is not this origin's, and is kept.
  const recorded = await readRecord(folder, provider.type, version);
  const source = `${input.origin.host}/${provider.namespace}/${provider.type}`;
  if (recorded !== null && recorded.source !== source) {
    throw new ConflictError(`${folder} holds ${recorded.source} ${version}, not ${source}'s`, {
      hint: 'Each origin has its own folder under --to-dir (<host>/<namespace>/<type>/<version>); move that folder back where it belongs, or remove it.',
      details: { folder, recorded: recorded.source, origin: source },
    });
  }
  let release;
  try {
    release = await verifyFolder(folder, { ...input, provider, version });
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    input.output.warn(`${folder} does not verify (${error.message}): it is mirrored again`);
    return undefined;
  }
  const held = new Map(release.platforms.map((p) => [platformName(p), p]));
  if (!platforms.every((p) => held.has(platformName(p)))) return undefined;
  const documents = await originDocuments(input, provider, version, platforms);
  if (documents.length === 0) return undefined;
  const signed = await originSigned(input, provider, version, documents);
  admit?.(signed);
  const { signer } = signed;
  const label = `${provider.namespace}/${provider.type} ${version}`;
  const hint =
    'The origin serves other content under the same version now; the folder is kept as it is. Compare the two, then remove the folder to mirror what the origin serves now, or keep it.';
  for (const d of documents) {
    const ours = held.get(`${d.os}_${d.arch}`)!;
    if (ours.filename === d.filename && ours.shasum === d.shasum.toLowerCase()) continue;
    throw new ConflictError(
      `${label}: ${folder} holds ${ours.filename} with sha256 ${ours.shasum}; ${input.origin.host} now serves ${d.filename} with ${d.shasum.toLowerCase()}`,
      { hint, details: { folder, file: d.filename, held: ours.shasum, origin: d.shasum.toLowerCase() } },
    );
  }
  if (signer.keyId !== release.signer.keyId) {
    throw new ConflictError(
      `${label}: ${folder} is signed with key ${release.signer.keyId}; ${input.origin.host} now signs it with key ${signer.keyId}`,
      { hint, details: { folder, held: release.signer.keyId, origin: signer.keyId } },
    );
  }
  return { platforms: [...held.keys()], protocols: release.protocols, origin: recorded };
}

/**
 * A dry run under a policy: the origin's signed list is read and checked (documents, SHA256SUMS, its signature;
 * no zip) so that the policy decides with the key and bytes a real run would see.
 */
export async function admitPlanned(
  input: PresentInput,
  provider: OriginProvider,
  version: string,
  platforms: PlatformKey[],
  admit: (signed: SignedList) => void,
): Promise<void> {
  const documents = await originDocuments(input, provider, version, platforms);
  if (documents.length === 0) return;
  admit(await originSigned(input, provider, version, documents));
}
