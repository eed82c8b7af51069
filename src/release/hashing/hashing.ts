/**
 * SHA-256 of release files, streamed through one fixed buffer per reader so memory stays flat whatever the
 * file sizes, and spread over the machine's cores. A `HashingSession` is one command's hashing (one per
 * `verify` or `publish`, closed at its end): it owns the hashing workers and the seals of the files it hashed.
 * The main thread and a worker_threads pool of one worker per other core take files from one queue
 * (src/release/hashing/hashPool.ts). Small releases are hashed on the main thread alone: starting workers costs more
 * than it saves below a few tens of megabytes (docs/performance.md). The main thread takes its share because it
 * mostly waits while the files are hashed: when it is busy (loading modules, checking the signature), the
 * workers simply take more of the files.
 * A zip given with its entry plan (`ZipPlan`, from its central directory) has its entries' contents hashed in
 * the same read, for its `h1:` lock hash; with `storedEntriesLater` the stored entries are only checked there
 * (size, CRC-32) and `hashStoredEntries` hashes them in a second read, off the path to the first upload.
 * `readVerified` reads a file again after verification (to upload it) and proves it is still the same bytes, chunk
 * by chunk: by the SHA-256 of each 256 KiB chunk, taken in the same read as the file's
 * (src/release/hashing/verifiedRead.ts). The session is the uploads' `VerifiedFileSource`.
 */
import * as fs from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { InterruptedError } from '../../errors.js';
import type { VerifiedChunks, VerifiedDigest, VerifiedFileSource } from '../../verifiedFiles.js';
import { digestFile, READ_CHUNK_BYTES, replyError, type FileDigest } from './digest.js';
import { runPool, stopWorker, type ChunkedDigest } from './hashPool.js';
import { startHashWorker } from './hashWorkerStart.js';
import { storedEntryHashes, verifiedChunks, type ChunkDigests } from './verifiedRead.js';
import type { ZipPlan } from '../zipPlan.js';

export type { FileDigest } from './digest.js';
export { EntryReadError, FileReadError } from './digest.js';
export type { PlannedEntry, ZipPlan } from '../zipPlan.js';

/** Tuning knobs; the defaults suit the CLI. */
export interface HashOptions {
  /** Most threads hashing at once, the main thread included (default `os.availableParallelism()`). */
  parallelism?: number;
  /** Hash on the main thread when all files together are smaller than this (default 48 MiB). */
  inlineBelowBytes?: number;
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
   * Called once every thread has its files (the workers their queue, the main thread its first read): what the
   * caller runs on the main thread next (loading a module, which as CommonJS is one synchronous block) then runs
   * beside the hashing instead of holding back the workers' first files.
   */
  started?: () => void;
}

/** Measured on 2 cores (bench/): 4 × 8 MiB inline 30 ms vs pool 40 ms; 4 × 16 MiB 49 vs 51 ms; 4 × 256 MiB 0.72 vs 0.37 s. */
export const DEFAULT_INLINE_BELOW_BYTES = 48 * 1024 * 1024;

/** The files' sizes, and how many threads hash them (1: the main thread alone). */
async function sizeUp(paths: string[], options: HashOptions) {
  const sized = await Promise.all(
    paths.map(async (path) => ({ path, size: (await fs.stat(path).catch(() => undefined))?.size ?? 0 })),
  );
  const total = sized.reduce((sum, f) => sum + f.size, 0);
  const threads = Math.min(options.parallelism ?? availableParallelism(), paths.length);
  const inline = threads <= 1 || total < (options.inlineBelowBytes ?? DEFAULT_INLINE_BELOW_BYTES);
  return { sized, threads: inline ? 1 : threads };
}

/**
 * Hashes one file on the current thread, streaming it through a 1 MiB buffer (and its planned entries), outside
 * any session: no chunk digests are taken, as nothing is read again through it (the lock hashes of a zip read
 * once).
 */
export async function hashFile(path: string, plan?: ZipPlan, storedLater = false): Promise<FileDigest> {
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  const reply = await digestFile(path, plan, { blocking: false, storedLater, chunks: false }, buffer);
  if (!reply.ok) throw replyError(reply);
  return reply.digest;
}

