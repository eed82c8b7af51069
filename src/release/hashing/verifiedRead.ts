/**
 * Reads of release files after their verification, each proven to be of the verified bytes: chunk by chunk, by the
 * SHA-256 of each 256 KiB chunk taken in the verification's read (src/release/hashing/digest.ts), else, for a file
 * this process did not hash, by the file's SHA-256 as a whole. `verifiedChunks` hands a file on to an upload;
 * `storedEntryHashes` reads a zip again for the lock hashes of the stored entries the first read left for later.
 */
import { createHash, type Hash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { InterruptedError } from '../../errors.js';
import { FileChangedError, type VerifiedChunks, type VerifiedDigest } from '../../verifiedFiles.js';
import { CHUNK_BYTES, ChunkHashes } from './digest.js';
import { entrySlices, hashedLater, type ZipPlan } from '../zipPlan.js';

/** The digests of a file's chunks taken when it was verified; none: the file is checked by its SHA-256. */
export type ChunkDigests = readonly string[] | undefined;

/** The check of a read's bytes: whether they are the verified ones, and what they hash to when that is known. */
interface Check {
  /** Takes the next bytes of the file (none past the verified size); false once they are known to differ. */
  add(data: Buffer): boolean;
  /** Once every byte was added: `same`, and the bytes' SHA-256 when the check is by SHA-256. */
  finish(): { same: boolean; sha256?: string };
}

/**
 * The check of a read of a file verified as `expected`: each chunk against its digest as soon as the chunk is
 * complete (the last one when the verified size is reached), else the whole file's SHA-256 once it is read.
 */
function checker(chunks: ChunkDigests, expected: VerifiedDigest): Check {
  if (chunks === undefined) {
    const hash: Hash = createHash('sha256');
    return {
      add: (data) => {
        hash.update(data);
        return true;
      },
      finish: () => {
        const sha256 = hash.digest('hex');
        return { same: sha256 === expected.sha256, sha256 };
      },
    };
  }
  const hashes = new ChunkHashes();
  let bytes = 0;
  let compared = 0;
  let same = true;
  return {
    add: (data) => {
      hashes.add(data);
      bytes += data.length;
      if (bytes === expected.bytes) hashes.end();
      for (; compared < hashes.digests.length; compared++)
        same &&= hashes.digests[compared] === chunks[compared];
      return same;
    },
    finish: () => {
      hashes.end();
      return { same: same && hashes.digests.length === chunks.length && bytes === expected.bytes };
    },
  };
}

/**
 * Reads a verified file chunk by chunk, checking exactly the bytes it hands on, and fails instead of handing on
 * bytes other than the verified ones. Each chunk is read whole (256 KiB, the last one shorter) and checked against
 * the digest the verification took of it before it goes on; a file this process did not hash is checked by its
 * SHA-256 once it is read, its chunks short of a complete body going on as they are read. Either way, the chunk
 * that completes the verified size is held back until the file is read to its end (one byte past that size). A
 * consumer (an upload of that many bytes) therefore never receives a complete body that differs from what was
 * verified; it receives an error (`FileChangedError`) and must abort. A file that grows is caught one byte past
 * its verified size, one that shrinks at its new end, one that cannot be read any more at once. Memory: the chunk
 * being sent and the one held back, 256 KiB each, whatever the file size (an upload asks for the next chunk once
 * the last is written: got sends an async iterable body so, where a stream would read ahead).
 *
 * The consumer may hand the chunks' buffers back (`sent(bytes)`: the first `bytes` of the file are written and
 * no longer referenced, as an HTTP request's write callbacks say) and they are read into again. Without that, each
 * chunk is a new buffer, and a fast upload leaves its chunks as garbage until V8's external-memory trigger
 * (64 MB more than after the last full collection) runs a collection: tens of MB of peak RSS for nothing.
 */
export function verifiedChunks(
  path: string,
  filename: string,
  expected: VerifiedDigest,
  digests: ChunkDigests,
): VerifiedChunks {
  const recycling = new Recycler();
  const chunks = readChunks(path, filename, expected, digests, recycling);
  return { [Symbol.asyncIterator]: () => chunks, sent: (bytes: number) => recycling.sent(bytes) };
}

/** The chunks handed on and not yet sent, in order, and the buffers free to read into. */
export class Recycler {
  private readonly out: { end: number; buffer: Buffer }[] = [];
  private readonly free: Buffer[] = [];

  /** A buffer of CHUNK_BYTES: a free one, else a new one. */
  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
  }

  /** The chunk read into `buffer`, ending at byte `end` of the file, is being handed on. */
  handedOn(buffer: Buffer, end: number): void {
    this.out.push({ end, buffer });
  }

  sent(bytes: number): void {
    while (this.out.length > 0 && this.out[0]!.end <= bytes) this.free.push(this.out.shift()!.buffer);
  }
}

/** A read failure of a file that was verified: it changed. */
export function unreadable(filename: string, hint = CHANGED_HINT): (error: unknown) => never {
  return (error) => {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    throw changed(filename, `it cannot be read any more (${code})`, error, hint);
  };
}

