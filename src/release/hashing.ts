/**
 * SHA-256 of release files, streamed through one fixed buffer per reader so memory stays flat whatever the
 * file sizes, and spread over the machine's cores: the main thread and a worker_threads pool of one worker per
 * other core take files from one queue. Small releases are hashed on the main thread alone: starting workers
 * costs more than it saves below a few tens of megabytes (docs/performance.md). The main thread takes its share
 * because it mostly waits while the files are hashed: when it is busy (loading modules, checking the signature),
 * the workers simply take more of the files.
 * A zip given with its entry plan (`ZipPlan`, from its central directory) has its entries' contents hashed in
 * the same read (stored data hashed as it passes, deflated data through zlib), for its `h1:` lock hash; with
 * `storedEntriesLater` the stored entries are only checked there (size, CRC-32) and `hashStoredEntries` hashes
 * them in a second read, off the path to the first upload.
 * `readVerified` reads a file again after verification (to upload it) and proves it is still the same bytes.
 *
 * That proof is a seal made in the same read as the SHA-256: a GMAC (AES-128-GCM's tag over the bytes as
 * additional data, no plaintext) under a key drawn at random when this module loads and never stored, shown or
 * sent, with a fresh nonce per file. Without the key nobody can make other bytes with the same tag (a forgery
 * succeeds with a chance below 2^-100 for any release size), so checking it proves the bytes sent are the
 * verified ones as well as a second SHA-256 would, at a fraction of the cost (GHASH runs on the carry-less
 * multiply instructions). A file read without a seal (hashed by another process, or handed over with other
 * expectations) is checked with its SHA-256.
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { InterruptedError, VerificationError } from '../errors.js';

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

/** A GMAC of a file's bytes under this process's sealing key: the nonce (12 bytes) and the tag (16), hex. */
interface Seal {
  nonce: string;
  tag: string;
}

/** The sealing key: random, this process's only, never stored or shown. */
const SEAL_KEY = randomBytes(16);
/** The seal of each file hashed in this process, with the digest it was made with, by path. */
const seals = new Map<string, { sha256: string; bytes: number; seal: Seal }>();

/** Remembers a file's seal, for `readVerified` to check the file against; hands on the digest. */
function keepSeal({ digest, seal }: { digest: FileDigest; seal: Seal }): FileDigest {
  seals.set(digest.path, { sha256: digest.sha256, bytes: digest.bytes, seal });
  return digest;
}

/** One zip entry's data, as the central directory and the entry's local header place it. */
export interface PlannedEntry {
  /** Where its (compressed) data starts in the file. */
  start: number;
  compressedSize: number;
  uncompressedSize: number;
  /** 0 stored, 8 deflate. */
  method: number;
  crc32: number;
  /** Sizes and CRC-32 also follow the data (flag bit 3): the directory's CRC-32 is then checked even when 0. */
  dataDescriptor: boolean;
  /** Named in errors. */
  name: string;
}

/** The entries of a zip to hash in the same read, sorted by `start`, their data not overlapping. */
export type ZipPlan = PlannedEntry[];

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

/** A read failure of one file, with the file's path and the system error code. */
export class FileReadError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a file hashed to when it was verified. */
export interface VerifiedDigest {
  /** Lower-case hex. */
  sha256: string;
  bytes: number;
}

/** A release file is no longer the bytes that were verified (rewritten, shrunk, grown, gone). Exit 3. */
export class FileChangedError extends VerificationError {}

/** What `readVerified` reads at once: a few per upload in memory, so small enough to keep memory flat. */
const STREAM_CHUNK_BYTES = 256 * 1024;
/** Measured on 2 cores (bench/): 4 × 8 MiB inline 30 ms vs pool 40 ms; 4 × 16 MiB 49 vs 51 ms; 4 × 256 MiB 0.72 vs 0.37 s. */
export const DEFAULT_INLINE_BELOW_BYTES = 48 * 1024 * 1024;

/**
 * Workers started ahead of their files (`startHashWorkers`), waiting for the first one. Unreferenced while they
 * wait: one left unused (the release failed a check before hashing) never keeps the process alive, and the next
 * `hashFiles` takes it.
 */
const ready: Worker[] = [];

