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
import type { VersionResource } from '../registry/types.js';
import type { VerifiedRelease } from '../release/types.js';
import type { Output } from '../ui/output.js';
import type { RemoteState } from './types.js';

/** What reading the remote state needs. */
export interface ReadRemoteInput {
  client: RegistryClient;
  address: ProviderAddress;
  release: VerifiedRelease;
  output: Output;
  signal?: AbortSignal | undefined;
  /** First backoff of download retries, in ms. */
  retryDelayMs?: number | undefined;
  /** Read the existing version's tags too (`--tag` was given). */
  readTags?: boolean | undefined;
}

// SHA256SUMS of a release lists a few dozen files at most; anything this large is not one.
const MAX_SMALL_FILE = 1024 * 1024;

/** Reads the registry's side of the release (only reads: never writes). */
export async function readRemote(input: ReadRemoteInput): Promise<RemoteState> {
  const { client, address, release } = input;
  // The key and the provider are independent reads: one round trip instead of two.
  const [key, provider] = await Promise.all([
    release.signer.origin === 'registry'
      ? undefined
      : getGpgKey(client, address.namespace, release.signer.keyId),
    getProvider(client, address),
  ]);
  const keyRegistered = release.signer.origin === 'registry' || key !== undefined;
  if (provider === undefined) return { providerExists: false, keyRegistered, platforms: [] };
  const version = await getVersion(client, address, release.version);
  if (version === undefined) return { providerExists: true, keyRegistered, platforms: [] };
  const [platforms, tags] = await Promise.all([
    listPlatforms(client, address, release.version),
    input.readTags === true ? readTags(client, version, address) : undefined,
  ]);
  const state: RemoteState = { providerExists: true, keyRegistered, version, platforms, tags };

  const { attributes, links } = version;
  const downloader = createDownloader({
    output: input.output,
    signal: input.signal,
    ...(input.retryDelayMs === undefined ? {} : { baseDelayMs: input.retryDelayMs }),
  });
  if (attributes['shasums-uploaded'] && links['shasums-download'] !== undefined) {
    state.shasumsBytes = await download(downloader, links['shasums-download'], release.shasums.filename);
  }
  if (attributes['shasums-sig-uploaded']) {
    const link = links['shasums-sig-download'];
    state.signature =
      link === undefined
        ? { verifies: false, reason: 'the registry gave no download link for it' }
        : await judgeSignature(await download(downloader, link, release.signature.filename), release);
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
