/**
 * The hashing worker as a module of its own (src/release/hashing/hashWorker.ts), run in a worker_threads Worker as the
 * pool runs it: from its TypeScript source (what the pool starts under vitest, Node stripping its types) and
 * from tsc's output in dist/ (npm run build). Its replies carry each file's SHA-256, size, the SHA-256 of each of
 * its 256 KiB chunks, and the planned zip entries' content hashes.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { HashQueue, HashReply } from '../../src/release/hashing/hashWorker.js';
import { planZipHash } from '../../src/release/hashing/lockHashes.js';
import { tempRoot } from '../helpers/tmp.js';
import { makeZip } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Posts `queue` to a worker running `file`; resolves to its replies by job index, then ends the worker. Types
 * stripped as src/release/hashing/hashWorkerStart.ts asks for them (a no-op for the .js file).
 */
async function run(file: string, queue: HashQueue): Promise<Map<number, HashReply['reply']>> {
  const worker = new Worker(file, { execArgv: [...process.execArgv, '--experimental-strip-types'] });
  try {
    return await new Promise((resolve, reject) => {
      const replies = new Map<number, HashReply['reply']>();
      worker.on('error', reject);
      worker.on('message', ({ index, reply }: HashReply) => {
        replies.set(index, reply);
        if (replies.size === queue.jobs.length) resolve(replies);
      });
      worker.postMessage(queue);
    });
  } finally {
    await worker.terminate();
  }
}

describe.each([
  ['its TypeScript source', 'src/release/hashing/hashWorker.ts'],
  ['the tsc output in dist/', 'dist/release/hashing/hashWorker.js'],
])('the hashing worker, from %s', (_from, file) => {
  it("hashes the queue it is given: SHA-256, size, the chunks' digests, and the planned entries of a zip", async () => {
    const root = tempRoot();
    const data = randomBytes(3 * 1024 * 1024 + 7);
    const plain = path.join(root, 'plain.bin');
    fs.writeFileSync(plain, data);
    const license = 'license text\n'.repeat(10);
    const binary = randomBytes(200 * 1024);
    const zipBytes = makeZip([
      { name: 'LICENSE', data: license, deflate: true },
      { name: 'terraform-provider-x', data: binary },
    ]);
    const zip = path.join(root, 'x.zip');
    fs.writeFileSync(zip, zipBytes);
    const { plan } = await planZipHash(zip, 'x.zip');
    const jobs = [
      { path: plain, storedLater: false },
      { path: zip, plan, storedLater: false },
    ];
    const replies = await run(path.join(ROOT, file), { jobs, claim: new SharedArrayBuffer(4) });

    const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');
    // Each 256 KiB of the file, the last piece shorter.
    const chunks = (bytes: Buffer): string[] =>
      Array.from({ length: Math.ceil(bytes.length / (256 * 1024)) }, (_, i) =>
        sha256(bytes.subarray(i * 256 * 1024, (i + 1) * 256 * 1024)),
      );
    expect(replies.get(0)).toEqual({
      ok: true,
      digest: { path: plain, sha256: sha256(data), bytes: data.length },
      chunks: chunks(data),
    });
    expect(replies.get(1)).toEqual({
      ok: true,
      digest: {
        path: zip,
        sha256: sha256(zipBytes),
        bytes: zipBytes.length,
        entries: [sha256(license), sha256(binary)],
      },
      chunks: chunks(zipBytes),
    });
  });

  it('answers a file it cannot read with its path and code instead of failing', async () => {
    const missing = path.join(tempRoot(), 'gone.zip');
    const jobs = [{ path: missing, storedLater: false }];
    const replies = await run(path.join(ROOT, file), { jobs, claim: new SharedArrayBuffer(4) });
    expect(replies.get(0)).toMatchObject({ ok: false, path: missing, code: 'ENOENT' });
  });
});
