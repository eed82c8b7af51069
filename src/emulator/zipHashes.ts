/**
 * The platform's own reading of an uploaded provider zip for its lock hashes (the rule is src/terraform/hashes.ts;
 * the publisher reads zips with its own code, src/release/lockHashes.ts, so that the two sides of the wire never
 * share a reader whose bug would agree with itself). Plain and whole, as a server may afford: yauzl opens the zip
 * with raw names, each entry's content is streamed through SHA-256 (yauzl inflates and checks the CRC), a name
 * ending in "/" is a folder with empty content, and a repeated name takes the content of its last entry, as Go's
 * archive/zip `Open` by name does.
 */
import { createHash } from 'node:crypto';
import type { Entry, ZipFile } from 'yauzl';
import { dirhash1, sortHashes, zipHash } from '../terraform/hashes.js';

/** The SHA-256 (hex) of one entry's content, streamed. */
async function entryContentHash(zip: ZipFile, entry: Entry): Promise<string> {
  const hash = createHash('sha256');
  if (entry.fileNameRaw.at(-1) === 0x2f) return hash.digest('hex');
  for await (const chunk of await zip.openReadStreamPromise(entry)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The `h1:` of the zip at `path`; throws when it is not a zip this reader can hash. */
export async function zipH1(path: string): Promise<string> {
  const yauzl = await import('yauzl');
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, decodeStrings: false });
  try {
    const names: Buffer[] = [];
    const contents = new Map<string, string>();
    for await (const entry of zip.eachEntry()) {
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
