/**
 * The platforms' zips as `terraform init` gets them: each matched against SHA256SUMS, and with `download`
 * downloaded through its link and hashed to its `shasum`; with `lockHashes` too, its `h1:` computed from the same
 * download where the link answers byte ranges (./rangedZip.ts), else from a temporary copy (removed at once).
 * What each platform vouches for is reported; every mismatch is a problem.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PackageHashError, remoteZipHashes, zipHash1 } from '../release/hashing/lockHashes.js';
import { DownloadError, type ByteProgress, type Downloader, type FreshLink } from '../registry/downloads.js';
import { visible } from '../ui/output.js';
import type { TransferHandle } from '../ui/progress.js';
import { MAX_ZIP_BYTES, openRangedZip } from './rangedZip.js';
import { VerificationError } from '../errors.js';
import { getPlatform } from '../registry/providerPlatforms.js';
import type { PlatformResource } from '../terraform/api.js';
import { sortHashes, zipHash } from '../terraform/hashes.js';
import { platformName } from '../terraform/names.js';
import type { ConsumerCheckInput, ConsumerPlatformReport } from './types.js';
import {
  archiveChecksumProblem,
  listedHash,
  type ConsumerProblem,
  type ServedPlatform,
} from './checksums.js';
import type { KnownPackage } from './packages.js';
import { mapPool } from '../pool.js';
import { downloadProblem } from './report.js';

/** What the archives' check needs. */
export interface ArchivesCheck {
  input: ConsumerCheckInput;
  /** `<namespace>/<name> <version>`, for messages. */
  label: string;
  downloader: Downloader;
  /** The platforms, sorted as reported: the resource and what it serves. */
  platforms: { resource: PlatformResource; served: ServedPlatform }[];
  /** The signed SHA256SUMS, when it was read. */
  listed: Buffer | undefined;
  concurrency: number;
  /** Where the problems found go. */
  problems: ConsumerProblem[];
}

