/**
 * The two hashes a `.terraform.lock.hcl` records for a provider package, computed by the publisher, which holds
 * every platform's zip (Terraform can only compute `h1:` for the platform it runs on):
 *
 * - `zh:` ("zip hash"): the lower-case hex SHA-256 of the zip file, the value in SHA256SUMS.
 * - `h1:`: Go's `golang.org/x/mod/sumdb/dirhash` `Hash1` over the files inside the zip, as `HashZip` computes it
 *   and Terraform's `getproviders.PackageHashV1` calls it: the entries' names (from the central directory, as
 *   Go's archive/zip reads them: raw bytes, directory entries included, sorted bytewise), and for each a line
 *   `<hex sha256 of its content>  <name>\n`; the SHA-256 of those lines, base64, after `h1:`.
 *
 * The zip is read through the central directory like Go's archive/zip does, never extracted to disk: each
 * entry's content streams through the inflater (node's zlib, on the thread pool) into a SHA-256.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { Entry, ZipFile } from 'yauzl';
import { InterruptedError, VerificationError } from '../errors.js';
import { MAX_ZIP_ENTRIES } from './zipCheck.js';

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

/** A zip whose `h1:` cannot be computed (Go's dirhash would fail too, so Terraform could not install it). */
export class PackageHashError extends VerificationError {}

/** Computes the `h1:` of a zip on disk; throws PackageHashError naming `filename` when it cannot. */
export async function zipHash1(
  path: string,
  filename: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<string> {
  const fail = (problem: string, cause?: unknown): PackageHashError =>
    new PackageHashError(`${filename}: the h1: lock hash cannot be computed: ${problem}`, {
      hint: 'Rebuild the archive with goreleaser (archives: formats: [zip]) and regenerate SHA256SUMS.',
      details: { file: filename },
      cause,
    });
  let zip: ZipFile;
  try {
    const yauzl = await import('yauzl');
    // Raw names, as Go's archive/zip keeps them: no CP437 decoding, no slash rewriting.
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, decodeStrings: false });
  } catch (error) {
    throw fail(`it is not a readable zip archive (${(error as Error).message})`, error);
  }
  try {
    if (zip.entryCount > MAX_ZIP_ENTRIES) throw fail(`it holds ${zip.entryCount} entries`);
    // Go's HashZip: every name in the list (duplicates too), each opened by name, where the last entry wins.
    const names: Buffer[] = [];
    const byName = new Map<string, Entry>();
    try {
      for await (const entry of zip.eachEntry()) {
        const name = entry.fileNameRaw;
        names.push(name);
        byName.set(name.toString('latin1'), entry);
      }
    } catch (error) {
      throw fail(`it is a damaged zip archive (${(error as Error).message})`, error);
    }
    names.sort((a, b) => Buffer.compare(a, b));
    const summary = createHash('sha256');
    for (const name of names) {
      if (options.signal?.aborted) throw new InterruptedError('Interrupted while hashing the release files');
      if (name.includes(0x0a)) throw fail('an entry name holds a newline, which dirhash refuses');
      const entry = byName.get(name.toString('latin1'))!;
      const content = await hashEntry(zip, entry).catch((error: unknown) => {
        throw fail(
          `entry ${JSON.stringify(name.toString('utf8'))} cannot be read (${(error as Error).message})`,
          error,
        );
      });
      summary.update(`${content}  `);
      summary.update(name);
      summary.update('\n');
    }
    return `h1:${summary.digest('base64')}`;
  } finally {
    zip.close();
  }
}

/**
 * The hex SHA-256 of one entry's uncompressed content. yauzl checks the sizes; the CRC-32 is checked here, as Go's
 * archive/zip does on every read (so a zip Terraform would refuse to open gets no hash).
 */
async function hashEntry(zip: ZipFile, entry: Entry): Promise<string> {
  const hash = createHash('sha256');
  const stream: Readable = await zip.openReadStreamPromise(entry);
  let crc = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    crc = crc32(chunk as Buffer, crc);
  }
  if (crc >>> 0 !== entry.crc32 >>> 0) throw new Error('its content does not match its CRC-32');
  return hash.digest('hex');
}
