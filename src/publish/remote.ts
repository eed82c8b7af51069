/**
 * Reading what the registry holds for a release: the provider, the signing key, the version, every page of
 * its platforms, and — when they are uploaded — the SHA256SUMS and signature themselves, downloaded through
 * their (secret) links so the planner can compare them with the local files.
 */
import * as openpgp from 'openpgp';
import type { RegistryClient } from '../registry/http.js';
import { ApiError, UsageError } from '../errors.js';
import { createDownloader, DownloadError, type Downloader } from '../registry/downloads.js';
import { getGpgKey } from '../registry/gpgKeys.js';
import { networkHint } from '../net/networkFailure.js';
import type { ProviderAddress } from '../registry/paths.js';
import { listPlatforms } from '../registry/providerPlatforms.js';
import { getProvider } from '../registry/providers.js';
import { getVersion } from '../registry/versions.js';
import { listVersionTags } from '../registry/tagBindings.js';
import type { Tag } from '../registry/tags.js';
import type { VersionResource } from '../terraform/api.js';
import type { SignerInfo, VerifiedRelease } from '../release/types.js';
import type { ReleaseIdentity } from '../release/stages.js';
import type { Output } from '../ui/output.js';
import type { RemoteState } from './types.js';

/** What reading the registry's side of a release needs: known before its files are hashed. */
export interface ReadRemoteInput {
  client: RegistryClient;
  address: ProviderAddress;
  /** The release's version and its small files' names (ReleaseIdentity). */
  release: ReleaseIdentity;
  output: Output;
  signal?: AbortSignal | undefined;
  /** First backoff of download retries, in ms. */
  retryDelayMs?: number | undefined;
  /** Read the existing version's tags too (`--tag` was given). */
  readTags?: boolean | undefined;
}

/**
 * The registry's side of a release as read, before it is judged against the verified release: everything but
 * the signing key, which only the signature check names.
 */
export interface RemoteRelease {
  providerExists: boolean;
  version?: VersionResource | undefined;
  platforms: RemoteState['platforms'];
  tags?: Tag[] | undefined;
  /** The uploaded SHA256SUMS, when the registry has it. */
  shasumsBytes?: Uint8Array | undefined;
  /** The uploaded signature (its bytes), or why it could not be read, when the registry reports it uploaded. */
  signature?: Uint8Array | { missing: string } | undefined;
}

// SHA256SUMS of a release lists a few dozen files at most; anything this large is not one.
const MAX_SMALL_FILE = 1024 * 1024;

/**
 * Reads the registry's side of a release: the provider, the version, every page of its platforms, and the small
 * files when uploaded. Only reads, never writes: `publish` starts it while the files are still being hashed.
 */
export async function readRemoteRelease(input: ReadRemoteInput): Promise<RemoteRelease> {
  const { client, address, release } = input;
  const provider = await getProvider(client, address);
  if (provider === undefined) return { providerExists: false, platforms: [] };
  const version = await getVersion(client, address, release.version);
  if (version === undefined) return { providerExists: true, platforms: [] };
  const [platforms, tags] = await Promise.all([
    listPlatforms(client, address, release.version),
    input.readTags === true ? readTags(client, version, address) : undefined,
  ]);
  const state: RemoteRelease = { providerExists: true, version, platforms, tags };

  const { attributes, links } = version;
  const downloader = createDownloader({
    output: input.output,
    signal: input.signal,
    ...(input.retryDelayMs === undefined ? {} : { baseDelayMs: input.retryDelayMs }),
  });
  if (attributes['shasums-uploaded'] && links['shasums-download'] !== undefined) {
    state.shasumsBytes = await download(downloader, links['shasums-download'], release.shasumsFile);
  }
  if (attributes['shasums-sig-uploaded']) {
    const link = links['shasums-sig-download'];
    state.signature =
      link === undefined
        ? { missing: 'the registry gave no download link for it' }
        : await download(downloader, link, release.signatureFile);
  }
  return state;
}

/** Whether the release's signing key is registered for the namespace (a key found there needs no read). */
export async function readKeyRegistered(
  client: RegistryClient,
  namespace: string,
  signer: SignerInfo,
): Promise<boolean> {
  return signer.origin === 'registry' || (await getGpgKey(client, namespace, signer.keyId)) !== undefined;
}

/** The remote state the planner compares with the verified release: what was read, judged against it. */
export async function judgeRemote(
  read: RemoteRelease,
  keyRegistered: boolean,
  release: Pick<VerifiedRelease, 'signatureBytes' | 'shasumsBytes' | 'signer'>,
): Promise<RemoteState> {
  const { signature, ...rest } = read;
  const state: RemoteState = { ...rest, keyRegistered };
  if (signature !== undefined) {
    state.signature =
      signature instanceof Uint8Array
        ? await judgeSignature(signature, release)
        : { verifies: false, reason: signature.missing };
  }
  return state;
}

/**
 * The existing version's tags. A version document without a tag-bindings relationship comes from a registry
 * without version tags (Terraform Enterprise): `--tag` is refused there before anything is written.
 */
async function readTags(
  client: RegistryClient,
  version: VersionResource,
  address: ProviderAddress,
): Promise<Tag[]> {
  if (version.relationships['tag-bindings'] === undefined) {
    throw new UsageError(
      `--tag: the registry reports no tags for ${address.namespace}/${address.name} ${version.attributes.version} (its version document has no tag-bindings)`,
      {
        hint: 'Version tags are an HCP Terraform feature (2026); publish without --tag on this registry.',
      },
    );
  }
  return listVersionTags(client, version.id);
}

/** The registry's copy of a small file; a failed download is an API problem (exit 4), named by file. */
async function download(downloader: Downloader, url: string, filename: string): Promise<Uint8Array> {
  const what = `the registry's copy of ${filename}`;
  try {
    return new Uint8Array(await downloader.bytes(url, what, MAX_SMALL_FILE));
  } catch (error) {
    if (!(error instanceof DownloadError)) throw error;
    const otherwise = 'Check the network, then run the same command again.';
    throw new ApiError(`Reading ${what} to compare it failed: ${error.reason}`, {
      status: error.status ?? 0,
      hint:
        error.network === undefined
          ? otherwise
          : networkHint(error.network, new URL(url).host, 'link', otherwise),
      details: { file: filename, reason: error.reason },
    });
  }
}

/** Does the registry's signature verify over the local SHA256SUMS with the release's signing key? */
export async function judgeSignature(
  remote: Uint8Array,
  release: Pick<VerifiedRelease, 'signatureBytes' | 'shasumsBytes' | 'signer'>,
): Promise<{ verifies: boolean; reason?: string }> {
  const local = release.signatureBytes;
  if (remote.length === local.length && remote.every((b, i) => b === local[i])) return { verifies: true };
  try {
    const signature = await openpgp.readSignature({ binarySignature: remote });
    const key = await openpgp.readKey({ armoredKey: release.signer.armoredKey });
    const message = await openpgp.createMessage({ binary: release.shasumsBytes });
    const result = await openpgp.verify({ message, signature, verificationKeys: [key] });
    const first = result.signatures[0];
    if (first === undefined) return { verifies: false, reason: 'it holds no signature' };
    await first.verified;
    return { verifies: true };
  } catch (error) {
    return { verifies: false, reason: (error as Error).message };
  }
}