/** How many started workers wait for their files (for tests). */
export function waitingWorkers(): number {
  return ready.length;
}

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
 * Starts the workers `hashFiles` will want for these files, now: a worker takes some 25 ms to start, which
 * then passes while the caller reads the release's small files and plans its zips. Starts none when the files
 * would be hashed on the main thread. Never fails (`hashFiles` starts what is missing).
 */
export async function startHashWorkers(paths: string[], options: HashOptions = {}): Promise<void> {
  const { threads } = await sizeUp(paths, options).catch(() => ({ threads: 1 }));
  while (ready.length < threads - 1) {
    const worker = newWorker();
    // Until `runPool` takes it: a failure to start is its error then (an 'error' without a listener would throw).
    const early = (): void => {
      const at = ready.indexOf(worker);
      if (at >= 0) ready.splice(at, 1);
    };
    worker.once('error', early).once('exit', early);
    worker.unref();
    ready.push(worker);
  }
}

/**
 * Starts the hashing workers for the release in `dir` (its `.zip` files) before anything else is known about it:
 * called by `verify` and `publish` as soon as they start, so that a worker's start-up (25–60 ms, on another
 * core) passes while the command's own modules load, instead of after. Never fails; does nothing for a folder
 * that cannot be read or whose zips are small enough to hash on the main thread (`verifyRelease` then
 * reports what is wrong, or hashes inline).
 */
export async function warmHashWorkers(dir: string, options: HashOptions = {}): Promise<void> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const zips = names.filter((name) => name.endsWith('.zip')).map((name) => join(dir, name));
  if (zips.length > 0) await startHashWorkers(zips, options);
}

/** Hashes every file, in parallel when it pays; resolves to digests keyed by path. */
export async function hashFiles(
  paths: string[],
  options: HashOptions = {},
): Promise<Map<string, FileDigest>> {
  const { sized, threads } = await sizeUp(paths, options);
  const results = new Map<string, FileDigest>();
  if (threads <= 1) {
    // Workers started for a larger release are not needed.
    for (const worker of ready.splice(0)) stopWorker(worker);
    options.started?.();
    for (const { path } of sized) {
      if (options.signal?.aborted) throw new InterruptedError('Interrupted while hashing the release files');
      results.set(path, await hashFile(path, options.plans?.get(path), options.storedEntriesLater));
    }
    return results;
  }
  // Largest first, so one big file does not start last and leave the other cores idle.
  const queue = sized.sort((a, b) => b.size - a.size).map((f) => f.path);
  const pool = runPool(queue, threads - 1, options);
  for (const sealed of await pool) {
    const digest = keepSeal(sealed);
    results.set(digest.path, digest);
  }
  return results;
}

/** Hashes one file on the current thread, streaming it through a 1 MiB buffer (and its planned entries). */
export async function hashFile(path: string, plan?: ZipPlan, storedLater = false): Promise<FileDigest> {
  const reply = await withReadBuffer((buffer) =>
    digestFile(path, plan, { blocking: false, storedLater }, sealing(), buffer),
  );
  if (!reply.ok) throw replyError(reply);
  return keepSeal(reply);
}

/** What `digestFile` reads at once. */
const READ_CHUNK_BYTES = 1024 * 1024;
/** The main thread's read buffers not in use. */
const readBuffers: Buffer[] = [];

/**
 * Runs `use` with a read buffer of this thread's, taken back afterwards for the next file: one per file read at
 * once rather than one per file. A new buffer per file would be garbage once the file is read, which V8 frees
 * only when a collection runs; hashing allocates so little on the heap that none does for the whole release
 * (a 13 × 128 MiB release held 6 MB of them at the end of its hashing).
 */
async function withReadBuffer<T>(use: (buffer: Buffer) => Promise<T>): Promise<T> {
  const buffer = readBuffers.pop() ?? Buffer.allocUnsafe(READ_CHUNK_BYTES);
  try {
    return await use(buffer);
  } finally {
    readBuffers.push(buffer);
  }
}

/** What a reader needs to seal one file: the key and a fresh nonce. */
interface Sealing {
  key: Uint8Array;
  nonce: Uint8Array;
}

function sealing(): Sealing {
  return { key: SEAL_KEY, nonce: randomBytes(12) };
}

type WorkerReply =
  | { ok: true; digest: FileDigest; seal: Seal }
  | { ok: false; path: string; code: string; message: string; entry?: string };

function replyError(reply: Extract<WorkerReply, { ok: false }>): Error {
  return reply.entry === undefined
    ? new FileReadError(reply.path, reply.code, reply.message)
    : new EntryReadError(reply.path, reply.entry, reply.message);
}

