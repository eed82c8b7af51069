/**
 * The platform's own reading of an uploaded provider zip for its lock hashes (the rule is src/terraform/hashes.ts;
 * the publisher reads zips with its own code, src/release/hashing/lockHashes.ts, so that the two sides of the wire never
 * share a reader whose bug would agree with itself). Plain and whole, as a server may afford: yauzl opens the zip
 * with raw names, each entry's content is streamed through SHA-256 (yauzl inflates and checks the CRC), a name
 * ending in "/" is a folder with empty content, and a repeated name takes the content of its last entry, as Go's
 * archive/zip `Open` by name does. An upload is anyone's bytes, so the reader has bounds of its own: at most
 * MAX_ENTRIES entries and MAX_CONTENT_BYTES of content, no two entries sharing bytes (the overlap zip-bomb shape),
 * and a folder entry with content refused (Go's archive/zip refuses to open one, so dirhash fails on it).
 */
import { createHash } from 'node:crypto';
import type { Entry, ZipFile } from 'yauzl';
import { dirhash1, sortHashes, zipHash } from '../terraform/hashes.js';

/** Entries a provider zip may hold here (goreleaser's hold a handful). */
const MAX_ENTRIES = 1000;
/** Content a provider zip may inflate to here, all entries together (the largest providers are under 1 GiB). */
const MAX_CONTENT_BYTES = 4 * 1024 ** 3;

/** The SHA-256 (hex) of one entry's content, streamed. */
async function entryContentHash(zip: ZipFile, entry: Entry): Promise<string> {
  const hash = createHash('sha256');
  if (entry.fileNameRaw.at(-1) === 0x2f) {
    if (entry.compressedSize !== 0 || entry.uncompressedSize !== 0)
      throw new Error('a folder entry holds content');
    return hash.digest('hex');
  }
  for await (const chunk of await zip.openReadStreamPromise(entry)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The central directory's entries, refused past the bounds above or when two of them share bytes. */
async function boundedEntries(zip: ZipFile): Promise<Entry[]> {
  if (zip.entryCount > MAX_ENTRIES) throw new Error(`${zip.entryCount} entries`);
  const entries: Entry[] = [];
  let content = 0;
  for await (const entry of zip.eachEntry()) {
    content += entry.uncompressedSize;
    if (content > MAX_CONTENT_BYTES) throw new Error('too much content');
    entries.push(entry);
  }
  const byOffset = [...entries].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader);
  for (let i = 1; i < byOffset.length; i++) {
    const before = byOffset[i - 1]!;
    // A local header is at least 30 bytes, then the name, then the data: the next entry starts past all of it.
    const end = before.relativeOffsetOfLocalHeader + 30 + before.fileNameLength + before.compressedSize;
    if (end > byOffset[i]!.relativeOffsetOfLocalHeader) throw new Error('entries share bytes');
  }
  return entries;
}

/** The `h1:` of the zip at `path`; throws when it is not a zip this reader can hash. */
export async function zipH1(path: string): Promise<string> {
  const yauzl = await import('yauzl');
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, decodeStrings: false });
  try {
    const names: Buffer[] = [];
    const contents = new Map<string, string>();
    for (const entry of await boundedEntries(zip)) {
      names.push(entry.fileNameRaw);
      contents.set(entry.fileNameRaw.toString('latin1'), await entryContentHash(zip, entry));
    }
    return dirhash1(names, (name) => contents.get(name.toString('latin1'))!);
  } finally {
    zip.close();
  }
}

/** A package's lock hashes (`h1:` and `zh:`, sorted) from its zip on disk and its hex SHA-256. */
export async function packageLockHashes(path: string, sha256: string): Promise<string[]> {
  return sortHashes([await zipH1(path), zipHash(sha256)]);
}