/** One command's hashing: its workers and the chunk digests of the files it hashed. */
export class HashingSession implements VerifiedFileSource {
  /** The chunk digests of each file hashed in this session, with the file's digest, by path. */
  private readonly chunks = new Map<string, { sha256: string; bytes: number; chunks: string[] }>();
  /**
   * Workers started ahead of their files (`startWorkers`), waiting for the first one. Unreferenced while they
   * wait: one left unused (the release failed a check before hashing) never keeps the process alive.
   */
  private readonly ready: Worker[] = [];
  /** Set by `close`: a warm-up still under way starts no worker after it. */
  private closed = false;
  /** The main thread's read buffers not in use. */
  private readonly readBuffers: Buffer[] = [];

  /** How many started workers wait for their files (for tests). */
  waitingWorkers(): number {
    return this.ready.length;
  }

  /**
   * Starts the workers `hashFiles` will want for these files, now: a worker takes some 25 ms to start, which
   * then passes while the caller reads the release's small files and plans its zips. Starts none when the files
   * would be hashed on the main thread. Never fails (`hashFiles` starts what is missing).
   */
  async startWorkers(paths: string[], options: HashOptions = {}): Promise<void> {
    const { threads } = await sizeUp(paths, options).catch(() => ({ threads: 1 }));
    // Closed meanwhile (a command that ended before its warm-up did): nothing to start for.
    while (!this.closed && this.ready.length < threads - 1) {
      const worker = startHashWorker();
      // Until `runPool` takes it: a failure to start is its error then (an 'error' without a listener would throw).
      const early = (): void => {
        const at = this.ready.indexOf(worker);
        if (at >= 0) this.ready.splice(at, 1);
      };
      worker.once('error', early).once('exit', early);
      worker.unref();
      this.ready.push(worker);
    }
  }

  /**
   * Starts the hashing workers for the release in `dir` (its `.zip` files) before anything else is known about
   * it: `verify` and `publish` call it as soon as they start, so that a worker's start-up (25–60 ms, on another
   * core) passes while the command's own modules load, instead of after. Never fails; does nothing for a folder
   * that cannot be read or whose zips are small enough to hash on the main thread.
   */
  async warm(dir: string, options: HashOptions = {}): Promise<void> {
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    const zips = names.filter((name) => name.endsWith('.zip')).map((name) => join(dir, name));
    if (zips.length > 0) await this.startWorkers(zips, options);
  }

  /** Hashes every file, in parallel when it pays; resolves to digests keyed by path. */
  async hashFiles(paths: string[], options: HashOptions = {}): Promise<Map<string, FileDigest>> {
    const { sized, threads } = await sizeUp(paths, options);
    const results = new Map<string, FileDigest>();
    if (threads <= 1) {
      // Workers started for a larger release are not needed.
      for (const worker of this.ready.splice(0)) stopWorker(worker);
      options.started?.();
      for (const { path } of sized) {
        if (options.signal?.aborted)
          throw new InterruptedError('Interrupted while hashing the release files');
        const mode = { blocking: false, storedLater: options.storedEntriesLater === true, chunks: true };
        const plan = options.plans?.get(path);
        const reply = await this.withReadBuffer((buffer) => digestFile(path, plan, mode, buffer));
        if (!reply.ok) throw replyError(reply);
        results.set(path, this.keep(reply));
      }
      return results;
    }
    // Largest first, so one big file does not start last and leave the other cores idle.
    const queue = sized.sort((a, b) => b.size - a.size).map((f) => f.path);
    const workers = Array.from({ length: threads - 1 }, () => this.ready.shift() ?? startHashWorker());
    const replies = await runPool(queue, workers, {
      ...options,
      storedLater: options.storedEntriesLater === true,
      withReadBuffer: (use) => this.withReadBuffer(use),
    });
    for (const reply of replies) results.set(reply.digest.path, this.keep(reply));
    return results;
  }

  /** Reads a file this session verified, proven to be the verified bytes (`verifiedChunks`). */
  readVerified(path: string, filename: string, expected: VerifiedDigest): VerifiedChunks {
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

  /** Stops the workers still waiting and forgets the chunk digests: the command is over. */
  close(): void {
    this.closed = true;
    for (const worker of this.ready.splice(0)) stopWorker(worker);
    this.chunks.clear();
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
   * Runs `use` with a read buffer of the main thread's, taken back afterwards for the next file: one per file
   * read at once rather than one per file. A new buffer per file would be garbage once the file is read, which
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
