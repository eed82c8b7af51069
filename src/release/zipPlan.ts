/**
 * A zip's entry plan as the hashing reads it: where each entry's data lies in the file (from the central
 * directory and the local headers, src/release/hashing/lockHashes.ts), which of the read's bytes belong to which entry,
 * and which stored entries have their SHA-256 left to a second read.
 */

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

/**
 * Whether an entry's SHA-256 is left to `hashStoredEntries` when stored entries are hashed later: stored entries
 * of 64 KiB or more; a small one (a LICENSE, a folder) is not worth a second read of its whole zip, and is hashed
 * in the first.
 */
export function hashedLater(entry: PlannedEntry): boolean {
  return entry.method === 0 && entry.uncompressedSize >= 64 * 1024;
}

/**
 * The parts of `data` (the file's bytes from offset `from`) that are planned entries' data, each with its entry's
 * index in the plan. The plan's entries are sorted by start and do not overlap, so the entries that ended before
 * this chunk are passed for good: `cursor.next`, the first entry not passed yet, carries over to the next chunk.
 */
export function entrySlices(
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
