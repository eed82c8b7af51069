/**
 * The two hashes a `.terraform.lock.hcl` records for a provider package, as Terraform defines them; every side
 * (the publisher, the lock-file writer, the emulator's archivist) computes them with these rules:
 *
 * - `zh:` ("zip hash"): the lower-case hex SHA-256 of the zip file, the value in SHA256SUMS.
 * - `h1:`: Go's `golang.org/x/mod/sumdb/dirhash` `Hash1` over the files inside the zip, as `HashZip` computes it
 *   and Terraform's `getproviders.PackageHashV1` calls it: the entries' names (raw bytes, directory entries
 *   included, sorted bytewise), and for each a line `<hex sha256 of its content>  <name>\n`; the SHA-256 of those
 *   lines, base64, after `h1:`.
 *
 * How a zip is read to get the entries' content hashes is each side's own business (src/release/hashing/lockHashes.ts
 * for the publisher, src/emulator/zipHashes.ts for the platform), so that a bug in one reader never agrees with
 * itself on the other side of the wire.
 */
import { createHash } from 'node:crypto';

/** The hashes of one platform package, as a lock file records them. */
export interface PackageHashes {
  /** `h1:<base64>`. */
  h1: string;
  /** `zh:<hex>`. */
  zh: string;
}

/** `zh:` from a zip's hex SHA-256. */
export function zipHash(sha256: string): string {
  return `zh:${sha256.toLowerCase()}`;
}

/**
 * Sorts and de-duplicates hashes as Terraform does (`depsfile.NewProviderLock`: plain string order, so every
 * `h1:` comes before every `zh:`).
 */
export function sortHashes(hashes: Iterable<string>): string[] {
  return [...new Set(hashes)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A package's lock hashes (`h1:` and `zh:`) in the order a lock file lists them. */
export function lockHashes(p: { h1: string; shasum: string }): string[] {
  return sortHashes([p.h1, zipHash(p.shasum)]);
}

/** A name dirhash refuses: it holds a newline, which would break the line format. */
export class DirhashNameError extends Error {}

/**
 * Go's dirhash `Hash1`: every name in `names` (a repeated name listed each time), sorted as bytes, each with the
 * hex SHA-256 of its content from `contentHash`. Throws DirhashNameError for a name holding a newline.
 */
export function dirhash1(names: readonly Buffer[], contentHash: (name: Buffer) => string): string {
  const summary = createHash('sha256');
  for (const name of [...names].sort((a, b) => Buffer.compare(a, b))) {
    if (name.includes(0x0a))
      throw new DirhashNameError('an entry name holds a newline, which dirhash refuses');
    summary.update(`${contentHash(name)}  `);
    summary.update(name);
    summary.update('\n');
  }
  return `h1:${summary.digest('base64')}`;
}