/** Checks every platform's zip; returns the reports and what the `packages` check compares against. */
export async function checkArchives(check: ArchivesCheck): Promise<{
  reports: ConsumerPlatformReport[];
  known: KnownPackage[];
}> {
  const { input, label, downloader, platforms, concurrency, problems } = check;
  const { client, address } = input;
  const sums = check.listed;
  const withH1 = input.lockHashes === true && input.download === true;
  const scratch = withH1 ? await mkdtemp(join(input.tmpDir ?? tmpdir(), 'provider-check-')) : undefined;
  const known: KnownPackage[] = [];
  // Whether each host's download links answer ranges, once one told (then each zip's h1: comes from its one
  // download); shared with the run's other checks when it gives its own.
  const ranges: RangeSupport = input.ranges ?? new Map<string, Promise<boolean>>();
  let reports: ConsumerPlatformReport[];
  let files = 0;
  const before = problems.length;
  const batch =
    input.download === true
      ? input.progress?.downloads(
          `Downloading the ${platforms.length} zips of ${label}`,
          platforms.length,
          label,
        )
      : undefined;
  try {
    reports = await mapPool(platforms, concurrency, async ({ resource, served: p }) => {
      const listed = sums ? listedHash(sums, p.filename)?.toLowerCase() : undefined;
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
      let transfer: TransferHandle | undefined;
      try {
        if (link === undefined) throw new DownloadError(`no download link for ${what}`, undefined, 'no link');
        const fresh = async () =>
          (await getPlatform(client, address, input.version, p.os, p.arch))?.links[
            'provider-binary-download'
          ];
        // Not checked against SHA256SUMS yet: shown with its control characters made visible.
        transfer = input.progress?.transfer(visible(p.filename), undefined);
        const onBytes = transfer === undefined ? undefined : transfer.update.bind(transfer);
        const digest = await fetchArchive(
          { downloader, ranges, link, what, fresh, file, signal: input.signal, onBytes },
          p,
        );
        const problem = archiveChecksumProblem(p, digest.sha256);
        report.bytes = digest.bytes;
        if (problem) problems.push(problem);
        else report.archive = 'verified';
        if (!problem && digest.h1 !== undefined) {
          const h1 = packageH1(digest.h1, p, problems);
          platform.downloaded = { bytes: digest.bytes, h1 };
          if (h1 !== undefined) report.hashes = sortHashes([...report.hashes, h1]);
        }
        input.onArchive?.(report, problem);
        if (problem === undefined) transfer?.done();
        else transfer?.fail();
      } catch (error) {
        transfer?.fail();
        if (!(error instanceof DownloadError)) throw error;
        problems.push(downloadProblem(error, platformName(p), what, 'archive'));
      } finally {
        if (file !== undefined) await rm(file, { force: true });
      }
      return report;
    });
  } catch (error) {
    batch?.fail();
    throw error;
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
  if (problems.length === before) batch?.succeed();
  else batch?.fail();

  return { reports, known };
}

/** Whether each host's download links answer ranges, as the first zip on it found out; the others wait for it. */
type RangeSupport = Map<string, Promise<boolean>>;

/** One zip's download, as `fetchArchive` makes it. */
interface ArchiveFetch {
  downloader: Downloader;
  ranges: RangeSupport;
  link: string;
  what: string;
  fresh: FreshLink;
  /** With lock hashes: where the zip is kept if its link answers no ranges. */
  file: string | undefined;
  signal: AbortSignal | undefined;
  /** Told of the bytes received (for progress). */
  onBytes: ByteProgress | undefined;
}

/**
 * A zip downloaded and hashed: its SHA-256 and size, and with lock hashes its `h1:` (or why it cannot be
 * computed). Where the link answers ranges, the `h1:` comes from the one download (the directory read by ranges
 * first, the entries inflated as the body streams in); otherwise the zip is kept in a temporary file as it
 * streams in and its entries read back from it.
 */
async function fetchArchive(
  fetch: ArchiveFetch,
  p: ServedPlatform,
): Promise<{ sha256: string; bytes: number; h1?: string | PackageHashError }> {
  const { downloader, link, what, fresh, file, onBytes } = fetch;
  if (file === undefined) return downloader.digest(link, what, fresh);
  // One zip asks first; the others wait for its answer rather than each ask a host that ignores ranges.
  const { ranges } = fetch;
  const host = hostOf(link, what);
  const known = ranges.get(host);
  const first = known === undefined;
  if (first || (await known)) {
    const input = { downloader, link, what, filename: p.filename, host, limit: MAX_ZIP_BYTES };
    const asking = openRangedZip(input);
    // Only an answer decides for the host (200 or 416: no ranges); a failed asking (an expired link, the network)
    // lets the next zip ask again.
    if (first)
      ranges.set(
        host,
        asking.then(
          (zip) => zip !== undefined,
          () => {
            ranges.delete(host);
            return false;
          },
        ),
      );
    // A refused range (an expired link) is left to the plain download, which asks for a fresh link.
    const remote = await asking.catch((error: unknown) => {
      if (error instanceof DownloadError) return undefined;
      throw error;
    });
    // The download that fails or does not hold together this way is made the plain way (retried, its link
    // refreshed), as `terraform init` makes it.
    if (remote !== undefined) {
      const hashed = await remoteZipHashes(remote, p.filename, onBytes).catch((error: unknown) => {
        if (error instanceof DownloadError || error instanceof VerificationError) return undefined;
        throw error;
      });
      if (hashed !== undefined) return hashed;
    }
  }
  const digest = await downloader.toFile(link, what, file, fresh, onBytes);
  const h1 = await zipHash1(file, p.filename, { signal: fetch.signal }).catch((error: unknown) => {
    if (error instanceof PackageHashError) return error;
    throw error;
  });
  return { ...digest, h1 };
}

/** The host of a download link; a link that is no URL is a download that cannot be made. */
function hostOf(link: string, what: string): string {
  try {
    return new URL(link).host;
  } catch {
    throw new DownloadError(`${what}: the registry's download link is not a URL`, undefined, 'no link');
  }
}

/**
 * The `h1:` of a downloaded zip; undefined, with a problem, when it cannot be computed (Terraform could not
 * install it either).
 */
function packageH1(
  h1: string | PackageHashError,
  p: ServedPlatform,
  problems: ConsumerProblem[],
): string | undefined {
  if (typeof h1 === 'string') return h1;
  problems.push({
    subject: platformName(p),
    message: h1.message,
    terraform: null,
    hint: `The zip is signed but Terraform cannot install it. ${h1.hint ?? 'Rebuild the archive.'} Publish it as a new patch version; never overwrite a published one.`,
  });
  return undefined;
}
