/**
 * SHA256SUMS against the directory: every archive of the release is listed, every listed file exists, and
 * the manifest (which goreleaser lists) is listed too, or a warning says so.
 */
import { VerificationError } from '../errors.js';
import type { ReleaseLayout } from './layout.js';
import type { ShasumEntry } from './shasums.js';
import { shorten } from './shorten.js';

/** Checks the listing; returns warnings, throws a VerificationError naming the file (and line) otherwise. */
export function checkListing(layout: ReleaseLayout, entries: ShasumEntry[]): string[] {
  const listed = new Map(entries.map((e) => [e.filename, e]));
  for (const platform of layout.platforms) {
    if (!listed.has(platform.filename)) {
      throw new VerificationError(`${platform.filename} is not listed in ${layout.shasums}`, {
        hint: 'Terraform cannot install an archive that SHA256SUMS does not list. Regenerate SHA256SUMS over every archive (goreleaser does) and sign it again.',
        details: { file: layout.shasums, missing: platform.filename },
      });
    }
  }
  for (const entry of entries) {
    if (!layout.files.has(entry.filename)) {
      throw new VerificationError(
        `${layout.shasums} line ${entry.line} lists ${shorten(entry.filename)}, which is not in ${layout.dir}`,
        {
          hint: 'Put the file back, or regenerate SHA256SUMS from the files that are there and sign it again.',
          details: { file: layout.shasums, line: entry.line, listed: shorten(entry.filename) },
        },
      );
    }
  }
  const warnings: string[] = [];
  if (layout.manifest !== undefined && !listed.has(layout.manifest)) {
    warnings.push(
      `${layout.manifest} is not listed in ${layout.shasums}; goreleaser lists it (checksum.extra_files) and the public registry requires it`,
    );
  }
  return warnings;
}
