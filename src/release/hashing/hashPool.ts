/**
 * A queue of files hashed by worker_threads workers and the main thread together. Every thread claims the next
 * file from one shared counter when it finishes one, so a worker goes on while the main thread's event loop is
 * busy with something else (loading the modules the next steps need), and the last files go to whichever thread
 * is free first. The main thread reads without blocking, so its event loop keeps serving the rest of the program
 * meanwhile. The workers run src/release/hashing/hashWorker.ts; the pool stops them when the queue is done or fails.
 */
import type { Worker } from 'node:worker_threads';
import { InterruptedError } from '../../errors.js';
import { digestFile, replyError, type DigestReply, type FileDigest } from './digest.js';
import type { HashJob, HashQueue, HashReply } from './hashWorker.js';
import type { ZipPlan } from '../zipPlan.js';

/** What the pool needs besides its files and workers. */
export interface PoolOptions {
  signal?: AbortSignal | undefined;
  plans?: ReadonlyMap<string, ZipPlan> | undefined;
  storedLater: boolean;
  /** Called once every thread has its files. */
  started?: (() => void) | undefined;
  /** Runs a read with a read buffer of the main thread's. */
  withReadBuffer: <T>(use: (buffer: Buffer) => Promise<T>) => Promise<T>;
}

/** A file's digest and its chunks' digests, taken in the same read. */
export interface ChunkedDigest {
  digest: FileDigest;
  chunks: string[] | undefined;
}

/** Ends a worker; its end needs no waiting. */
export function stopWorker(worker: Worker): void {
  void worker.terminate();
}

/** Hashes `queue` on `workers` and the main thread; resolves to every file's digest and chunk digests. */
export function runPool(queue: string[], workers: Worker[], options: PoolOptions): Promise<ChunkedDigest[]> {
  const { signal, plans, storedLater, started } = options;
  return new Promise((resolve, reject) => {
    const digests: ChunkedDigest[] = [];
    const jobs: HashJob[] = queue.map((path) => ({
      path,
      plan: plans?.get(path),
      storedLater,
    }));
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
    const done = (reply: DigestReply): void => {
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
        const mode = { blocking: false, storedLater: job.storedLater, chunks: true };
        done(await options.withReadBuffer((buffer) => digestFile(job.path, job.plan, mode, buffer)));
      }
    };
    const queued: HashQueue = { jobs, claim };
    for (const worker of workers) {
      // The listeners it had while it waited go.
      worker.removeAllListeners('error').removeAllListeners('exit').ref();
      worker.on('message', ({ reply }: HashReply) => done(reply));
      worker.on('error', (error) => finish(error));
      worker.on('exit', (code) => finish(new Error(`a hashing worker stopped early (exit code ${code})`)));
      worker.postMessage(queued);
    }
    // After the workers got the queue: they start while the main thread reads its own files.
    void mainThread().catch((error: unknown) => finish(error as Error));
    started?.();
  });
}
