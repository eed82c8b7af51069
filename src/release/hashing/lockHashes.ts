/**
 * How the publisher gets a zip's `h1:` (the rule itself is src/terraform/hashes.ts): the zip is read through the
 * central directory like Go's archive/zip does, never extracted to disk: yauzl reads the directory and the local
 * headers, and the entries' contents are hashed in the same read of the file as its SHA-256
 * (src/release/hashing/hashing.ts), stored data as it passes and deflated data through zlib.
 */
import type { ZipFile } from 'yauzl';
import { InterruptedError, VerificationError } from '../../errors.js';
import { EntryReadError, FileReadError, hashFile, type PlannedEntry, type ZipPlan } from './hashing.js';
import { DirhashNameError, dirhash1 } from '../../terraform/hashes.js';
import { MAX_ZIP_ENTRIES } from '../zipCheck.js';
import { isRemoteReadError, openZip, type RemoteZip } from '../remoteZip.js';
import { digestLink } from './linkRead.js';

/** A zip whose `h1:` cannot be computed (Go's dirhash would fail too, so Terraform could not install it). */
export class PackageHashError extends VerificationError {}

/** A zip's entries as its `h1:` needs them: the plan to hash them in one read, and the raw names in plan order. */
export interface ZipHashPlan {
  plan: ZipPlan;
  /** Raw names (bytes, as Go's archive/zip keeps them), in plan order. */
  names: Buffer[];
  /** Plan positions in the central directory's order (where, for a repeated name, the last one wins). */
  directoryOrder: number[];
}

/**
 * Reads a zip's central directory and each entry's local header (yauzl; nothing else of the file), and plans
 * the one read that hashes every entry's content. Throws PackageHashError naming `filename` when it cannot.
 */
export async function planZipHash(path: string, filename: string, remote?: RemoteZip): Promise<ZipHashPlan> {
  let zip: ZipFile;
  try {
    // Raw names, as Go's archive/zip keeps them: no CP437 decoding, no slash rewriting.
    zip = await openZip(path, { lazyEntries: true, autoClose: false, decodeStrings: false }, remote);
  } catch (error) {
    if (isRemoteReadError(error)) throw error;
    throw hashFailure(filename, `it is not a readable zip archive (${(error as Error).message})`, error);
  }
  try {
    if (zip.entryCount > MAX_ZIP_ENTRIES) throw hashFailure(filename, `it holds ${zip.entryCount} entries`);
    const found: { entry: PlannedEntry; name: Buffer; index: number }[] = [];
    try {
      for await (const entry of zip.eachEntry()) {
        const name = entry.fileNameRaw;
        const shown = JSON.stringify(name.toString('utf8'));
        if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
          throw new Error(
            `entry ${shown} uses compression method ${entry.compressionMethod}, not stored (0) or deflate (8)`,
          );
        }
        // Go's archive/zip opens a name ending in "/" as a folder: empty whatever data follows, and an error
        // when the directory gives it a size.
        const folder = name.at(-1) === 0x2f;
        if (folder && entry.uncompressedSize !== 0) {
          throw new Error(`folder entry ${shown} declares ${entry.uncompressedSize} bytes of content`);
        }
        const { fileDataStart } = await zip.readLocalFileHeaderPromise(entry, { minimal: true });
        found.push({
          entry: {
            start: fileDataStart,
            compressedSize: folder ? 0 : entry.compressedSize,
            uncompressedSize: entry.uncompressedSize,
            method: folder ? 0 : entry.compressionMethod,
            crc32: folder ? 0 : entry.crc32,
            dataDescriptor: !folder && (entry.generalPurposeBitFlag & 0x8) !== 0,
            name: shown,
          },
          name,
          index: found.length,
        });
      }
    } catch (error) {
      if (isRemoteReadError(error)) throw error;
      throw hashFailure(filename, `it is a damaged zip archive (${(error as Error).message})`, error);
    }
    // Checked here, with the plan, rather than only when the h1: is computed: `publish` computes it after the
    // uploads start (stored entries are hashed while the files upload), and a zip dirhash refuses is bad input,
    // refused before any write.
    if (found.some((f) => f.name.includes(0x0a)))
      throw hashFailure(filename, 'an entry name holds a newline, which dirhash refuses');
    found.sort((a, b) => a.entry.start - b.entry.start);
    for (let i = 1; i < found.length; i++) {
      const before = found[i - 1]!.entry;
      if (before.start + before.compressedSize > found[i]!.entry.start) {
        throw hashFailure(
          filename,
          `entries ${before.name} and ${found[i]!.entry.name} share bytes (overlapping entries are a zip-bomb shape)`,
        );
      }
    }
    const directoryOrder = found.map((_, position) => position);
    directoryOrder.sort((a, b) => found[a]!.index - found[b]!.index);
    return { plan: found.map((f) => f.entry), names: found.map((f) => f.name), directoryOrder };
  } finally {
    zip.close();
  }
}

