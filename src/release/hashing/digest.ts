/**
 * One read of one file: every byte into the file's SHA-256 and its seal, and the planned zip entries' data into
 * their own hashes (src/release/hashing/entryContents.ts). Runs on the main thread and in the hashing workers
 * (src/release/hashing/hashWorker.ts), and answers with a reply rather than throwing, so that a worker can post it.
 *
 * The seal is a GMAC (AES-128-GCM's tag over the bytes as additional data, no plaintext) under the hashing
 * session's key, with a fresh nonce per file: `readVerified` checks the bytes it uploads against it
 * (src/release/hashing/verifiedRead.ts).
 */
import { createCipheriv, createHash, type CipherGCM } from 'node:crypto';
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

/** A GMAC of a file's bytes under a session's sealing key: the nonce (12 bytes) and the tag (16), hex. */
export interface Seal {
  nonce: string;
  tag: string;
}

/** What a reader needs to seal one file: the key and a fresh nonce. */
export interface Sealing {
  key: Uint8Array;
  nonce: Uint8Array;
}

/** What a read of a file answers: its digest and seal, or why it could not be read. */
export type DigestReply =
  | { ok: true; digest: FileDigest; seal: Seal | undefined }
  | { ok: false; path: string; code: string; message: string; entry?: string };

/** What `digestFile` reads at once. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** How a file is read: blocking (a worker: faster, nothing else runs there) and whether stored entries wait. */
export interface ReadMode {
  blocking: boolean;
  storedLater: boolean;
}

/**
 * Reads a file once, in chunks of `chunk`'s size (which it reads into; nothing else may use it meanwhile): every
 * byte into the file's SHA-256 and its seal (`sealWith`: the key and this file's nonce; none, no seal), and each
 * planned entry's data into that entry's content hash.
 */
export async function digestFile(
  path: string,
  plan: ZipPlan | undefined,
  { blocking, storedLater }: ReadMode,
  sealWith: Sealing | undefined,
  chunk: Buffer,
): Promise<DigestReply> {
  const contents = new EntryContents(plan ?? [], storedLater);
  const fileHash = createHash('sha256');
  // The seal: GCM's tag over the bytes given as additional data (GHASH only, no encryption).
  const sealer: CipherGCM | undefined =
    sealWith === undefined ? undefined : createCipheriv('aes-128-gcm', sealWith.key, sealWith.nonce);
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
      sealer?.setAAD(data);
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
  return { ok: true, digest, seal: sealer === undefined ? undefined : sealOf(sealer, sealWith!) };
}

/** The seal a finished read made. */
function sealOf(sealer: CipherGCM, sealWith: Sealing): Seal {
  sealer.final();
  return { nonce: Buffer.from(sealWith.nonce).toString('hex'), tag: sealer.getAuthTag().toString('hex') };
}
