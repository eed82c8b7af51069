/**
 * Where a lock entry's hashes come from. The lock command takes them from a source, so the same core can lock
 * from a local release (here: a release `verifyRelease` has checked) or, later, from what the registry serves.
 * Which hashes an entry records follows `terraform providers lock -platform=…` (hashicorp/terraform:
 * internal/providercache/installer.go and internal/getproviders/package_authentication.go): the `h1:` (and `zh:`)
 * of each platform package it installed, plus, once the signature checked out, `signatureAuthentication.
 * AcceptableHashes()`: a `zh:` for every line of the signed SHA256SUMS (every file it lists, not only this
 * platform's zip, and not only zips: the manifest's line too).
 */
import { UsageError } from '../errors.js';
import { parseShasums } from '../release/shasums.js';
import { sortHashes, zipHash } from '../terraform/hashes.js';
import type { VerifiedRelease } from '../release/types.js';
import { platformName } from '../terraform/names.js';

/** One platform's package and its lock hashes. */
export interface LockPlatform {
  os: string;
  arch: string;
  /** Its `h1:` and `zh:` hashes. */
  hashes: string[];
}

/** What a source knows about one version: its platforms and the signed SHA256SUMS. */
export interface LockMaterial {
  /** The provider type (`example`). */
  name: string;
  version: string;
  platforms: LockPlatform[];
  /** The hex SHA-256 of every line of the signed SHA256SUMS, in file order. */
  shasums: string[];
}

/** Where lock material comes from: `label` names it in messages (`the release in ./dist`). */
export interface LockSource {
  label: string;
  load(): Promise<LockMaterial>;
}

/** The lock material of a verified local release. */
export function releaseMaterial(release: VerifiedRelease): LockMaterial {
  return {
    name: release.name,
    version: release.version,
    platforms: release.platforms.map((p) => ({
      os: p.os,
      arch: p.arch,
      hashes: sortHashes([p.h1, zipHash(p.shasum)]),
    })),
    shasums: parseShasums(release.shasumsBytes, release.shasums.filename).map((e) => e.shasum),
  };
}

/**
 * The hashes an entry records for `platforms` (every platform of the version when undefined): each chosen
 * platform's hashes, and a `zh:` for every SHA256SUMS line. A platform the version does not have is a UsageError.
 */
export function entryHashes(material: LockMaterial, platforms: string[] | undefined): string[] {
  const available = material.platforms.map(platformName);
  const chosen = platforms ?? available;
  const missing = chosen.filter((p) => !available.includes(p));
  if (missing.length > 0) {
    throw new UsageError(`${material.name} ${material.version} has no package for ${missing.join(', ')}`, {
      hint: `Choose among ${available.join(', ')} (or leave out --platform for all of them).`,
    });
  }
  const hashes = material.platforms.filter((p) => chosen.includes(platformName(p))).flatMap((p) => p.hashes);
  return sortHashes([...hashes, ...material.shasums.map(zipHash)]);
}
