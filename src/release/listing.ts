/**
 * SHA256SUMS against the directory: every archive of the release is listed and there, the manifest (which
 * goreleaser lists) is listed too, or a warning says so. Lines for other files (SBOMs, attestations, source
 * archives, `.sig` files) are tolerated with one warning: Terraform only looks up the line of the zip it
 * installs (hashicorp/terraform: internal/getproviders/package_authentication.go,
 * `matchingChecksumAuthentication`), but it records every line as a `zh:` hash in lock files
 * (hashicorp/terraform#33599), and the public registry refuses releases listing them
 * (openai/terraform-provider-openai#98, cloudflare/terraform-provider-cloudflare#6990).
 */
import { VerificationError, shorten } from '../errors.js';
import { parseReleaseFileName, releaseFileNames } from './filenames.js';
import type { ReleaseLayout } from './layout.js';
import type { ShasumEntry } from './shasums.js';

/** The listing, checked. */
export interface Listing {
  warnings: string[];
  /** The listed files that are in the folder: each is hashed and compared with its line. */
  present: ShasumEntry[];
}

const MAX_NAMED = 10;

/** Checks the listing; returns warnings and the lines to hash, throws a VerificationError naming the file (and line). */
export function checkListing(layout: ReleaseLayout, entries: ShasumEntry[]): Listing {
  const listed = new Map(entries.map((e) => [e.filename, e]));
  for (const platform of layout.platforms) {
    if (!listed.has(platform.filename)) {
      throw new VerificationError(`${platform.filename} is not listed in ${layout.shasums}`, {
        hint: 'Terraform cannot install an archive that SHA256SUMS does not list. Regenerate SHA256SUMS over every archive (goreleaser does) and sign it again.',
        details: { file: layout.shasums, missing: platform.filename },
      });
    }
  }
  const own = new Set(layout.platforms.map((p) => p.filename));
  const extra: { entry: ShasumEntry; absent: boolean }[] = [];
  for (const entry of entries) {
    const absent = !layout.files.has(entry.filename);
    // A zip of this provider, or the release's manifest, is something the registry or Terraform fetch (a listed
    // manifest that was not uploaded broke ingestion: DataDog/terraform-provider-datadog#3575).
    const info = parseReleaseFileName(entry.filename);
    const zip = info?.name === layout.name && (info.kind === 'platform' || info.kind === 'odd-zip');
    const manifest = entry.filename === releaseFileNames(layout.name, rawVersion(layout)).manifest;
    if (absent && (zip || manifest)) {
      // A mirrored release carries the platforms chosen from the origin's signed list, which names them all.
      if (layout.mirrored === true) continue;
      throw new VerificationError(
        `${layout.shasums} line ${entry.line} lists ${shorten(entry.filename)}, which is not in ${layout.dir}`,
        {
          hint: 'Put the file back, or regenerate SHA256SUMS from the files that are there and sign it again.',
          details: { file: layout.shasums, line: entry.line, listed: shorten(entry.filename) },
        },
      );
    }
    // The checksum file's own signature is goreleaser 2.15.0/2.15.1's mistake, named by the signature check.
    if (own.has(entry.filename) || entry.filename === layout.manifest || entry.filename === layout.signature)
      continue;
    extra.push({ entry, absent });
  }
  const warnings: string[] = [];
  if (layout.manifest !== undefined && layout.mirrored !== true && !listed.has(layout.manifest)) {
    warnings.push(
      `${layout.manifest} is not listed in ${layout.shasums}; goreleaser lists it (checksum.extra_files) and the public registry requires it`,
    );
  }
  if (extra.length > 0) {
    const named = extra
      .slice(0, MAX_NAMED)
      .map(
        ({ entry, absent }) =>
          `line ${entry.line} ${shorten(entry.filename)}${absent ? ' (not in the folder)' : ''}`,
      );
    if (extra.length > MAX_NAMED) named.push(`and ${extra.length - MAX_NAMED} more`);
    const n = extra.length;
    warnings.push(
      `${layout.shasums} lists ${n} file${n === 1 ? '' : 's'} besides the archives and the manifest: ${named.join(', ')}. ` +
        'Terraform ignores such lines when installing, but records each as a zh: hash in .terraform.lock.hcl, and the public registry refuses the release; ' +
        'list only the zips and the manifest, and give SBOMs, attestations and other files a checksum file of their own',
    );
  }
  // A line for the signature itself can never hold: its hash is the signature's, made before the line was added.
  const present = entries.filter((e) => layout.files.has(e.filename) && e.filename !== layout.signature);
  return { warnings, present };
}

/** The version as written in the file names (`layout.version` is normalised; goreleaser writes it without `v`). */
function rawVersion(layout: ReleaseLayout): string {
  return parseReleaseFileName(layout.shasums)?.version ?? layout.version;
}
