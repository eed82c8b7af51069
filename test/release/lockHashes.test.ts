/**
 * The lock hashes of a platform package. `h1:` is Go's dirhash `Hash1` over the files inside the zip, as
 * `dirhash.HashZip` computes it (golang/mod: sumdb/dirhash/hash.go) and Terraform records it
 * (hashicorp/terraform: internal/getproviders/hash.go, `PackageHashV1` → `dirhash.HashZip(path, dirhash.Hash1)`):
 *
 *     h := sha256.New(); sort.Strings(files)
 *     for each file: fmt.Fprintf(h, "%x  %s\n", sha256(content), file)
 *     return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
 *
 * The expectations below come from an implementation of that text written here, reading the zip by hand
 * (end record → central directory → local header → inflate), sharing nothing with src/ (which reads zips with
 * yauzl), and from literal values Go and Terraform published (three, reproduced from their exact bytes).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EntryReadError, HashingSession } from '../../src/release/hashing/hashing.js';
import { FileChangedError } from '../../src/verifiedFiles.js';
import {
  PackageHashError,
  hash1FromEntries,
  planZipHash,
  zipHash1,
} from '../../src/release/hashing/lockHashes.js';
import { sortHashes, zipHash } from '../../src/terraform/hashes.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURE_H1, FIXTURES, PLATFORMS, makeZip, zipName } from './helpers.js';

/** The hashing session the tests hash in (its chunk digests prove the second reads). */
const session = new HashingSession();

/** The documented algorithm over (name, content) pairs; names compared as bytes, as Go's sort.Strings does. */
function hash1(files: { name: Buffer; content: Buffer }[]): string {
  const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
  const sorted = [...files].sort((a, b) => Buffer.compare(a.name, b.name));
  let summary = '';
  for (const f of sorted) summary += `${sha(f.content)}  ${f.name.toString('latin1')}\n`;
  return `h1:${createHash('sha256').update(Buffer.from(summary, 'latin1')).digest('base64')}`;
}

/** Reads every entry of a zip through its central directory, by hand (no zip library). */
function readZipByHand(zip: Buffer): { name: Buffer; content: Buffer }[] {
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error('no end of central directory record');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const files: { name: Buffer; content: Buffer }[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('bad central directory entry');
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength);
    const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(dataStart, dataStart + compressed);
    files.push({ name: Buffer.from(name), content: method === 8 ? inflateRawSync(raw) : Buffer.from(raw) });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}

function writeZip(name: string, zip: Buffer): string {
  const file = path.join(tempDir('lockhash-'), name);
  fs.writeFileSync(file, zip);
  return file;
}

