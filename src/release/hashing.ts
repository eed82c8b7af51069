/**
 * SHA-256 of release files, streamed through one fixed buffer per reader so memory stays flat whatever the
 * file sizes, and spread over a worker_threads pool sized to the machine's cores. Small releases are hashed
 * on the main thread: starting workers costs more than it saves below a few tens of megabytes (see bench/).
 * `readVerified` reads a file again after verification (to upload it) and proves it is still the same bytes.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { InterruptedError, VerificationError } from '../errors.js';

/** A file's digest. */
export interface FileDigest {
  path: string;
  /** Lower-case hex. */
  sha256: string;
  bytes: number;
}

/** Tuning knobs; the defaults suit the CLI. */
export interface HashOptions {
  /** Most workers to start (default `os.availableParallelism()`). */
  parallelism?: number;
  /** Hash on the main thread when all files together are smaller than this (default 48 MiB). */
  inlineBelowBytes?: number;
  signal?: AbortSignal | undefined;
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

const CHUNK_BYTES = 1024 * 1024;
/** What `readVerified` reads at once: held back one at a time per upload, so small enough to keep memory flat. */
const STREAM_CHUNK_BYTES = 256 * 1024;
/** Measured on 2 cores (bench/): 4 × 8 MiB inline 30 ms vs pool 40 ms; 4 × 16 MiB 49 vs 51 ms; 4 × 256 MiB 0.72 vs 0.37 s. */
export const DEFAULT_INLINE_BELOW_BYTES = 48 * 1024 * 1024;

/** Hashes every file, in parallel when it pays; resolves to digests keyed by path. */
export async function hashFiles(
  paths: string[],
  options: HashOptions = {},
): Promise<Map<string, FileDigest>> {
  const sized = await Promise.all(
    paths.map(async (path) => ({ path, size: (await fs.stat(path).catch(() => undefined))?.size ?? 0 })),
  );
  const total = sized.reduce((sum, f) => sum + f.size, 0);
  const workers = Math.min(options.parallelism ?? availableParallelism(), paths.length);
  const results = new Map<string, FileDigest>();
  if (workers <= 1 || total < (options.inlineBelowBytes ?? DEFAULT_INLINE_BELOW_BYTES)) {
    for (const { path } of sized) {
      if (options.signal?.aborted) throw new InterruptedError('Interrupted while hashing the release files');
      results.set(path, await hashFile(path));
    }
    return results;
  }
  // Largest first, so one big file does not start last and leave the other cores idle.
  const queue = sized.sort((a, b) => b.size - a.size).map((f) => f.path);
  for (const digest of await runPool(queue, workers, options.signal)) results.set(digest.path, digest);
  return results;
}

/** Hashes one file on the current thread, streaming it through a 1 MiB buffer. */
export async function hashFile(path: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let bytes = 0;
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(path, 'r');
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      bytes += bytesRead;
    }
  } catch (error) {
    const err = error as NodeJS.ErrnoException;
    throw new FileReadError(path, err.code ?? 'EIO', err.message);
  } finally {
    await handle?.close();
  }
  return { path, sha256: hash.digest('hex'), bytes };
}

type WorkerReply =
  { ok: true; digest: FileDigest } | { ok: false; path: string; code: string; message: string };

/** The worker's whole program. It is serialised with `toString()`, so it must not use anything from outside. */
function workerMain(): void {
  const { parentPort } = process.getBuiltinModule('node:worker_threads');
  const { openSync, readSync, closeSync } = process.getBuiltinModule('node:fs');
  const { createHash: newHash } = process.getBuiltinModule('node:crypto');
  const chunk = Buffer.allocUnsafe(1024 * 1024);
  parentPort?.on('message', (path: string) => {
    let fd: number | undefined;
    try {
      fd = openSync(path, 'r');
      const hash = newHash('sha256');
      let bytes = 0;
      for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) {
        hash.update(chunk.subarray(0, n));
        bytes += n;
      }
      parentPort.postMessage({ ok: true, digest: { path, sha256: hash.digest('hex'), bytes } });
    } catch (error) {
      const err = error as NodeJS.ErrnoException;
      parentPort.postMessage({ ok: false, path, code: err.code ?? 'EIO', message: err.message });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  });
}