/**
 * Whether an entry's SHA-256 is left to `hashStoredEntries` when stored entries are hashed later: stored entries
 * of 64 KiB or more; a small one (a LICENSE, a folder) is not worth a second read of its whole zip, and is hashed
 * in the first. Part of the workers' program (with `digestFile`): it must not use anything from outside.
 */
function hashedLater(entry: PlannedEntry): boolean {
  return entry.method === 0 && entry.uncompressedSize >= 64 * 1024;
}

/**
 * The parts of `data` (the file's bytes from offset `from`) that are planned entries' data, each with its entry's
 * index in the plan. The plan's entries are sorted by start and do not overlap, so the entries that ended before
 * this chunk are passed for good: `cursor.next`, the first entry not passed yet, carries over to the next chunk.
 * Part of the workers' program (with `digestFile`): it must not use anything from outside.
 */
function entrySlices(
  plan: ZipPlan,
  cursor: { next: number },
  from: number,
  data: Buffer,
): [number, Buffer][] {
  const slices: [number, Buffer][] = [];
  const to = from + data.length;
  while (cursor.next < plan.length) {
    const { start, compressedSize } = plan[cursor.next]!;
    const end = start + compressedSize;
    if (start >= to) break;
    const a = Math.max(start, from);
    const b = Math.min(end, to);
    if (b > a) slices.push([cursor.next, data.subarray(a - from, b - from)]);
    if (end > to) break;
    cursor.next++;
  }
  return slices;
}

/**
 * Reads a file once, in chunks of `chunk`'s size (which it reads into; nothing else may use it meanwhile): every byte into the file's SHA-256 and its seal (`sealWith`: the key and
 * this file's nonce, handed over), and the bytes of each planned entry's data into that entry's SHA-256 (stored)
 * or through an inflater into it (deflate), checking each entry's size and CRC-32 as Go's archive/zip does (the
 * CRC costs a tenth of the hashing). Runs on the main thread and in the workers, which get it serialised with
 * `toString()`: it must not use anything from outside but `entrySlices` and `hashedLater` (in `WORKER_SOURCE` too), and answers with a reply rather than throwing.
 */