/**
 * Go's dirhash `Hash1` from the entries' content hashes (in plan order): every name in the list (duplicates too),
 * each opened by name where the last entry of that name in the central directory wins (`HashZip`'s map), names
 * sorted as bytes.
 */
export function hash1FromEntries(filename: string, zip: ZipHashPlan, contents: string[]): string {
  const { names } = zip;
  // An entry left for later (`storedEntriesLater`) must have been hashed by now: never an h1: without it.
  if (contents.some((hash) => hash === ''))
    throw new Error(`${filename}: an entry's content hash is missing (internal error)`);
  const byName = new Map<string, string>();
  for (const i of zip.directoryOrder) byName.set(names[i]!.toString('latin1'), contents[i]!);
  try {
    return dirhash1(names, (name) => byName.get(name.toString('latin1'))!);
  } catch (error) {
    if (error instanceof DirhashNameError) throw hashFailure(filename, error.message);
    throw error;
  }
}

/** Computes the `h1:` of a zip on disk; throws PackageHashError naming `filename` when it cannot. */
export async function zipHash1(
  path: string,
  filename: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<string> {
  const planned = await planZipHash(path, filename);
  const { plan } = planned;
  if (options.signal?.aborted) throw new InterruptedError(`Interrupted while hashing ${filename}`);
  const digest = await hashFile(path, plan).catch((error: unknown) => {
    throw entryFailure(filename, error);
  });
  return hash1FromEntries(filename, planned, digest.entries!);
}

/**
 * A zip at a link (./../remoteZip.ts) read once: its SHA-256 and size from its body, and its `h1:` from the same
 * read (its directory and local headers read by ranges first); the `h1:` is a PackageHashError when it cannot be
 * computed, the hashes of the bytes are there all the same.
 */
export async function remoteZipHashes(
  remote: RemoteZip,
  filename: string,
  /** Told of the bytes read so far (for progress). */
  onBytes?: (received: number, total: number) => void,
): Promise<{ sha256: string; bytes: number; h1: string | PackageHashError }> {
  const planned = await planZipHash(filename, filename, remote).catch((error: unknown) => {
    if (error instanceof PackageHashError) return error;
    throw error;
  });
  const plan = planned instanceof PackageHashError ? [] : planned.plan;
  const read = await digestLink(remote, filename, plan, onBytes);
  const { sha256, bytes, entries } = read;
  if (planned instanceof PackageHashError) return { sha256, bytes, h1: planned };
  if ('failure' in entries)
    return {
      sha256,
      bytes,
      h1: hashFailure(filename, `entry ${entries.entry} cannot be read (${entries.failure})`),
    };
  try {
    return { sha256, bytes, h1: hash1FromEntries(filename, planned, entries.entries) };
  } catch (error) {
    if (error instanceof PackageHashError) return { sha256, bytes, h1: error };
    throw error;
  }
}

/** The PackageHashError for a read of planned entries that failed. */
export function entryFailure(filename: string, error: unknown): Error {
  if (error instanceof EntryReadError)
    return hashFailure(filename, `entry ${error.entry} cannot be read (${error.message})`, error);
  if (error instanceof FileReadError)
    return hashFailure(filename, `it cannot be read (${error.code})`, error);
  return error as Error;
}

function hashFailure(filename: string, problem: string, cause?: unknown): PackageHashError {
  return new PackageHashError(`${filename}: the h1: lock hash cannot be computed: ${problem}`, {
    hint: 'Rebuild the archive with goreleaser (archives: formats: [zip]) and regenerate SHA256SUMS.',
    details: { file: filename },
    cause,
  });
}
