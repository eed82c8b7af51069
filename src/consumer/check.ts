/**
 * What `terraform init` will get: read the version and its platforms, download SHA256SUMS and its signature
 * through the download links (no token), verify the signature with the registered key of the version's
 * key-id, match every platform's `filename` and `shasum` against SHA256SUMS, and optionally hash every
 * stored zip. With `lockHashes`, also read the registry protocol's download responses and check the lock hashes
 * they serve (`packages`, ./packages.ts), and with `download` compute each zip's `h1:` (streamed to a temporary
 * file, hashed, removed). Every mismatch is collected and reported at once, with Terraform's own error text
 * beside ours.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, VerificationError } from '../errors.js';
import { PackageHashError, sortHashes, zipHash, zipHash1 } from '../release/lockHashes.js';
import { createDownloader, DownloadError, type Downloader } from '../registry/downloads.js';
import { fileStates } from '../registry/fileStates.js';
import { listGpgKeys } from '../registry/gpgKeys.js';
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import { getPlatform, listPlatforms } from '../registry/providerPlatforms.js';
import { getVersion } from '../registry/versions.js';
import type { PlatformResource, VersionResource } from '../registry/types.js';
import { comparePlatforms, platformName } from '../terraform.js';
import type { Output } from '../ui/output.js';
import {
  acceptableHashes,
  archiveChecksumProblem,
  listedHash,
  matchingChecksumProblem,
  type ConsumerProblem,
  type ServedPlatform,
} from './checksums.js';
import { authenticateSignature, type SignatureVerdict } from './signature.js';
import { describeProblems, downloadProblem, mapPool } from './report.js';
import {
  packageProblems,
  readServedPackages,
  type KnownPackage,
  type PackageVerdict,
  type ServedPackages,
} from './packages.js';

export type { ConsumerProblem } from './checksums.js';

/** What the check needs: the client, the provider, the version, the sink. */
export interface ConsumerCheckInput {
  client: RegistryClient;
  address: ProviderAddress;
  version: string;
  output: Output;
  /** Also download every zip and hash it (streamed). */
  download?: boolean;
  signal?: AbortSignal;
  /** The clock used to judge key expiry (default: now). */
  now?: () => Date;
  /** Called as each archive has been downloaded and hashed (for progress lines); `problem` when it mismatched. */
  onArchive?: (platform: ConsumerPlatformReport, problem: ConsumerProblem | undefined) => void;
  /** Archives downloaded at once with `download` (default 4). */
  concurrency?: number;
  /** First backoff of download retries, in ms (default 300; publish passes its PROVIDER_RETRY_DELAY). */
  retryDelayMs?: number;
  /**
   * Also read the registry protocol's download responses and check the lock hashes they serve (`packages`);
   * with `download`, compute each zip's `h1:` too (the zip streamed to a temporary file under `tmpDir`).
   */
  lockHashes?: boolean;
  /** Where downloaded zips are hashed with `lockHashes` and `download` (default: the system's). */
  tmpDir?: string;
  /**
   * The version and its platforms, as just read by the caller (publish's wait for the uploaded flags ends with
   * the same two reads): the check starts from them instead of reading them again.
   */
  read?: { version: VersionResource; platforms: PlatformResource[] };
}

/** One platform as checked. */
export interface ConsumerPlatformReport {
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  /** `verified`: downloaded and hashed to `shasum`; `listed`: only matched against SHA256SUMS. */
  archive: 'verified' | 'listed';
  /** Bytes downloaded, when downloaded. */
  bytes: number | null;
  /**
   * The lock hashes this check vouches for, sorted: `zh:` from the signed SHA256SUMS, and with `download` and
   * `lockHashes` the `h1:` computed from the downloaded zip.
   */
  hashes: string[];
  /** With `lockHashes`: what the registry's `packages` serves for the platform (all checked); null: not served. */
  packages?: PackageVerdict | null;
}

/** The outcome of a passing check, as plain data (safe to print as JSON: no links). */
export interface ConsumerCheckReport {
  provider: { hostname: string; organization: string; namespace: string; name: string };
  version: string;
  protocols: string[];
  keyId: string;
  signature: SignatureVerdict;
  /** `zh`: what terraform init records from the signed SHA256SUMS (a `zh:` for every line). */
  shasums: { bytes: number; lines: number; zh: string[] };
  platforms: ConsumerPlatformReport[];
  downloaded: boolean;
  /** With `lockHashes`: whether the registry serves lock hashes (`packages`) in its download responses. */
  packages?: 'served' | 'not served';
}

