/**
 * The files read whole into memory (SHA256SUMS, its signature, the manifest, an armored key, a lock file) are
 * small by nature, so each gets a cap. Without one a 1.5 GB file cost GBs of memory and many seconds, then failed with
 * a misleading message (a 1.5 GB SHA256SUMS "is not UTF-8 text"). The size is checked on the open file before
 * reading, and the read itself stops one byte past the cap, so a file that grows meanwhile (or a device that
 * reports no size, like /dev/zero) is bounded too.
 */
import { constants as fsConstants, type Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import { formatBytes } from '../terraform/names.js';

/**
 * The caps, in bytes, each far above what a real file needs:
 * - SHA256SUMS: ~130 bytes a line (64 hex, two spaces, a file name), a release has a few dozen lines, a few
 *   KB; 1 MiB holds some 8 000 lines;
 * - the signature: one RSA 4096 signature is ~550 bytes, armored or not; 64 KiB holds a hundred;
 * - the manifest: `{"version":1,"metadata":{"protocol_versions":["6.0"]}}` is 56 bytes; 64 KiB;
 * - an armored public key: a few KB, more with many certifications; 1 MiB;
 * - a `.terraform.lock.hcl` (`provider lock`, `provider lock check`): 2 to 4 KB a provider (every platform's `h1:`,
 *   every file's `zh:`), so some 250 to 500 providers in 1 MiB. Parsing it costs far more than its size: the HCL
 *   parser takes some 180 bytes of memory a character inside quotes (1 MiB of hashes: 264 MB, 8 MiB: 1.6 GB).
 */
export const SMALL_FILE_CAPS = {
  shasums: 1024 * 1024,
  signature: 64 * 1024,
  manifest: 64 * 1024,
  key: 1024 * 1024,
  lockFile: 1024 * 1024,
} as const;

/** A file above its cap; `bytes` is its size, or, when `grew`, how much was read past what its size said. */
export class FileTooLargeError extends Error {
  constructor(
    readonly path: string,
    readonly bytes: number,
    readonly limit: number,
    readonly grew = false,
  ) {
    super(`${path} holds ${bytes} bytes, more than the ${limit} allowed`);
    this.name = 'FileTooLargeError';
  }
}

/** Reads a whole file of at most `limit` bytes; throws FileTooLargeError above it, and fs errors as they come. */
export async function readCapped(path: string, limit: number): Promise<Buffer> {
  const handle = await fs.open(path, 'r');
  try {
    return await readOpened(handle, path, (await handle.stat()).size, limit);
  } finally {
    await handle.close();
  }
}

/** A path that names something other than a regular file (through its links): `kind` says what. */
export class NotRegularFileError extends Error {
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is ${kind}, not a regular file`);
    this.name = 'NotRegularFileError';
  }
}

/** What a stat names, in words (for NotRegularFileError and the mirrored folder's record check). */
export function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'something else';
}

/**
 * Reads a regular file (links followed) of at most `limit` bytes, with its mode. Anything else is refused with
 * NotRegularFileError before a byte is read: opened without blocking, so a named pipe nobody writes to does not
 * hang the open, and judged by the opened file's own stat, so nothing can be swapped in between. Above the cap,
 * FileTooLargeError; fs errors (ENOENT…) as they come.
 */
export async function readRegularCapped(
  path: string,
  limit: number,
): Promise<{ bytes: Buffer; mode: number }> {
  const handle = await fs.open(path, fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0));
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotRegularFileError(path, kindOf(stats));
    return { bytes: await readOpened(handle, path, stats.size, limit), mode: stats.mode & 0o7777 };
  } finally {
    await handle.close();
  }
}

/** Reads an open file of `size` bytes (as its stat says) whole, bounded by `limit`. */
async function readOpened(handle: fs.FileHandle, path: string, size: number, limit: number): Promise<Buffer> {
  if (size > limit) throw new FileTooLargeError(path, size, limit);
  // Room for one byte more than the size, which tells a file that grew (or a device without a size) from
  // one that did not; the buffer grows on demand, never past the cap plus that byte.
  let buffer = Buffer.alloc(Math.min(limit, Math.max(size, 64 * 1024)) + 1);
  let filled = 0;
  for (;;) {
    if (filled === buffer.length) {
      if (filled > limit) throw new FileTooLargeError(path, filled, limit, true);
      const larger = Buffer.alloc(Math.min(limit + 1, buffer.length * 2));
      buffer.copy(larger);
      buffer = larger;
    }
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
    if (bytesRead === 0) return buffer.subarray(0, filled);
    filled += bytesRead;
  }
}

/** `1 MiB`, `64 KiB`: a cap as written in the code. */
export function formatCap(limit: number): string {
  if (limit % (1024 * 1024) === 0) return `${limit / (1024 * 1024)} MiB`;
  if (limit % 1024 === 0) return `${limit / 1024} KiB`;
  return `${limit} bytes`;
}

/** `<shown> is 1.5 GiB; <what> is at most 1 MiB`, or, for a file that grew while read, says so. */
export function tooLargeMessage(shown: string, error: FileTooLargeError, what: string): string {
  const cap = formatCap(error.limit);
  return !error.grew
    ? `${shown} is ${formatBytes(error.bytes)}; ${what} is at most ${cap}`
    : `${shown} is larger than ${cap} (it grew while it was read, or reports no size); ${what} is at most ${cap}`;
}