describe('h1: of a zip', () => {
  it.each(PLATFORMS)('the fixture %s zip hashes as the documented algorithm says', async (platform) => {
    const file = path.join(FIXTURES, 'release', zipName(platform));
    const expected = hash1(readZipByHand(fs.readFileSync(file)));
    expect(expected).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
    expect(await zipHash1(file, zipName(platform))).toBe(expected);
    expect(expected).toBe(FIXTURE_H1[platform]);
  });

  it("follows Go's dirhash test (TestHash1: files xyz and abc holding `data for <name>`, sorted by name)", async () => {
    // golang/mod: sumdb/dirhash/hash_test.go, TestHash1: want = "h1:" + base64(sha256(
    //   fmt.Sprintf("%x  %s\n%x  %s\n", h("data for abc"), "abc", h("data for xyz"), "xyz")))
    const h = (s: string) => createHash('sha256').update(s).digest('hex');
    const want = `h1:${createHash('sha256')
      .update(`${h('data for abc')}  abc\n${h('data for xyz')}  xyz\n`)
      .digest('base64')}`;
    const file = writeZip(
      'xyz-abc.zip',
      makeZip([
        { name: 'xyz', data: 'data for xyz' },
        { name: 'abc', data: 'data for abc', deflate: true },
      ]),
    );
    expect(await zipHash1(file, 'xyz-abc.zip')).toBe(want);
  });

  // Literal values published by Terraform and Go, each reproduced from the exact bytes it was computed from.
  it.each([
    {
      // hashicorp/terraform: internal/providercache/cached_provider_test.go (TestCachedProviderHash) and
      // internal/getproviders/package_authentication_test.go ("Known-good HashV1 result for this directory"): the
      // placeholder executable of testdata/…/hashicorp/null/2.0.0/linux_amd64, 85 bytes with its newline.
      source: 'Terraform, hashicorp/null 2.0.0 placeholder',
      name: 'terraform-provider-null',
      content: '# This is just a placeholder file for discovery testing, not a real provider plugin.\n',
      h1: 'h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=',
    },
    {
      // hashicorp/terraform: internal/providercache/installer_test.go records this h1: in a lock file
      // (provider "example.com/foo/beep" 2.0.0) for testdata/beep-provider/terraform-provider-beep, 132 bytes.
      source: 'Terraform, a lock file in installer_test.go',
      name: 'terraform-provider-beep',
      content:
        "This is not a real provider executable. It's just here to give the installer\nsomething to copy in some of our installer test cases.\n",
      h1: 'h1:2y06Ykj0FRneZfGCTxI9wRTori8iB7ZL5kQ6YyEnh84=',
    },
    {
      // go.sum, in many public modules: `github.com/google/go-cmp v0.5.9/go.mod h1:17dUlk…`, dirhash Hash1 over the
      // one file go.mod of google/go-cmp v0.5.9.
      source: 'Go, the go.sum line of github.com/google/go-cmp v0.5.9/go.mod',
      name: 'go.mod',
      content: 'module github.com/google/go-cmp\n\ngo 1.13\n',
      h1: 'h1:17dUlkBOakJ0+DkrSSNjCkIjxS6bF9zb3elmeNGIjoY=',
    },
  ])('reproduces the published value: $source', async ({ name, content, h1, source }) => {
    const stored = writeZip('stored.zip', makeZip([{ name, data: content }]));
    const deflated = writeZip('deflated.zip', makeZip([{ name, data: content, deflate: true }]));
    expect(await zipHash1(stored, source)).toBe(h1);
    expect(await zipHash1(deflated, source)).toBe(h1);
  });

  it('gives another value when the executable is named .exe (as TestCachedProviderHash says of windows_amd64)', async () => {
    const content = '# This is just a placeholder file for discovery testing, not a real provider plugin.\n';
    const file = writeZip('exe.zip', makeZip([{ name: 'terraform-provider-null.exe', data: content }]));
    expect(await zipHash1(file, 'exe.zip')).not.toBe('h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=');
  });

  it('includes folder entries (as empty files, the way Go opens them) and sorts names as bytes', async () => {
    const members = [
      { name: 'terraform-provider-x_v1.0.0', data: 'binary', deflate: true },
      { name: 'docs/', data: '' },
      { name: 'docs/README.md', data: '# readme\n' },
      { name: 'LICENSE', data: 'MPL-2.0\n' },
      { name: 'Zebra', data: 'z' },
      { name: 'é-accent', data: 'e' },
    ];
    const zip = makeZip(members);
    const file = writeZip('many.zip', zip);
    const expected = hash1(readZipByHand(zip));
    expect(readZipByHand(zip).map((f) => f.name.toString())).toContain('docs/');
    expect(await zipHash1(file, 'many.zip')).toBe(expected);
    // Not the hash of the binary alone: every entry counts.
    expect(expected).not.toBe(hash1(readZipByHand(makeZip([members[0]!]))));
  });

  it("refuses stored content that does not match the entry's CRC-32, as Go's archive/zip does", async () => {
    const zip = makeZip([{ name: 'terraform-provider-x', data: 'original content' }]);
    zip[50] = 'O'.charCodeAt(0); // the first byte of the stored data: 'o' → 'O'
    const file = writeZip('crc.zip', zip);
    const error = await zipHash1(file, 'crc.zip').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageHashError);
    expect((error as Error).message).toBe(
      'crc.zip: the h1: lock hash cannot be computed: entry "terraform-provider-x" cannot be read (its content does not match its CRC-32)',
    );
  });

  // Go's archive/zip and dirhash on the odd shapes (golang/mod: sumdb/dirhash/hash.go HashZip builds a map from
  // name to file in central-directory order; golang/go: src/archive/zip/reader.go checksumReader and File.Open).
  it('takes, for a repeated name, the content of the last entry in the central directory (not in the data)', async () => {
    const zip = makeZip([
      { name: 'a', data: 'first' },
      { name: 'a', data: 'second' },
    ]);
    // Swap the two central directory records (47 bytes each): the directory now lists "second" first.
    const cd = zip.readUInt32LE(zip.length - 22 + 16);
    const one = Buffer.from(zip.subarray(cd, cd + 47));
    zip.copy(zip, cd, cd + 47, cd + 94);
    one.copy(zip, cd + 47);
    const file = writeZip('repeated.zip', zip);
    const h = (text: string) => createHash('sha256').update(text).digest('hex');
    const want = `h1:${createHash('sha256')
      .update(`${h('first')}  a\n${h('first')}  a\n`)
      .digest('base64')}`;
    expect(await zipHash1(file, 'repeated.zip')).toBe(want);
  });

  it('accepts a CRC-32 of 0 in the directory as "not set" (no data descriptor), as Go does', async () => {
    const zip = makeZip([{ name: 'terraform-provider-x', data: 'hello' }]);
    zip.writeUInt32LE(0, 14); // local header
    const cd = zip.readUInt32LE(zip.length - 22 + 16);
    zip.writeUInt32LE(0, cd + 16); // central directory
    const file = writeZip('crc0.zip', zip);
    expect(await zipHash1(file, 'crc0.zip')).toBe(hash1(readZipByHand(zip)));
  });

  it("refuses a deflate entry with no data at all (Go's flate reader fails on it)", async () => {
    const zip = makeZip([{ name: 'terraform-provider-x', data: '' }]);
    zip.writeUInt16LE(8, 8); // local header: method deflate
    const cd = zip.readUInt32LE(zip.length - 22 + 16);
    zip.writeUInt16LE(8, cd + 10);
    const file = writeZip('empty-deflate.zip', zip);
    const error = await zipHash1(file, 'empty-deflate.zip').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageHashError);
    expect((error as Error).message).toMatch(
      /entry "terraform-provider-x" cannot be read \(its deflate data is damaged/,
    );
  });

  it('refuses a folder entry that declares content (Go opens it as an error)', async () => {
    const zip = makeZip([{ name: 'docs/', data: '' }]);
    const cd = zip.readUInt32LE(zip.length - 22 + 16);
    zip.writeUInt32LE(4, cd + 24); // uncompressed size
    zip.writeUInt32LE(4, cd + 20); // compressed size, so the stored sizes agree
    const file = writeZip('folder.zip', zip);
    const error = await zipHash1(file, 'folder.zip').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageHashError);
    expect((error as Error).message).toMatch(/"docs\/"/);
  });

  it('refuses an entry whose name holds a newline, as dirhash does', async () => {
    const file = writeZip('newline.zip', makeZip([{ name: 'bad\nname', data: 'x' }]));
    const error = await zipHash1(file, 'newline.zip').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageHashError);
    expect((error as Error).message).toBe(
      'newline.zip: the h1: lock hash cannot be computed: an entry name holds a newline, which dirhash refuses',
    );
  });

  it('names the file when it is not a zip', async () => {
    const file = writeZip('not-a.zip', Buffer.from('hello'));
    const error = await zipHash1(file, 'not-a.zip').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageHashError);
    expect((error as Error).message).toMatch(
      /^not-a\.zip: the h1: lock hash cannot be computed: it is not a readable zip archive/,
    );
  });

  it('names the entry when its data is damaged', async () => {
    const zip = makeZip([{ name: 'terraform-provider-x', data: 'a'.repeat(4000), deflate: true }]);
    zip[52] = zip[52]! ^ 0xff; // inside the deflated data (local header 30 + name 20 bytes before it)
    zip[53] = zip[53]! ^ 0xff;
    const file = writeZip('damaged.zip', zip);
    const error = await zipHash1(file, 'damaged.zip').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageHashError);
    expect((error as Error).message).toMatch(/entry "terraform-provider-x" cannot be read/);
  });
});

