/**
 * The emulator's own reading of an uploaded zip for its lock hashes (src/emulator/zipHashes.ts): the fixture
 * release's zips give the `h1:` Terraform computes for them (taken from `terraform providers lock`, recorded in
 * test/release/helpers.ts), and an upload is anyone's bytes, so hostile shapes are refused rather than read:
 * entries that share bytes (the overlap zip bomb), more entries than a provider holds, a folder with content.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageLockHashes, zipH1 } from '../../src/emulator/zipHashes.js';
import { FIXTURE_H1, FIXTURES, PLATFORMS, makeZip, zipName } from '../release/helpers.js';
import { tempDir } from '../helpers/tmp.js';

function written(name: string, zip: Buffer): string {
  const file = path.join(tempDir('zip'), name);
  fs.writeFileSync(file, zip);
  return file;
}

describe("the emulator's h1: of an uploaded zip", () => {
  it.each(PLATFORMS)('%s: the h1: Terraform computes', async (platform) => {
    expect(await zipH1(path.join(FIXTURES, 'release', zipName(platform)))).toBe(FIXTURE_H1[platform]);
  });

  it('a package lists its h1: and zh:, sorted', async () => {
    const file = path.join(FIXTURES, 'release', zipName('linux_amd64'));
    expect(await packageLockHashes(file, 'ABC')).toEqual([FIXTURE_H1.linux_amd64, 'zh:abc']);
  });

  it('refuses entries that share bytes, before inflating them', async () => {
    const zip = makeZip([
      { name: 'a', data: 'same bytes', deflate: true },
      { name: 'b', data: 'same bytes', deflate: true },
    ]);
    // Point the second central directory record at the first entry's local header.
    const cd = zip.readUInt32LE(zip.length - 22 + 16);
    zip.writeUInt32LE(0, cd + 46 + 1 + 42);
    await expect(zipH1(written('overlap.zip', zip))).rejects.toThrow('entries share bytes');
  });

  it('refuses more entries than a provider holds', async () => {
    const members = Array.from({ length: 1001 }, (_, i) => ({ name: `f${i}`, data: '' }));
    await expect(zipH1(written('many.zip', makeZip(members)))).rejects.toThrow('1001 entries');
  });

  it('refuses a folder entry with content, as Go cannot open one', async () => {
    const zip = makeZip([{ name: 'dir/', data: 'not empty' }]);
    await expect(zipH1(written('folder.zip', zip))).rejects.toThrow('a folder entry holds content');
  });
});
