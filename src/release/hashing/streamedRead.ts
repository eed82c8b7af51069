/**
 * The one read of a zip that `publish` uploads without having read it before (its default order): each chunk is
 * hashed into the file's SHA-256 (its signed SHA256SUMS line), its entries' data fed to their own hashes and
 * inflaters (each entry's size and CRC-32 checked, its content hashed for the `h1:`), and the same buffer handed
 * on to the upload. The chunk that completes the file is held back until the file hashed to its signed line and
 * every entry checked out; otherwise the iteration fails and the upload, short of its Content-Length, never
 * completes: the registry never marks a file uploaded whose bytes were not proven.
 *
 * What the release's first read knew of the file (its size, and its identity: device, inode, change and
 * modification times) tells the two failures apart: a file that is not what it was then changed during the run
 * (`FileChangedError`, as a re-read after verification says it), one that is still the same never matched its line.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import type { VerifiedChunks } from '../../verifiedFiles.js';
import type { RemoteZip } from '../remoteZip.js';
import { fromLink } from './linkRead.js';
import { CHUNK_BYTES } from './digest.js';
import { EntryContents, feed, STREAMED_INFLATE_CHUNK } from './entryContents.js';
import { changed, readWhole, Recycler, unreadable } from './verifiedRead.js';
import { entrySlices, type ZipPlan } from '../zipPlan.js';

/** What a file was when the release was read: a later `fstat` that differs says it changed since. */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

/** The identity of a file from its (bigint) stats. */
export function identityOf(stats: BigIntStats): FileIdentity {
  const { dev, ino, size, mtimeNs, ctimeNs } = stats;
  return { dev, ino, size, mtimeNs, ctimeNs };
}

/** What a zip streamed for upload must prove before its last chunk goes. */
export interface StreamExpectation {
  filename: string;
  /** Its signed SHA256SUMS line's hash (lower-case hex). */
  sha256: string;
  /** Its size when the release was read: the upload's Content-Length. */
  bytes: number;
  identity: FileIdentity;
  /** The entries to inflate and hash, from its central directory and local headers. */
  plan: ZipPlan;
  /** Not a file in the folder: streamed from its link, proven the same way (and again on every attempt). */
  remote?: RemoteZip | undefined;
  /** The errors for a file that is the one read before but wrong: its hash, or an entry's content. */
  failures: {
    shasum(actual: string): Error;
    entry(entry: string, failure: string): Error;
  };
}

/** What the read proved: the file's SHA-256 and size, and each planned entry's content SHA-256. */
export interface StreamResult {
  sha256: string;
  bytes: number;
  entries: string[];
}

/**
 * The file's chunks for an upload, read once and proven on the way (see above); `proved` is told the result
 * before the last chunk is handed on. Memory: the chunks in flight (256 KiB each, handed back through `sent`) and
 * the inflaters' buffers, whatever the file size.
 */
export function streamedChunks(
  path: string,
  expect: StreamExpectation,
  proved: (result: StreamResult) => void,
): VerifiedChunks {
  const recycling = new Recycler();
  if (expect.remote !== undefined) {
    const remote = fromLink(expect.remote, expect, proved);
    return { [Symbol.asyncIterator]: () => remote, sent: () => undefined };
  }
  const chunks = readOnce(path, expect, proved, recycling);
  return { [Symbol.asyncIterator]: () => chunks, sent: (bytes: number) => recycling.sent(bytes) };
}

async function* readOnce(
  path: string,
  expect: StreamExpectation,
  proved: (result: StreamResult) => void,
  recycling: Recycler,
): AsyncGenerator<Buffer> {
  const { filename, plan } = expect;
  const contents = new EntryContents(plan, false, STREAMED_INFLATE_CHUNK);
  const hash = createHash('sha256');
  const cursor = { next: 0 };
  let finished = false;
  const handle = await fs.open(path, 'r').catch(unreadable(filename));
  try {
    // The chunk that completes the file, held back until everything is proven; and the entries' intake of the
    // chunk handed on last, waited for before a buffer is read into again.
    let last: Buffer | undefined;
    let feeding: Promise<void> = Promise.resolve();
    let bytes = 0;
    for (;;) {
      await feeding;
      // One byte past the size at most: a file that grew is caught without reading the rest.
      const want = Math.min(CHUNK_BYTES, expect.bytes - bytes + 1);
      const buffer = bytes === expect.bytes ? Buffer.allocUnsafe(1) : recycling.take();
      const bytesRead = await readWhole(handle, buffer, want, bytes).catch(unreadable(filename));
      if (bytesRead === 0) break;
      const from = bytes;
      bytes += bytesRead;
      if (bytes > expect.bytes) throw changed(filename, `it now has more than ${expect.bytes} bytes`);
      if (bytesRead < want && bytes < expect.bytes) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      feeding = feed(contents, entrySlices(plan, cursor, from, chunk));
      if (bytes === expect.bytes) {
        last = chunk;
        continue;
      }
      recycling.handedOn(buffer, bytes);
      yield chunk;
    }
    await feeding;
    if (bytes < expect.bytes) throw changed(filename, `it now has ${bytes} bytes, not ${expect.bytes}`);
    const sha256 = hash.digest('hex');
    if (sha256 !== expect.sha256) throw await mismatch(handle, expect, sha256);
    const entries = await contents.finish();
    finished = true;
    if ('failure' in entries) throw expect.failures.entry(entries.entry, entries.failure);
    proved({ sha256, bytes, entries: entries.entries });
    if (last !== undefined) yield last;
  } finally {
    if (!finished) contents.abandon();
    await handle.close();
  }
}

/** The error for bytes that do not hash to the signed line: changed during the run, or never the signed ones. */
async function mismatch(handle: fs.FileHandle, expect: StreamExpectation, sha256: string): Promise<Error> {
  const now = identityOf(await handle.stat({ bigint: true }).catch(unreadable(expect.filename)));
  const before = expect.identity;
  const same = (Object.keys(before) as (keyof FileIdentity)[]).every((key) => now[key] === before[key]);
  return same
    ? expect.failures.shasum(sha256)
    : changed(expect.filename, `it now hashes to ${sha256}, not ${expect.sha256}`);
}