async function digestFile(
  path: string,
  plan: ZipPlan | undefined,
  { blocking, storedLater }: { blocking: boolean; storedLater: boolean },
  sealWith: Sealing,
  chunk: Buffer,
): Promise<WorkerReply> {
  const fs = process.getBuiltinModule('node:fs');
  const { createHash: newHash, createCipheriv: newCipher } = process.getBuiltinModule('node:crypto');
  const zlib = process.getBuiltinModule('node:zlib');
  type Hash = ReturnType<typeof newHash>;
  interface Flow {
    entry: PlannedEntry;
    /** None for a stored entry whose SHA-256 is left for later. */
    hash: Hash | undefined;
    crc: number;
    size: number;
    inflater?: ReturnType<typeof zlib.createInflateRaw>;
    ended?: Promise<void>;
    failure?: string;
  }
  const flows: Flow[] = (plan ?? []).map((entry) => ({
    entry,
    hash: storedLater && hashedLater(entry) ? undefined : newHash('sha256'),
    crc: 0,
    size: 0,
  }));
  const take = (flow: Flow, data: Buffer): void => {
    flow.hash?.update(data);
    flow.crc = zlib.crc32(data, flow.crc);
    flow.size += data.length;
    if (flow.size > flow.entry.uncompressedSize && flow.failure === undefined) {
      flow.failure = `its content is longer than the ${flow.entry.uncompressedSize} bytes the directory says`;
      flow.inflater?.destroy();
    }
  };
  const startInflater = (flow: Flow): void => {
    const inflater = zlib.createInflateRaw({ chunkSize: 1024 * 1024 });
    flow.inflater = inflater;
    inflater.on('data', (data: Buffer) => take(flow, data));
    flow.ended = new Promise((resolve) => {
      inflater.on('end', resolve);
      inflater.on('close', resolve);
      inflater.on('error', (error: Error) => {
        flow.failure ??= `its deflate data is damaged (${error.message})`;
        resolve();
      });
    });
  };
  const feed = async (flow: Flow, data: Buffer): Promise<void> => {
    if (flow.entry.method === 0) return take(flow, data);
    if (flow.inflater === undefined) startInflater(flow);
    const inflater = flow.inflater!;
    if (flow.failure !== undefined || inflater.destroyed) return;
    // The read buffer is read into again once this returns: it waits until the inflater has taken the chunk in
    // (the write's callback), rather than handing it a copy, garbage once inflated. 'close' ends the wait too
    // (the inflater failed or was stopped); the listener goes once either fires, or listeners would pile up.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        inflater.off('close', done);
        resolve();
      };
      inflater.on('close', done);
      inflater.write(data, done);
    });
  };
  const fileHash = newHash('sha256');
  // The seal: GCM's tag over the bytes given as additional data (GHASH only, no encryption).
  const sealer = newCipher('aes-128-gcm', sealWith.key, sealWith.nonce);
  let bytes = 0;
  const cursor = { next: 0 };
  // A worker reads blocking (faster; nothing else runs there); the main thread must not stall its event loop.
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
      sealer.setAAD(data);
      const from = bytes;
      bytes += bytesRead;
      for (const [index, slice] of entrySlices(plan ?? [], cursor, from, data))
        await feed(flows[index]!, slice);
    }
  } catch (error) {
    const err = error as NodeJS.ErrnoException;
    for (const flow of flows) flow.inflater?.destroy();
    return { ok: false, path, code: err.code ?? 'EIO', message: err.message };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  const entries: string[] = [];
  for (const flow of flows) {
    // A deflate entry with no data at all is no deflate stream: Go's flate reader fails, and so does zlib here.
    if (flow.entry.method === 8 && flow.inflater === undefined && flow.failure === undefined)
      startInflater(flow);
    if (flow.inflater !== undefined) {
      flow.inflater.end();
      await flow.ended;
    }
    const { entry } = flow;
    if (flow.failure === undefined && flow.size !== entry.uncompressedSize)
      flow.failure = `its content is ${flow.size} bytes, not the ${entry.uncompressedSize} the directory says`;
    // As Go's archive/zip: a CRC-32 of 0 in the directory means "not set" unless a data descriptor follows.
    const crcSet = entry.crc32 !== 0 || entry.dataDescriptor;
    if (flow.failure === undefined && crcSet && flow.crc >>> 0 !== entry.crc32 >>> 0)
      flow.failure = 'its content does not match its CRC-32';
    if (flow.failure !== undefined)
      return { ok: false, path, code: 'EZIP', message: flow.failure, entry: entry.name };
    entries.push(flow.hash?.digest('hex') ?? '');
  }
  sealer.final();
  const seal = {
    nonce: Buffer.from(sealWith.nonce).toString('hex'),
    tag: sealer.getAuthTag().toString('hex'),
  };
  const digest: FileDigest = { path, sha256: fileHash.digest('hex'), bytes };
  if (plan !== undefined) digest.entries = entries;
  return { ok: true, digest, seal };
}

/** One file of a pool's queue, as every thread gets it: the path, the zip's plan, the seal's key and nonce. */
interface Job {
  path: string;
  plan?: ZipPlan | undefined;
  storedLater: boolean;
  seal: Sealing;
}

/** A worker's reply for the job at `index` of the queue. */
interface PoolReply {
  index: number;
  reply: WorkerReply;
}

/**
 * The worker's whole program. It is serialised with `toString()`, so it must not use anything from outside but
 * `READ_CHUNK_BYTES`, which `WORKER_SOURCE` declares before it. It gets the whole queue at once and a shared
 * counter: it claims the next job itself (one atomic add) as soon as it finishes one, so it never waits for the
 * main thread, which may be busy loading modules meanwhile. One read buffer serves all its files.
 */
function workerMain(): void {
  const { parentPort } = process.getBuiltinModule('node:worker_threads');
  parentPort?.on('message', ({ jobs, claim }: { jobs: Job[]; claim: SharedArrayBuffer }) => {
    const next = new Int32Array(claim);
    const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    void (async () => {
      for (let index = Atomics.add(next, 0, 1); index < jobs.length; index = Atomics.add(next, 0, 1)) {
        const job = jobs[index]!;
        const options = { blocking: true, storedLater: job.storedLater };
        const reply = await digestFile(job.path, job.plan, options, job.seal, chunk);
        parentPort.postMessage({ index, reply });
      }
    })();
  });
}

/** A hashing worker, running the source below. */
function newWorker(): Worker {
  return new Worker(WORKER_SOURCE, { eval: true });
}