async function* readChunks(
  path: string,
  filename: string,
  expected: VerifiedDigest,
  digests: ChunkDigests,
  recycling: Recycler,
): AsyncGenerator<Buffer> {
  const check = checker(digests, expected);
  const handle = await fs.open(path, 'r').catch(unreadable(filename));
  try {
    // The chunk that completes the verified size, held back until the file is read to its end.
    let last: Buffer | undefined;
    let bytes = 0;
    for (;;) {
      // One byte past the verified size at most: a file that grew is caught without reading the rest.
      const want = Math.min(CHUNK_BYTES, expected.bytes - bytes + 1);
      const buffer = bytes === expected.bytes ? Buffer.allocUnsafe(1) : recycling.take();
      const bytesRead = await readWhole(handle, buffer, want, bytes).catch(unreadable(filename));
      if (bytesRead === 0) break;
      bytes += bytesRead;
      if (bytes > expected.bytes) throw changed(filename, `it now has more than ${expected.bytes} bytes`);
      const chunk = buffer.subarray(0, bytesRead);
      // A short chunk short of the verified size: the file ends there, said below rather than as other bytes.
      if (bytesRead < want && bytes < expected.bytes) break;
      if (!check.add(chunk)) throw await otherBytes(handle, filename, expected);
      if (bytes === expected.bytes) {
        last = chunk;
        continue;
      }
      // Short of the verified size, so no complete body: on at once, no buffer held for it here.
      recycling.handedOn(buffer, bytes);
      yield chunk;
    }
    if (bytes < expected.bytes) throw changed(filename, `it now has ${bytes} bytes, not ${expected.bytes}`);
    const verdict = check.finish();
    if (!verdict.same) throw await otherBytes(handle, filename, expected, verdict.sha256);
    if (last !== undefined) yield last;
  } finally {
    await handle.close();
  }
}

/**
 * Reads `want` bytes at `position` into `buffer`, fewer only where the file ends (a read may answer fewer bytes
 * than asked): a chunk is read whole, as its digest was taken.
 */
export async function readWhole(
  handle: fs.FileHandle,
  buffer: Buffer,
  want: number,
  position: number,
): Promise<number> {
  let got = 0;
  while (got < want) {
    const { bytesRead } = await handle.read(buffer, got, want - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

/**
 * The error for a file whose bytes are not the verified ones: what they hash to now (`sha256`, else read once
 * more for the message: a failure costs no speed).
 */
async function otherBytes(
  handle: fs.FileHandle,
  filename: string,
  expected: VerifiedDigest,
  sha256?: string,
): Promise<FileChangedError> {
  const now = sha256 ?? (await sha256Of(handle, expected.bytes).catch(unreadable(filename)));
  return changed(
    filename,
    now === expected.sha256
      ? `its bytes changed while they were read (they hash to ${expected.sha256} again)`
      : `it now hashes to ${now}, not ${expected.sha256}`,
  );
}

/**
 * The SHA-256 of the content of each planned entry the first read of a file hashed with `storedEntriesLater` left
 * for later (`hashedLater`: stored, 64 KiB or more; the others' are `''` here: the first read has them), read
 * again through `buffer` and proven to be the verified bytes as `verifiedChunks` proves them: a file that changed
 * since fails with `FileChangedError`, and no hash of other bytes is ever returned. The read comes from the page
 * cache while the uploads read the same file; the stored entries' sizes and CRC-32s were checked in the first read.
 */
export async function storedEntryHashes(
  file: { path: string; filename: string; plan: ZipPlan; expected: VerifiedDigest },
  digests: ChunkDigests,
  buffer: Buffer,
  signal?: AbortSignal,
): Promise<string[]> {
  const { path, filename, plan, expected } = file;
  const check = checker(digests, expected);
  // Only the entries the first read left for later (the others' hashes it has already).
  const flows = plan.map((entry) => (hashedLater(entry) ? createHash('sha256') : undefined));
  const later = (how: string): FileChangedError => changed(filename, how, undefined, CHANGED_LATER_HINT);
  const handle = await fs.open(path, 'r').catch(unreadable(filename, CHANGED_LATER_HINT));
  try {
    let bytes = 0;
    const cursor = { next: 0 };
    for (;;) {
      if (signal?.aborted) throw new InterruptedError(`Interrupted while hashing ${filename}`);
      const want = Math.min(buffer.length, expected.bytes - bytes + 1);
      const { bytesRead } = await handle
        .read(buffer, 0, want, bytes)
        .catch(unreadable(filename, CHANGED_LATER_HINT));
      if (bytesRead === 0) break;
      const from = bytes;
      bytes += bytesRead;
      if (bytes > expected.bytes) throw later(`it now has more than ${expected.bytes} bytes`);
      const data = buffer.subarray(0, bytesRead);
      if (!check.add(data)) throw later(OTHER_BYTES);
      for (const [index, slice] of entrySlices(plan, cursor, from, data)) flows[index]?.update(slice);
    }
    if (bytes < expected.bytes) throw later(`it now has ${bytes} bytes, not ${expected.bytes}`);
    if (!check.finish().same) throw later(OTHER_BYTES);
    return flows.map((hash) => hash?.digest('hex') ?? '');
  } finally {
    await handle.close();
  }
}

/** The SHA-256 of an open file's first `bytes` bytes. */
async function sha256Of(handle: fs.FileHandle, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  for (let at = 0; at < bytes;) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, bytes - at), at);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    at += bytesRead;
  }
  return hash.digest('hex');
}

const OTHER_BYTES = 'its bytes are not the ones verified any more';

export function changed(
  filename: string,
  how: string,
  cause?: unknown,
  hint = CHANGED_HINT,
): FileChangedError {
  return new FileChangedError(`${filename} changed since it was verified: ${how}`, {
    hint,
    details: { file: filename },
    cause,
  });
}

const CHANGED_HINT =
  'Something rewrote the release folder while publishing; nothing of this file was stored. Restore the file (or rebuild the release), then run the same command again.';
/** For `storedEntryHashes`: the upload may have gone (of the verified bytes: `verifiedChunks` proves them). */
const CHANGED_LATER_HINT =
  'Something rewrote the release folder while publishing; its lock hashes could not be read from it again (anything uploaded was the verified bytes). Restore the file (or rebuild the release), then run the same command again.';
