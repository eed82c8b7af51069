/**
 * What `terraform init` will get: read the version and its platforms, download SHA256SUMS and its signature
 * through the download links (no token), verify the signature with the registered key of the version's
 * key-id, match every platform's `filename` and `shasum` against SHA256SUMS, and optionally hash every
 * stored zip. With `lockHashes`, also read the registry protocol's download responses and check the lock hashes
 * they serve (`packages`, ./packages.ts), and with `download` compute each zip's `h1:` (streamed to a temporary
 * file, hashed, removed). Every mismatch is collected and reported at once, with Terraform's own error text
 * beside ours.
 */
import { createHash } from 'node:crypto';
import { ApiError, VerificationError } from '../errors.js';
import { createDownloader, DownloadError, type Downloader } from '../registry/downloads.js';
import { fileStates } from '../registry/fileStates.js';
import { listGpgKeys } from '../registry/gpgKeys.js';
import { listPlatforms } from '../registry/providerPlatforms.js';
import { getVersion } from '../registry/versions.js';
import type { PlatformResource, VersionResource } from '../terraform/api.js';
import { sortHashes } from '../terraform/hashes.js';
import { comparePlatforms, platformName } from '../terraform/names.js';
import {
  acceptableHashes,
  matchingChecksumProblem,
  type ConsumerProblem,
  type ServedPlatform,
} from './checksums.js';
import { authenticateSignature, type SignatureVerdict } from './signature.js';
import { checkArchives } from './archives.js';
import { describeProblems, downloadProblem } from './report.js';
import { packageProblems, readServedPackages, type KnownPackage, type ServedPackages } from './packages.js';

export type { ConsumerProblem } from './checksums.js';

import type { ConsumerCheckInput, ConsumerCheckReport } from './types.js';

export type { ConsumerCheckInput, ConsumerCheckReport, ConsumerPlatformReport } from './types.js';

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
  const { sums, keyId, signature, problems } = await readSignedSums(input, version, downloader, label);

  const servedPlatforms = sortedPlatforms(platforms, sums.bytes, problems);

  // Every zip's h1: already known for these signed bytes (a cache): nothing to download.
  const kept = signature === undefined ? undefined : await knownHashes(input, sums.bytes, servedPlatforms);
  const { reports, known } = await checkArchives({
    input: kept === undefined ? input : { ...input, download: false },
    label,
    downloader,
    platforms: servedPlatforms,
    listed: sums.bytes,
    concurrency,
    problems,
  });

  if (kept !== undefined) noteKnown(known, servedPlatforms, kept);
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
      sha256: createHash('sha256').update(sums.bytes).digest('hex'),
    },
    platforms: kept === undefined ? reports : withKnown(reports, kept),
    downloaded: input.download === true && kept === undefined,
    ...(kept === undefined ? {} : { h1Known: true }),
    ...(packagesServed === undefined ? {} : { packages: packagesServed }),
  };
}

/** The platforms as served, sorted; each one's filename and shasum held against SHA256SUMS (`problems`). */
function sortedPlatforms(
  platforms: PlatformResource[],
  sums: Buffer | undefined,
  problems: ConsumerProblem[],
): { resource: PlatformResource; served: ServedPlatform }[] {
  const served = platforms
    .map((p) => ({ resource: p, served: servedPlatform(p) }))
    .sort((x, y) => comparePlatforms(x.served, y.served));
  if (sums) {
    for (const { served: p } of served) {
      const problem = matchingChecksumProblem(sums, p);
      if (problem) problems.push(problem);
    }
  }
  return served;
}

/**
 * With `knownH1`, `download` and `lockHashes`: the `h1:` of every platform's zip as the caller knows them for
 * this SHA256SUMS (by its SHA-256), when it knows them all; undefined otherwise.
 */
async function knownHashes(
  input: ConsumerCheckInput,
  sums: Buffer | undefined,
  platforms: { served: ServedPlatform }[],
): Promise<Record<string, string> | undefined> {
  if (
    input.knownH1 === undefined ||
    sums === undefined ||
    input.download !== true ||
    input.lockHashes !== true
  )
    return undefined;
  const kept = await input.knownH1(createHash('sha256').update(sums).digest('hex'));
  return kept !== undefined && platforms.every(({ served }) => Object.hasOwn(kept, served.filename))
    ? kept
    : undefined;
}

/** The known `h1:`s, held against the registry's `packages` as computed ones would be. */
function noteKnown(
  known: KnownPackage[],
  platforms: { served: ServedPlatform }[],
  kept: Record<string, string>,
): void {
  for (const { served } of platforms) {
    const entry = known.find((k) => k.platform === platformName(served));
    if (entry !== undefined) entry.knownH1 = kept[served.filename];
  }
}

/** The reports with each platform's known `h1:` among its hashes. */
function withKnown(
  reports: ConsumerCheckReport['platforms'],
  kept: Record<string, string>,
): ConsumerCheckReport['platforms'] {
  return reports.map((p) => ({ ...p, hashes: sortHashes([...p.hashes, kept[p.filename]!]) }));
}

/**
 * SHA256SUMS and its signature through their download links, and the signature checked with the registered key
 * of the version's key-id: the problems found, and the signature's verdict when it holds.
 */
async function readSignedSums(
  input: ConsumerCheckInput,
  version: VersionResource,
  downloader: Downloader,
  label: string,
): Promise<{
  sums: { bytes?: Buffer };
  keyId: string;
  signature: SignatureVerdict | undefined;
  problems: ConsumerProblem[];
}> {
  const { client, address } = input;
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

  return { sums, keyId, signature, problems };
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