/** Ends a worker; its end needs no waiting. */
function stopWorker(worker: Worker): void {
  void worker.terminate();
}

// `entrySlices` and `hashedLater` by the names they have where `digestFile` calls them (a bundler may rename them).
const WORKER_SOURCE = `const READ_CHUNK_BYTES = ${READ_CHUNK_BYTES};\n${entrySlices.toString()}\n${hashedLater.toString()}\nconst digestFile = ${digestFile.toString()};\n(${workerMain.toString()})();`;

/**
 * Runs the queue through `size` workers and the main thread. Every thread claims the next file from one shared
 * counter when it finishes one, so a worker goes on while the main thread's event loop is busy with something
 * else (loading the modules the next steps need), and the last files go to whichever thread is free first.
 * The main thread reads without blocking, so its event loop keeps serving the rest of the program meanwhile.
 */
function runPool(
  queue: string[],
  size: number,
  { signal, plans, storedEntriesLater, started }: HashOptions,
): Promise<{ digest: FileDigest; seal: Seal }[]> {
  return new Promise((resolve, reject) => {
    const digests: { digest: FileDigest; seal: Seal }[] = [];
    const workers: Worker[] = [];
    const storedLater = storedEntriesLater === true;
    const jobs: Job[] = queue.map((path) => ({ path, plan: plans?.get(path), storedLater, seal: sealing() }));
    const claim = new SharedArrayBuffer(4);
    const next = new Int32Array(claim);
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      // No thread starts another file.
      Atomics.store(next, 0, jobs.length);
      signal?.removeEventListener('abort', onAbort);
      for (const worker of workers) stopWorker(worker);
      if (error) reject(error);
      else resolve(digests);
    };
    const done = (reply: WorkerReply): void => {
      if (settled) return;
      if (!reply.ok) return finish(replyError(reply));
      digests.push(reply);
      if (digests.length === jobs.length) finish();
    };
    const onAbort = (): void => finish(new InterruptedError('Interrupted while hashing the release files'));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) return onAbort();
    const mainThread = async (): Promise<void> => {
      for (let index = Atomics.add(next, 0, 1); index < jobs.length; index = Atomics.add(next, 0, 1)) {
        const job = jobs[index]!;
        const options = { blocking: false, storedLater: job.storedLater };
        done(await withReadBuffer((buffer) => digestFile(job.path, job.plan, options, job.seal, buffer)));
      }
    };
    for (let i = 0; i < size; i++) {
      const worker = ready.shift() ?? newWorker();
      // Its early 'error'/'exit' listeners go.
      worker.removeAllListeners('error').removeAllListeners('exit').ref();
      workers.push(worker);
      worker.on('message', ({ reply }: PoolReply) => done(reply));
      worker.on('error', (error) => finish(error));
      worker.on('exit', (code) => finish(new Error(`a hashing worker stopped early (exit code ${code})`)));
      worker.postMessage({ jobs, claim });
    }
    // After the workers got the queue: they start while the main thread reads its own files.
    void mainThread().catch((error: unknown) => finish(error as Error));
    started?.();
  });
}

/**
 * Reads a verified file chunk by chunk, checking exactly the bytes it hands on (by the seal made when this process hashed
 * it, else by its SHA-256), and fails instead of handing on bytes other than the verified ones: the chunk that
 * completes the verified size is held back until the file is read to its end (one byte past that size) and its
 * seal (or hash) matches; the chunks before it, short of a complete body, go on as they are read. A consumer (an
 * upload of that many bytes) therefore never receives a complete body that differs from what was verified; it
 * receives an error (`FileChangedError`) and must abort. A file that grows is caught one byte past its verified
 * size, one that shrinks at its new end, one that cannot be read any more at once. Memory: the chunk being
 * sent and the one held back, 256 KiB each, whatever the file size (an upload asks for the next chunk once the
 * last is written: got sends an async iterable body so, where a stream would read ahead).
 *
 * The consumer may hand the chunks' buffers back (`sent(bytes)`: the first `bytes` of the file are written and
 * no longer referenced, as an HTTP request's write callbacks say) and they are read into again. Without that, each
 * chunk is a new buffer, and a fast upload leaves its chunks as garbage until V8's external-memory trigger
 * (64 MB more than after the last full collection) runs a collection: tens of MB of peak RSS for nothing.
 */