/** Checks the version as `terraform init` would; throws VerificationError (exit 3) on any mismatch. */
export async function checkConsumerView(input: ConsumerCheckInput): Promise<ConsumerCheckReport> {
  const { client, address, output } = input;
  const hostname = new URL(client.baseUrl).host;
  const label = `${address.namespace}/${address.name} ${input.version}`;
  // The version and its platforms are read at once (one round trip); the platforms' answer is used only
  // when the version exists.
  const listing = input.read
    ? Promise.resolve(input.read.platforms)
    : listPlatforms(client, address, input.version);
  listing.catch(() => undefined);
  const version = input.read ? input.read.version : await getVersion(client, address, input.version);
  if (version === undefined) {
    throw new ApiError(
      `Version ${input.version} of ${address.namespace}/${address.name} is not on ${hostname}`,
      {
        status: 404,
        hint: `Check the version (provider versions list --name ${address.name}) and --organization/--namespace; publish it with provider publish <dir>.`,
        details: { version: input.version, provider: address },
      },
    );
  }
  const platforms = await listing;
  requireComplete(version, platforms, label, hostname);
  const concurrency = input.concurrency ?? 4;
  const servedPackages =
    input.lockHashes === true
      ? readServedPackages(
          client,
          address,
          input.version,
          platforms.map((p) => ({ os: p.attributes.os, arch: p.attributes.arch })),
          concurrency,
        )
      : undefined;
  servedPackages?.catch(() => undefined);

  const downloader = createDownloader({
    output,
    signal: input.signal,
    ...(input.retryDelayMs === undefined ? {} : { baseDelayMs: input.retryDelayMs }),
  });
  const links = version.links;
  const versionLink = (name: 'shasums-download' | 'shasums-sig-download') => async () =>
    (await getVersion(client, address, input.version))?.links[name];
  const [sums, sig, keys] = await Promise.all([
    fetchSmall(
      downloader,
      links['shasums-download'],
      `SHA256SUMS of ${label}`,
      'checksums',
      versionLink('shasums-download'),
    ),
    fetchSmall(
      downloader,
      links['shasums-sig-download'],
      `SHA256SUMS.sig of ${label}`,
      'signature',
      versionLink('shasums-sig-download'),
    ),
    listGpgKeys(client, address.namespace),
  ]);
  const problems: ConsumerProblem[] = [...sums.problems, ...sig.problems];
  const keyId = version.attributes['key-id'];
  const served = keys
    .filter((k) => k.attributes['key-id'].toUpperCase() === keyId.toUpperCase())
    .map((k) => ({ asciiArmor: k.attributes['ascii-armor'], id: k.id, keyId: k.attributes['key-id'] }));

  let signature: SignatureVerdict | undefined;
  if (sums.bytes && sig.bytes) {
    const verdict = await authenticateSignature({
      document: sums.bytes,
      signature: sig.bytes,
      keys: served,
      subject: 'SHA256SUMS.sig',
      now: input.now?.() ?? new Date(),
    });
    if ('message' in verdict) problems.push(verdict);
    else signature = verdict;
  }

  const servedPlatforms = platforms
    .map((p) => ({ resource: p, served: servedPlatform(p) }))
    .sort((x, y) => comparePlatforms(x.served, y.served));
  if (sums.bytes) {
    for (const { served: p } of servedPlatforms) {
      const problem = matchingChecksumProblem(sums.bytes, p);
      if (problem) problems.push(problem);
    }
  }

  const withH1 = input.lockHashes === true && input.download === true;
  const scratch = withH1 ? await mkdtemp(join(input.tmpDir ?? tmpdir(), 'provider-check-')) : undefined;
  const known: KnownPackage[] = [];
  let reports: ConsumerPlatformReport[];
  let files = 0;
  try {
    reports = await mapPool(servedPlatforms, concurrency, async ({ resource, served: p }) => {
      const listed = sums.bytes ? listedHash(sums.bytes, p.filename)?.toLowerCase() : undefined;
      const report: ConsumerPlatformReport = {
        ...p,
        archive: 'listed',
        bytes: null,
        hashes: [zipHash(listed ?? p.shasum)],
      };
      const platform: KnownPackage = { platform: platformName(p), shasum: p.shasum.toLowerCase(), listed };
      known.push(platform);
      if (input.download !== true) return report;
      const link = resource.links['provider-binary-download'];
      const what = `${p.filename} (${platformName(p)} of ${label})`;
      const file = scratch === undefined ? undefined : join(scratch, `${files++}.zip`);
      try {
        if (link === undefined) throw new DownloadError(`no download link for ${what}`, undefined, 'no link');
        const fresh = async () =>
          (await getPlatform(client, address, input.version, p.os, p.arch))?.links[
            'provider-binary-download'
          ];
        const digest =
          file === undefined
            ? await downloader.digest(link, what, fresh)
            : await downloader.toFile(link, what, file, fresh);
        const problem = archiveChecksumProblem(p, digest.sha256);
        report.bytes = digest.bytes;
        if (problem) problems.push(problem);
        else report.archive = 'verified';
        if (!problem && file !== undefined) {
          const h1 = await packageH1(file, p, input.signal, problems);
          platform.downloaded = { bytes: digest.bytes, h1 };
          if (h1 !== undefined) report.hashes = sortHashes([...report.hashes, h1]);
        }
        input.onArchive?.(report, problem);
      } catch (error) {
        if (!(error instanceof DownloadError)) throw error;
        problems.push(downloadProblem(error, platformName(p), what, 'archive'));
      } finally {
        if (file !== undefined) await rm(file, { force: true });
      }
      return report;
    });
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }

  let packagesServed: 'served' | 'not served' | undefined;
  if (servedPackages) {
    const read = await servedPackages;
    problems.push(...read.problems);
    const checked = packageProblems(read.served, known);
    problems.push(...checked.problems);
    for (const report of reports) report.packages = checked.verdicts.get(platformName(report)) ?? null;
    packagesServed = anyServed(read.served) ? 'served' : 'not served';
  }

  if (problems.length > 0 || signature === undefined || sums.bytes === undefined) {
    const { message, lines } = describeProblems(problems, label, hostname);
    throw new VerificationError(message, {
      lines,
      hint: [...new Set(problems.map((p) => p.hint))].join(' '),
      details: { provider: address, version: input.version, problems },
    });
  }
  return {
    provider: { hostname, ...address },
    version: input.version,
    protocols: version.attributes.protocols,
    keyId,
    signature,
    shasums: {
      bytes: sums.bytes.length,
      lines: sums.bytes.toString('utf8').split('\n').filter(Boolean).length,
      zh: acceptableHashes(sums.bytes),
    },
    platforms: reports,
    downloaded: input.download === true,
    ...(packagesServed === undefined ? {} : { packages: packagesServed }),
  };
}

