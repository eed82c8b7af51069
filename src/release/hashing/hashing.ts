/**
 * SHA-256 of release files, streamed through one fixed buffer per file being read so memory stays flat whatever
 * the file sizes. A `HashingSession` is one command's hashing (one per `verify` or `publish`, closed at its end):
 * it keeps the chunk digests of the files it hashed. Everything runs on Node's own machinery: the files are read
 * a few at once (`FILES_AT_ONCE`), their SHA-256 taken on the main thread while the zips' deflated entries inflate
 * on Node's zlib thread pool, which keeps two cores busy without a thread of the program's own. A pool of
 * worker_threads hashing the files was at most a tenth faster on two cores and two thirds heavier in peak memory
 * (docs/performance.md, Measurements behind the code), and went.
 * A zip given with its entry plan (`ZipPlan`, from its central directory) has its entries' contents hashed in
 * the same read, for its `h1:` lock hash; with `storedEntriesLater` the stored entries are only checked there
 * (size, CRC-32) and `hashStoredEntries` hashes them in a second read, off the path to the first upload.
 * `readVerified` reads a file again after verification (to upload it) and proves it is still the same bytes, chunk
 * by chunk: by the SHA-256 of each 256 KiB chunk, taken in the same read as the file's
 * (src/release/hashing/verifiedRead.ts). The session is the uploads' `VerifiedFileSource`.
 */
import * as fs from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { InterruptedError } from '../../errors.js';
import { mapPool } from '../../pool.js';
import type { VerifiedChunks, VerifiedDigest, VerifiedFileSource } from '../../verifiedFiles.js';
import { digestFile, READ_CHUNK_BYTES, type ChunkedDigest, type FileDigest } from './digest.js';
import { storedEntryHashes, verifiedChunks, type ChunkDigests } from './verifiedRead.js';
import { streamedChunks, type StreamExpectation, type StreamResult } from './streamedRead.js';
import type { ZipPlan } from '../zipPlan.js';

export type { FileDigest } from './digest.js';
export { EntryReadError, FileReadError } from './digest.js';
export type { PlannedEntry, ZipPlan } from '../zipPlan.js';

/** What a hashing is given besides its files. */
export interface HashOptions {
  signal?: AbortSignal | undefined;
  /** Zips whose entries to hash in the same read, by path. */
  plans?: ReadonlyMap<string, ZipPlan>;
  /**
   * Check the planned stored entries' sizes and CRC-32s in the read, but leave the SHA-256 (for `h1:`) of those
   * of 64 KiB or more to `hashStoredEntries`, later: `publish` has it done while the files upload, off the
   * verification's path.
   */
  storedEntriesLater?: boolean;
  /**
   * Take each file's chunk digests, for `readVerified` to check an upload of it against, chunk by chunk (default
   * true; `verify`, which uploads nothing, spares itself that second SHA-256 of every byte). Without them a later
   * read is checked by the file's SHA-256 as a whole.
   */
  chunkDigests?: boolean;
  /**
   * Called once the first reads are under way: what the caller runs on the main thread next (loading a module,
   * which as CommonJS is one synchronous block) then runs while those reads and inflates proceed.
   */
  started?: () => void;
}

/**
 * How many files are read at once: one per core, so that while one file's bytes wait for the zlib thread pool
 * another's are hashed, and no more than that pool's four threads (libuv's default) can inflate at once.
 */
export const FILES_AT_ONCE = Math.min(availableParallelism(), 4);

/**
 * Hashes one file, streaming it through a 1 MiB buffer (and its planned entries), outside any session: no chunk
 * digests are taken, as nothing is read again through it (the lock hashes of a zip read once).
 */
export async function hashFile(path: string, plan?: ZipPlan, storedLater = false): Promise<FileDigest> {
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  return (await digestFile(path, plan, { storedLater, chunks: false }, buffer)).digest;
}

/** One command's hashing: the chunk digests of the files it hashed, and its read buffers. */
export class HashingSession implements VerifiedFileSource {
  /** The chunk digests of each file hashed in this session, with the file's digest, by path. */
  private readonly chunks = new Map<string, { sha256: string; bytes: number; chunks: string[] }>();
  /** The read buffers not in use. */
  private readonly readBuffers: Buffer[] = [];
  /** The zips left to their upload's read (`expectStreamed`), with what that read proved once it did. */
  private readonly streamed = new Map<string, { expect: StreamExpectation; proved?: StreamResult }>();