describe('entries hashed in the same read as the file', () => {
  const members = [
    { name: 'terraform-provider-x_v1.0.0', data: Buffer.alloc(3 * 1024 * 1024 + 5, 'bin'), deflate: true },
    { name: 'LICENSE', data: 'MPL-2.0\n' },
    { name: 'README.md', data: Buffer.alloc(2 * 1024 * 1024, 'r'), deflate: false },
  ];

  /** Two copies of the members' zip hashed with their plan, at once. */
  async function hashTwoCopies(name: string, storedEntriesLater = false) {
    const zip = makeZip(members);
    const files = [writeZip(name, zip), writeZip(name, zip)];
    const planned = await planZipHash(files[0]!, name);
    const digests = await session.hashFiles(files, {
      plans: new Map(files.map((file) => [file, planned.plan])),
      storedEntriesLater,
    });
    return { zip, files, planned, plan: planned.plan, digests };
  }

  it('gives the documented h1: and the file SHA-256 (entries across 1 MiB reads)', async () => {
    const { zip, files, planned, digests } = await hashTwoCopies('copies.zip');
    for (const file of files) {
      const digest = digests.get(file)!;
      expect(digest.sha256).toBe(createHash('sha256').update(zip).digest('hex'));
      expect(hash1FromEntries('copies.zip', planned, digest.entries!)).toBe(hash1(readZipByHand(zip)));
    }
  });

  it('leaves the stored entries for later when asked, and gives the same h1: once they are hashed', async () => {
    const { zip, files, planned, plan, digests } = await hashTwoCopies('later.zip', true);
    const file = files[1]!;
    const digest = digests.get(file)!;
    expect(digest.sha256).toBe(createHash('sha256').update(zip).digest('hex'));
    // The deflated entry is hashed in the first read (it is inflated there anyway), and so is the small stored
    // one (not worth a second read); the large stored one is not.
    expect(plan.map((entry, i) => [entry.method, digests.get(files[0]!)!.entries![i] === ''])).toEqual([
      [8, false],
      [0, false],
      [0, true],
    ]);
    expect(digest.entries).toEqual(digests.get(files[0]!)!.entries);
    const later = await session.hashStoredEntries(file, 'later.zip', plan, digest);
    // Only what the first read left: the large stored entry.
    expect(later.map((hash) => hash === '')).toEqual([true, true, false]);
    const whole = digest.entries!.map((hash, i) => hash || later[i]!);
    expect(hash1FromEntries('later.zip', planned, whole)).toBe(hash1(readZipByHand(zip)));
  });

  it('still refuses a stored entry whose CRC-32 does not match in the first read when its SHA-256 is left for later', async () => {
    // Over 64 KiB: its SHA-256 is left for later (a smaller entry's is made in the first read anyway).
    const content = Buffer.concat([Buffer.from('original content'), Buffer.alloc(100 * 1024, 'x')]);
    const zip = makeZip([{ name: 'terraform-provider-x', data: content }]);
    zip[50] = 'O'.charCodeAt(0);
    const file = writeZip('crc-later.zip', zip);
    const { plan } = await planZipHash(file, 'crc-later.zip');
    const error = await session
      .hashFiles([file], { plans: new Map([[file, plan]]), storedEntriesLater: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EntryReadError);
    expect((error as EntryReadError).message).toBe('its content does not match its CRC-32');
  });

  it.each([
    [
      'one byte of a stored entry changed (same size)',
      (zip: Buffer) => Buffer.from(zip).fill(0x41, zip.indexOf('MPL-2.0'), zip.indexOf('MPL-2.0') + 1),
      'its bytes are not the ones verified any more',
    ],
    [
      'grown by a byte',
      (zip: Buffer) => Buffer.concat([zip, Buffer.from([0])]),
      `it now has more than SIZE bytes`,
    ],
    ['cut short', (zip: Buffer) => zip.subarray(0, zip.length - 1), `it now has SIZE-1 bytes, not SIZE`],
  ])(
    'refuses to hash the stored entries of a file that changed since its first read: %s',
    async (_, change, how) => {
      const zip = makeZip(members);
      const file = writeZip('changed.zip', zip);
      const { plan } = await planZipHash(file, 'changed.zip');
      const digest = (
        await session.hashFiles([file], { plans: new Map([[file, plan]]), storedEntriesLater: true })
      ).get(file)!;
      fs.writeFileSync(file, change(zip));
      const error = await session
        .hashStoredEntries(file, 'changed.zip', plan, digest)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FileChangedError);
      const size = String(zip.length);
      const message = how.replace('SIZE-1', String(zip.length - 1)).replaceAll('SIZE', size);
      expect((error as Error).message).toBe(`changed.zip changed since it was verified: ${message}`);
      expect((error as FileChangedError).hint).toMatch(/lock hashes could not be read from it again/);
      // Unchanged again: hashed.
      fs.writeFileSync(file, zip);
      expect((await session.hashStoredEntries(file, 'changed.zip', plan, digest)).map(Boolean)).toEqual([
        false,
        false,
        true,
      ]);
    },
  );

  it('checks a file this process hashed no chunk digests of by its SHA-256 instead', async () => {
    const zip = makeZip(members);
    const file = writeZip('unsealed.zip', zip);
    const { plan } = await planZipHash(file, 'unsealed.zip');
    const sha256 = createHash('sha256').update(zip).digest('hex');
    const stored = await session.hashStoredEntries(file, 'unsealed.zip', plan, { sha256, bytes: zip.length });
    expect(stored).toEqual(['', '', createHash('sha256').update(members[2]!.data).digest('hex')]);
    const other = { sha256: 'f'.repeat(64), bytes: zip.length };
    await expect(session.hashStoredEntries(file, 'unsealed.zip', plan, other)).rejects.toThrow(
      'unsealed.zip changed since it was verified: its bytes are not the ones verified any more',
    );
  });

  it('hashes a deflated entry of many chunks without piling up listeners (no process warning)', async () => {
    // Incompressible, so the deflated data spans more than ten 1 MiB reads (each one a wait on the inflater).
    const content = randomBytes(14 * 1024 * 1024);
    const zip = makeZip([{ name: 'terraform-provider-x', data: content, deflate: true }]);
    const file = writeZip('large.zip', zip);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      expect(await zipHash1(file, 'large.zip')).toBe(hash1(readZipByHand(zip)));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.message)).toEqual([]);
  });

  it('refuses entries that share bytes (a zip-bomb shape) before reading them', async () => {
    const zip = makeZip([
      { name: 'a', data: 'same bytes' },
      { name: 'b', data: 'same bytes' },
    ]);
    // Point the second central directory record at the first entry's local header.
    const cd = zip.readUInt32LE(zip.length - 22 + 16);
    zip.writeUInt32LE(0, cd + 46 + 1 + 42);
    const file = writeZip('overlap.zip', zip);
    const error = await planZipHash(file, 'overlap.zip').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageHashError);
    expect((error as Error).message).toBe(
      'overlap.zip: the h1: lock hash cannot be computed: entries "a" and "b" share bytes (overlapping entries are a zip-bomb shape)',
    );
  });
});

describe('zh: and the order of hashes', () => {
  it('zh: is the hex SHA-256 of the zip, lower case', () => {
    expect(zipHash('ABCDEF01')).toBe('zh:abcdef01');
  });

  it('sorts as plain strings (every h1: before every zh:) and drops repeats', () => {
    expect(sortHashes(['zh:b', 'h1:Z', 'zh:a', 'h1:A', 'zh:a'])).toEqual(['h1:A', 'h1:Z', 'zh:a', 'zh:b']);
  });
});