export function readVerified(path: string, filename: string, expected: VerifiedDigest): VerifiedChunks {
  const recycling = new Recycler();
  const chunks = verifiedChunks(path, filename, expected, recycling);
  return { [Symbol.asyncIterator]: () => chunks, sent: (bytes: number) => recycling.sent(bytes) };
}

/**
 * A verified file's chunks, each read when the consumer asks for it (no stream reading ahead), and the way to
 * hand back the buffers of bytes already sent.
 */
export interface VerifiedChunks extends AsyncIterable<Buffer> {
  /** The first `bytes` bytes are sent: their buffers are not referenced any more and may be read into again. */
  sent(bytes: number): void;
}

/** The chunks handed on and not yet sent, in order, and the buffers free to read into. */
class Recycler {
  private readonly out: { end: number; buffer: Buffer }[] = [];
  private readonly free: Buffer[] = [];

  /** A buffer of STREAM_CHUNK_BYTES: a free one, else a new one. */
  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafe(STREAM_CHUNK_BYTES);
  }

  /** The chunk read into `buffer`, ending at byte `end` of the file, is being handed on. */
  handedOn(buffer: Buffer, end: number): void {
    this.out.push({ end, buffer });
  }

  sent(bytes: number): void {
    while (this.out.length > 0 && this.out[0]!.end <= bytes) this.free.push(this.out.shift()!.buffer);
  }
}

async function* verifiedChunks(
  path: string,
  filename: string,
  expected: VerifiedDigest,
  recycling: Recycler,
): AsyncGenerator<Buffer> {
  // The seal made when this file was hashed with these very expectations, else its SHA-256.
  const kept = seals.get(path);
  const sealed =
    kept !== undefined && kept.sha256 === expected.sha256 && kept.bytes === expected.bytes
      ? kept.seal
      : undefined;
  const hash = sealed === undefined ? createHash('sha256') : undefined;
  const gmac =
    sealed === undefined
      ? undefined
      : createCipheriv('aes-128-gcm', SEAL_KEY, Buffer.from(sealed.nonce, 'hex'));
  const unreadable = (error: unknown): FileChangedError =>
    changed(
      filename,
      `it cannot be read any more (${(error as NodeJS.ErrnoException).code ?? 'EIO'})`,
      error,
    );
  const handle = await fs.open(path, 'r').catch((error: unknown) => {
    throw unreadable(error);
  });
  try {
    // The chunk that completes the verified size, held back until the file is checked.
    let last: Buffer | undefined;
    let bytes = 0;
    for (;;) {
      // One byte past the verified size at most: a file that grew is caught without reading the rest.
      const want = Math.min(STREAM_CHUNK_BYTES, expected.bytes - bytes + 1);
      const buffer = bytes === expected.bytes ? Buffer.allocUnsafe(1) : recycling.take();
      const { bytesRead } = await handle.read(buffer, 0, want, bytes).catch((error: unknown) => {
        throw unreadable(error);
      });
      if (bytesRead === 0) break;
      bytes += bytesRead;
      if (bytes > expected.bytes) throw changed(filename, `it now has more than ${expected.bytes} bytes`);
      const chunk = buffer.subarray(0, bytesRead);
      hash?.update(chunk);
      gmac?.setAAD(chunk);
      if (bytes === expected.bytes) {
        last = chunk;
        continue;
      }
      // Short of the verified size, so no complete body: on at once, no buffer held for it here.
      recycling.handedOn(buffer, bytes);
      yield chunk;
    }
    if (bytes < expected.bytes) throw changed(filename, `it now has ${bytes} bytes, not ${expected.bytes}`);
    if (hash !== undefined) {
      const sha256 = hash.digest('hex');
      if (sha256 !== expected.sha256)
        throw changed(filename, `it now hashes to ${sha256}, not ${expected.sha256}`);
    } else if (gmac !== undefined) {
      gmac.final();
      if (gmac.getAuthTag().toString('hex') !== sealed?.tag) {
        // Other bytes: what they hash to now is read once more, for the message (a failure costs no speed).
        const now = await sha256Of(handle, expected.bytes).catch((error: unknown) => {
          throw unreadable(error);
        });
        throw changed(
          filename,
          now === expected.sha256
            ? `its bytes changed while they were read (they hash to ${expected.sha256} again)`
            : `it now hashes to ${now}, not ${expected.sha256}`,
        );
      }
    }
    if (last !== undefined) yield last;
  } finally {
    await handle.close();
  }
}