const WORKER_SOURCE = `(${workerMain.toString()})();`;

/** Runs the queue through `size` workers; each worker takes the next file when it finishes one. */
function runPool(queue: string[], size: number, signal: AbortSignal | undefined): Promise<FileDigest[]> {
  return new Promise((resolve, reject) => {
    const digests: FileDigest[] = [];
    const workers: Worker[] = [];
    let next = 0;
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      for (const worker of workers) void worker.terminate();
      if (error) reject(error);
      else resolve(digests);
    };
    const onAbort = (): void => finish(new InterruptedError('Interrupted while hashing the release files'));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) return onAbort();
    const feed = (worker: Worker): void => {
      const path = queue[next++];
      if (path !== undefined) worker.postMessage(path);
      else if (digests.length === queue.length) finish();
    };
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
      workers.push(worker);
      worker.on('message', (reply: WorkerReply) => {
        if (!reply.ok) return finish(new FileReadError(reply.path, reply.code, reply.message));
        digests.push(reply.digest);
        feed(worker);
      });
      worker.on('error', (error) => finish(error));
      worker.on('exit', (code) => finish(new Error(`a hashing worker stopped early (exit code ${code})`)));
      feed(worker);
    }
  });
}

/**
 * Streams a verified file, hashing exactly the bytes it hands on, and fails instead of handing on bytes other
 * than the verified ones: each chunk is held back until the next one is read, so the last chunk leaves only
 * once the whole file is read and its hash and size match. A consumer (an upload) therefore never receives a
 * complete body that differs from what was verified; it receives an error (`FileChangedError`) and must
 * abort. A file that grows is caught one byte past its verified size, one that shrinks at its new end, one
 * that cannot be read any more at once. Memory: a few chunks of 256 KiB, whatever the file size.
 */
export function readVerified(path: string, filename: string, expected: VerifiedDigest): Readable {
  // Not object mode: the stream's buffer is counted in bytes, so it reads ahead at most one chunk.
  return Readable.from(verifiedChunks(path, filename, expected), { objectMode: false });
}

async function* verifiedChunks(
  path: string,
  filename: string,
  expected: VerifiedDigest,
): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
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
    let held: Buffer | undefined;
    let bytes = 0;
    for (;;) {
      // One byte past the verified size at most: a file that grew is caught without reading the rest.
      const want = Math.min(STREAM_CHUNK_BYTES, expected.bytes - bytes + 1);
      const buffer = Buffer.allocUnsafe(want);
      const { bytesRead } = await handle.read(buffer, 0, want, bytes).catch((error: unknown) => {
        throw unreadable(error);
      });
      if (bytesRead === 0) break;
      bytes += bytesRead;
      if (bytes > expected.bytes) throw changed(filename, `it now has more than ${expected.bytes} bytes`);
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      if (held !== undefined) yield held;
      held = chunk;
    }
    if (bytes < expected.bytes) throw changed(filename, `it now has ${bytes} bytes, not ${expected.bytes}`);
    const sha256 = hash.digest('hex');
    if (sha256 !== expected.sha256)
      throw changed(filename, `it now hashes to ${sha256}, not ${expected.sha256}`);
    if (held !== undefined) yield held;
  } finally {
    await handle.close();
  }
}

function changed(filename: string, how: string, cause?: unknown): FileChangedError {
  return new FileChangedError(`${filename} changed since it was verified: ${how}`, {
    hint: 'Something rewrote the release folder while publishing; nothing of this file was stored. Restore the file (or rebuild the release), then run the same command again.',
    details: { file: filename },
    cause,
  });
}
