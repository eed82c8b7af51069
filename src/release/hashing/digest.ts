/**
 * One read of one file: every byte into the file's SHA-256 and, in a hashing session, into the SHA-256 of each of
 * its 256 KiB chunks, and the planned zip entries' data into their own hashes (src/release/hashing/entryContents.ts:
 * deflated data is inflated on Node's zlib thread pool meanwhile).
 *
 * The chunks' digests are what an upload checks each chunk it reads again against before handing it on
 * (`readVerified`, src/release/hashing/verifiedRead.ts): the bytes uploaded are the bytes verified, chunk by chunk.
 */
import { createHash, type Hash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { InterruptedError } from '../../errors.js';
import { EntryContents } from './entryContents.js';
import { entrySlices, type ZipPlan } from '../zipPlan.js';

/** A file's digest. */
export interface FileDigest {
  path: string;
  /** Lower-case hex. */
  sha256: string;
  bytes: number;
  /**
   * With a plan: each planned entry's content SHA-256 (lower-case hex), in the plan's order; `''` for a stored
   * entry left for later (`storedEntriesLater`: its size and CRC-32 are checked, its SHA-256 is
   * `hashStoredEntries`'s).
   */
  entries?: string[];
}

/** What a read of a file gives: its digest, and its chunks' digests when they were asked for. */
export interface ChunkedDigest {
  digest: FileDigest;
  chunks: string[] | undefined;
}

/** The read buffer's size: what `digestFile` reads at once. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** The size of the chunks whose SHA-256 a read takes, and that an upload reads and checks one at a time. */
export const CHUNK_BYTES = 256 * 1024;

/** How a file is read: whether stored entries wait, and whether the chunks' digests are taken (for uploads). */
export interface ReadMode {
  storedLater: boolean;
  chunks: boolean;
  signal?: AbortSignal | undefined;
}

/** The SHA-256 of each CHUNK_BYTES of a file, from its start, as its bytes are added in pieces of any size. */
export class ChunkHashes {
  /** Lower-case hex, one per chunk completed so far. */
  readonly digests: string[] = [];
  private hash: Hash = createHash('sha256');
  private filled = 0;

  add(data: Buffer): void {
    for (let at = 0; at < data.length;) {
      const take = Math.min(CHUNK_BYTES - this.filled, data.length - at);
      this.hash.update(data.subarray(at, at + take));
      at += take;
      this.filled += take;
      if (this.filled === CHUNK_BYTES) this.end();
    }
  }

  /** The file's last bytes are in: a chunk shorter than CHUNK_BYTES is complete. */
  end(): void {
    if (this.filled === 0) return;
    this.digests.push(this.hash.digest('hex'));
    this.hash = createHash('sha256');
    this.filled = 0;
  }
}

/**
 * Reads a file once, through `buffer` (which nothing else may use meanwhile): every byte into the file's SHA-256
 * (and, with `chunks`, its chunks' digests), and each planned entry's data into that entry's content hash. Throws
 * FileReadError for a file that cannot be read, EntryReadError for a planned entry whose content is wrong.
 */
export async function digestFile(
  path: string,
  plan: ZipPlan | undefined,
  { storedLater, chunks, signal }: ReadMode,
  buffer: Buffer,
): Promise<ChunkedDigest> {
  const contents = new EntryContents(plan ?? [], storedLater);
  const fileHash = createHash('sha256');
  const chunkHashes = chunks ? new ChunkHashes() : undefined;
  let bytes = 0;
  const cursor = { next: 0 };
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(path, 'r');
    for (;;) {
      if (signal?.aborted) throw new InterruptedError('Interrupted while hashing the release files');
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, bytes);
      if (bytesRead === 0) break;
      const data = buffer.subarray(0, bytesRead);
      fileHash.update(data);
      chunkHashes?.add(data);
      const from = bytes;
      bytes += bytesRead;
      for (const [index, slice] of entrySlices(plan ?? [], cursor, from, data))
        await contents.feed(index, slice);
    }
  } catch (error) {
    contents.abandon();
    if (error instanceof InterruptedError) throw error;
    const err = error as NodeJS.ErrnoException;
    throw new FileReadError(path, err.code ?? 'EIO', err.message, { cause: error });
  } finally {
    await handle?.close();
  }
  const entries = await contents.finish();
  if ('failure' in entries) throw new EntryReadError(path, entries.entry, entries.failure);
  const digest: FileDigest = { path, sha256: fileHash.digest('hex'), bytes };
  if (plan !== undefined) digest.entries = entries.entries;
  chunkHashes?.end();
  return { digest, chunks: chunkHashes?.digests };
}

/** A read failure of one file, with the file's path and the system error code. */
export class FileReadError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** An entry of a planned zip whose content cannot be read (bad deflate data, wrong size or CRC-32). */
export class EntryReadError extends Error {
  constructor(
    readonly path: string,
    readonly entry: string,
    message: string,
  ) {
    super(message);
  }
}