/**
 * The SHA-256 of the content of each planned entry the first read of a file hashed with `storedEntriesLater` left
 * for later (`hashedLater`: stored, 64 KiB or more; the others' are `''` here: the first read has them), read again on this thread and proven to be the verified bytes
 * as `readVerified` proves them (the seal, else the SHA-256): a file that changed since fails with
 * `FileChangedError`, and no hash of other bytes is ever returned. The read comes from the page cache while the
 * uploads read the same file; the stored entries' sizes and CRC-32s were checked in the first read.
 */
export async function hashStoredEntries(
  path: string,
  filename: string,
  plan: ZipPlan,
  expected: VerifiedDigest,
  signal?: AbortSignal,
): Promise<string[]> {
  const kept = seals.get(path);
  const sealed =
    kept !== undefined && kept.sha256 === expected.sha256 && kept.bytes === expected.bytes
      ? kept.seal
      : undefined;
  const whole =
    sealed === undefined
      ? createHash('sha256')
      : createCipheriv('aes-128-gcm', SEAL_KEY, Buffer.from(sealed.nonce, 'hex'));
  // Only the entries the first read left for later (the others' hashes it has already).
  const flows = plan.map((entry) => (hashedLater(entry) ? createHash('sha256') : undefined));
  const unreadable = (error: unknown): FileChangedError =>
    changed(
      filename,
      `it cannot be read any more (${(error as NodeJS.ErrnoException).code ?? 'EIO'})`,
      error,
      CHANGED_LATER_HINT,
    );
  const handle = await fs.open(path, 'r').catch((error: unknown) => {
    throw unreadable(error);
  });
  try {
    return await withReadBuffer(async (buffer) => {
      let bytes = 0;
      const cursor = { next: 0 };
      for (;;) {
        if (signal?.aborted) throw new InterruptedError(`Interrupted while hashing ${filename}`);
        const want = Math.min(buffer.length, expected.bytes - bytes + 1);
        const { bytesRead } = await handle.read(buffer, 0, want, bytes).catch((error: unknown) => {
          throw unreadable(error);
        });
        if (bytesRead === 0) break;
        const from = bytes;
        bytes += bytesRead;
        if (bytes > expected.bytes)
          throw changed(
            filename,
            `it now has more than ${expected.bytes} bytes`,
            undefined,
            CHANGED_LATER_HINT,
          );
        const data = buffer.subarray(0, bytesRead);
        if ('setAAD' in whole) whole.setAAD(data);
        else whole.update(data);
        for (const [index, slice] of entrySlices(plan, cursor, from, data)) flows[index]?.update(slice);
      }
      if (bytes < expected.bytes)
        throw changed(
          filename,
          `it now has ${bytes} bytes, not ${expected.bytes}`,
          undefined,
          CHANGED_LATER_HINT,
        );
      const same =
        'setAAD' in whole
          ? (whole.final(), whole.getAuthTag().toString('hex') === sealed?.tag)
          : whole.digest('hex') === expected.sha256;
      if (!same)
        throw changed(
          filename,
          'its bytes are not the ones verified any more',
          undefined,
          CHANGED_LATER_HINT,
        );
      return flows.map((hash) => hash?.digest('hex') ?? '');
    });
  } finally {
    await handle.close();
  }
}

/** The SHA-256 of an open file's first `bytes` bytes. */
async function sha256Of(handle: fs.FileHandle, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(STREAM_CHUNK_BYTES);
  for (let at = 0; at < bytes;) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, bytes - at), at);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    at += bytesRead;
  }
  return hash.digest('hex');
}

function changed(filename: string, how: string, cause?: unknown, hint = CHANGED_HINT): FileChangedError {
  return new FileChangedError(`${filename} changed since it was verified: ${how}`, {
    hint,
    details: { file: filename },
    cause,
  });
}

const CHANGED_HINT =
  'Something rewrote the release folder while publishing; nothing of this file was stored. Restore the file (or rebuild the release), then run the same command again.';
/** For `hashStoredEntries`: the upload may have gone (of the verified bytes: `readVerified` proves them). */
const CHANGED_LATER_HINT =
  'Something rewrote the release folder while publishing; its lock hashes could not be read from it again (anything uploaded was the verified bytes). Restore the file (or rebuild the release), then run the same command again.';