/**
 * The `h1:` of a downloaded zip; undefined, with a problem, when it cannot be computed (Terraform could not
 * install it either).
 */
async function packageH1(
  file: string,
  p: ServedPlatform,
  signal: AbortSignal | undefined,
  problems: ConsumerProblem[],
): Promise<string | undefined> {
  try {
    return await zipHash1(file, p.filename, { signal });
  } catch (error) {
    if (!(error instanceof PackageHashError)) throw error;
    problems.push({
      subject: platformName(p),
      message: error.message,
      terraform: null,
      hint: `The zip is signed but Terraform cannot install it. ${error.hint ?? 'Rebuild the archive.'} Publish it as a new patch version; never overwrite a published one.`,
    });
    return undefined;
  }
}

/** True when any download response served a `packages` entry. */
function anyServed(served: Map<string, ServedPackages>): boolean {
  return [...served.values()].some((packages) => packages !== undefined && packages.size > 0);
}

/** Fails (exit 3) before any download when files are missing: Terraform would not see the version yet. */
function requireComplete(
  version: VersionResource,
  platforms: PlatformResource[],
  label: string,
  hostname: string,
): void {
  const states = fileStates(version, platforms);
  if (states.complete) return;
  throw new VerificationError(
    `${label} is not complete on ${hostname}, so terraform init cannot install it yet: missing ${states.missing.join(', ')} (files ${states.summary})`,
    {
      hint: 'Run the same provider publish command again: it resumes and uploads only what is missing.',
      details: { missing: states.missing, files: states.summary },
    },
  );
}

/**
 * A small file through its download link. A link that is refused (401/403/404: expired, most likely) is replaced
 * once by reading the version again, as `terraform init` would get a fresh one (the downloader's refresh hook);
 * only a fresh link that is refused too is a problem.
 */
async function fetchSmall(
  downloader: Downloader,
  link: string | undefined,
  what: string,
  kind: 'checksums' | 'signature',
  refresh: () => Promise<string | undefined>,
): Promise<{ bytes?: Buffer; problems: ConsumerProblem[] }> {
  const subject = kind === 'checksums' ? 'SHA256SUMS' : 'SHA256SUMS.sig';
  try {
    if (link === undefined) throw new DownloadError(`no download link for ${what}`, undefined, 'no link');
    return { bytes: await downloader.bytes(link, what, undefined, refresh), problems: [] };
  } catch (error) {
    if (!(error instanceof DownloadError)) throw error;
    return { problems: [downloadProblem(error, subject, what, kind, link)] };
  }
}

function servedPlatform(p: PlatformResource): ServedPlatform {
  const a = p.attributes;
  return { os: a.os, arch: a.arch, filename: a.filename, shasum: a.shasum };
}
