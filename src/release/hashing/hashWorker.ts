/**
 * The hashing worker's program: a worker_threads worker started by the hashing pool (src/release/hashing/hashPool.ts)
 * runs this module. It gets the whole queue at once and a shared counter, and claims the next job itself (one
 * atomic add) as soon as it finishes one, so it never waits for the main thread, which may be busy loading
 * modules meanwhile. It reads blocking, through one read buffer for all its files.
 *
 * Its imports name their `.ts` files (tsc writes `.js` in dist/): under vitest the pool starts this very file,
 * which Node runs by stripping its types. The bundles build it on its own (scripts/bundle.mjs).
 */
import { parentPort } from 'node:worker_threads';
import { digestFile, READ_CHUNK_BYTES, type DigestReply } from './digest.ts';
import type { ZipPlan } from '../zipPlan.ts';

/** One file of a pool's queue, as every thread gets it: the path, and the zip's plan. */
export interface HashJob {
  path: string;
  plan?: ZipPlan | undefined;
  storedLater: boolean;
}

/** What the pool posts to a worker: the queue, and the counter every thread claims its next job from. */
export interface HashQueue {
  jobs: HashJob[];
  claim: SharedArrayBuffer;
}

/** A worker's reply for the job at `index` of the queue. */
export interface HashReply {
  index: number;
  reply: DigestReply;
}

/** Hashes the queue's jobs this worker claims, posting each reply as it comes. */
async function hashQueue({ jobs, claim }: HashQueue): Promise<void> {
  const next = new Int32Array(claim);
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  for (let index = Atomics.add(next, 0, 1); index < jobs.length; index = Atomics.add(next, 0, 1)) {
    const job = jobs[index]!;
    const mode = { blocking: true, storedLater: job.storedLater, chunks: true };
    const reply = await digestFile(job.path, job.plan, mode, chunk);
    const message: HashReply = { index, reply };
    parentPort?.postMessage(message);
  }
}

parentPort?.on('message', (queue: HashQueue) => void hashQueue(queue));