  /** Hashes every file, FILES_AT_ONCE at a time, the largest first; resolves to digests keyed by path. */
  async hashFiles(paths: string[], options: HashOptions = {}): Promise<Map<string, FileDigest>> {
    const { signal } = options;
    const mode = {
      storedLater: options.storedEntriesLater === true,
      chunks: options.chunkDigests !== false,
      signal,
    };
    if (signal?.aborted) throw new InterruptedError('Interrupted while hashing the release files');
    // Largest first, so one big file does not start last and leave the others' reads done long before. A file
    // that cannot be stat'ed fails in its read, with its path.
    const sized = async (path: string) => ({
      path,
      size: (await fs.stat(path).catch(() => undefined))?.size ?? 0,
    });
    const queue = (await Promise.all(paths.map(sized))).sort((a, b) => b.size - a.size);
    let starting = Math.min(FILES_AT_ONCE, queue.length);
    const read = ({ path }: { path: string }): Promise<FileDigest> =>
      this.withReadBuffer(async (buffer) => {
        const reading = digestFile(path, options.plans?.get(path), mode, buffer);
        if (--starting === 0) options.started?.();
        return this.keep(await reading);
      });
    if (queue.length === 0) options.started?.();
    const digests = await mapPool(queue, FILES_AT_ONCE, read);
    return new Map(digests.map((digest) => [digest.path, digest]));
  }

  /**
   * Leaves a zip's verification to the read that uploads it (`streamedChunks`): its first `readVerified`
   * hashes and inflates it as it goes, and holds its last chunk back until it is proven.
   */
  expectStreamed(path: string, expect: StreamExpectation): void {
    this.streamed.set(path, { expect });
  }

  /** What the upload's read of a streamed zip proved (its entries' content hashes); undefined before it did. */
  streamedResult(path: string): StreamResult | undefined {
    return this.streamed.get(path)?.proved;
  }

  /**
   * Reads a file for upload: a streamed zip not proven yet through the read that proves it (`streamedChunks`),
   * else proven to be the verified bytes as it streams (`verifiedChunks`: by its chunk digests, or its SHA-256).
   */
  readVerified(path: string, filename: string, expected: VerifiedDigest): VerifiedChunks {
    const streamed = this.streamed.get(path);
    const { expect } = streamed ?? {};
    const same = expect?.sha256 === expected.sha256 && expect.bytes === expected.bytes;
    // A remote zip has no copy to check a retry against: each attempt streams it and proves it anew.
    if (same && (streamed?.proved === undefined || expect.remote !== undefined))
      return streamedChunks(path, expect, (result) => (streamed!.proved = result));
    return verifiedChunks(path, filename, expected, this.digestsOf(path, expected));
  }

  /**
   * The SHA-256 of each stored entry of a zip the first read left for later (`storedEntryHashes`; `''` for the
   * others), read again on this thread and proven to be the verified bytes.
   */
  async hashStoredEntries(
    path: string,
    filename: string,
    plan: ZipPlan,
    expected: VerifiedDigest,
    signal?: AbortSignal,
  ): Promise<string[]> {
    const digests = this.digestsOf(path, expected);
    const file = { path, filename, plan, expected };
    return this.withReadBuffer((buffer) => storedEntryHashes(file, digests, buffer, signal));
  }

  /** Whether the zip at `path` is a remote one left to its upload's read. */
  isRemote(path: string): boolean {
    return this.streamed.get(path)?.expect.remote !== undefined;
  }

  /**
   * Proves now a zip left to its upload's read that no upload reads (the registry has it): reads it through
   * that same read, its chunks going nowhere. Used for remote zips; a file in the folder is hashed with the
   * others (`hashFiles`).
   */
  async proveStreamed(path: string, filename: string): Promise<StreamResult> {
    const { expect } = this.streamed.get(path)!;
    for await (const _ of this.readVerified(path, filename, expect)) void _;
    return this.streamedResult(path)!;
  }

  /** Forgets the chunk digests: the command is over. */
  close(): void {
    this.chunks.clear();
    this.streamed.clear();
  }

  /** The chunk digests taken when this file was hashed with these very expectations, else none (checked by SHA-256). */
  private digestsOf(path: string, expected: VerifiedDigest): ChunkDigests {
    const kept = this.chunks.get(path);
    return kept !== undefined && kept.sha256 === expected.sha256 && kept.bytes === expected.bytes
      ? kept.chunks
      : undefined;
  }

  /** Remembers a file's chunk digests, for `readVerified` to check the file against; hands on the digest. */
  private keep({ digest, chunks }: ChunkedDigest): FileDigest {
    if (chunks !== undefined)
      this.chunks.set(digest.path, { sha256: digest.sha256, bytes: digest.bytes, chunks });
    return digest;
  }

  /**
   * Runs `use` with a read buffer, taken back afterwards for the next file: one per file read at once rather
   * than one per file. A new buffer per file would be garbage once the file is read, which
   * V8 frees only when a collection runs; hashing allocates so little on the heap that none does for the whole
   * release (a 13 × 128 MiB release held 6 MB of them at the end of its hashing).
   */
  private async withReadBuffer<T>(use: (buffer: Buffer) => Promise<T>): Promise<T> {
    const buffer = this.readBuffers.pop() ?? Buffer.allocUnsafe(READ_CHUNK_BYTES);
    try {
      return await use(buffer);
    } finally {
      this.readBuffers.push(buffer);
    }
  }
}
