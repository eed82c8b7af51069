/**
 * One read of one file: every byte into the file's SHA-256 and, in a hashing session, into the SHA-256 of each of
 * its 256 KiB chunks, and the planned zip entries' data into their own hashes (src/release/hashing/entryContents.ts).
 * Runs on the main thread and in the hashing workers (src/release/hashing/hashWorker.ts), and answers with a reply
 * rather than throwing, so that a worker can post it.
 *
 * The chunks' digests are what an upload checks each chunk it reads again against before handing it on
 * (`readVerified`, src/release/hashing/verifiedRead.ts): the bytes uploaded are the bytes verified, chunk by chunk.
 */
import { createHash, type Hash } from 'node:crypto';
import * as fs from 'node:fs';
import { EntryContents } from './entryContents.ts';
import { entrySlices, type ZipPlan } from '../zipPlan.ts';

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

/** What a read of a file answers: its digest and its chunks' digests, or why it could not be read. */
export type DigestReply =
  | { ok: true; digest: FileDigest; chunks: string[] | undefined }
  | { ok: false; path: string; code: string; message: string; entry?: string };

/** What `digestFile` reads at once. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** The size of the chunks whose SHA-256 a read takes, and that an upload reads and checks one at a time. */
export const CHUNK_BYTES = 256 * 1024;

/**
 * How a file is read: blocking (a worker: faster, nothing else runs there), whether stored entries wait, and
 * whether the chunks' digests are taken (for a session's uploads).
 */
export interface ReadMode {
  blocking: boolean;
  storedLater: boolean;
  chunks: boolean;
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
 * Reads a file once, in chunks of `chunk`'s size (which it reads into; nothing else may use it meanwhile): every
 * byte into the file's SHA-256 (and, with `chunks`, its chunks' digests), and each planned entry's data into that
 * entry's content hash.
 */
export async function digestFile(
  path: string,
  plan: ZipPlan | undefined,
  { blocking, storedLater, chunks }: ReadMode,
  chunk: Buffer,
): Promise<DigestReply> {
  const contents = new EntryContents(plan ?? [], storedLater);
  const fileHash = createHash('sha256');
  const chunkHashes = chunks ? new ChunkHashes() : undefined;
  let bytes = 0;
  const cursor = { next: 0 };
  // The main thread must not stall its event loop.
  const read = (fd: number): number | Promise<number> =>
    blocking
      ? fs.readSync(fd, chunk, 0, chunk.length, null)
      : new Promise((resolve, reject) =>
          fs.read(fd, chunk, 0, chunk.length, null, (error, n) => (error ? reject(error) : resolve(n))),
        );
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'r');
    for (;;) {
      const bytesRead = await read(fd);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      fileHash.update(data);
      chunkHashes?.add(data);
      const from = bytes;
      bytes += bytesRead;
      for (const [index, slice] of entrySlices(plan ?? [], cursor, from, data))
        await contents.feed(index, slice);
    }
  } catch (error) {
    const err = error as NodeJS.ErrnoException;
    contents.abandon();
    return { ok: false, path, code: err.code ?? 'EIO', message: err.message };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  const entries = await contents.finish();
  if ('failure' in entries)
    return { ok: false, path, code: 'EZIP', message: entries.failure, entry: entries.entry };
  const digest: FileDigest = { path, sha256: fileHash.digest('hex'), bytes };
  if (plan !== undefined) digest.entries = entries.entries;
  chunkHashes?.end();
  return { ok: true, digest, chunks: chunkHashes?.digests };
}

/**
 * A read failure of one file, with the file's path and the system error code. (Fields set in the constructor's
 * body: a worker runs this module with its types stripped, which leaves no parameter properties.)
 */
export class FileReadError extends Error {
  readonly path: string;
  readonly code: string;

  constructor(path: string, code: string, message: string) {
    super(message);
    this.path = path;
    this.code = code;
  }
}

/** An entry of a planned zip whose content cannot be read (bad deflate data, wrong size or CRC-32). */
export class EntryReadError extends Error {
  readonly path: string;
  readonly entry: string;

  constructor(path: string, entry: string, message: string) {
    super(message);
    this.path = path;
    this.entry = entry;
  }
}

/** The error a failed read answered with. */
export function replyError(reply: Extract<DigestReply, { ok: false }>): Error {
  return reply.entry === undefined
    ? new FileReadError(reply.path, reply.code, reply.message)
    : new EntryReadError(reply.path, reply.entry, reply.message);
}
