/**
 * The platforms' zips as `terraform init` gets them: each matched against SHA256SUMS, and with `download`
 * downloaded through its link and hashed to its `shasum`; with `lockHashes` too, its `h1:` computed from a
 * temporary copy (removed at once). What each platform vouches for is reported; every mismatch is a problem.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PackageHashError, zipHash1 } from '../release/hashing/lockHashes.js';
import { DownloadError, type Downloader } from '../registry/downloads.js';
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
  let reports: ConsumerPlatformReport[];
  let files = 0;
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

  return { reports, known };
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
