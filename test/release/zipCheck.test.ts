import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as yauzl from 'yauzl';
import { VerificationError } from '../../src/errors.js';
import { MAX_ZIP_ENTRIES, checkZip } from '../../src/release/zipCheck.js';
import { FIXTURES, R, makeZip, zipName, type ZipMember } from './helpers.js';
import { tempRoot } from '../helpers/tmp.js';

const EXE = 'terraform-provider-example_v1.2.3';

async function check(members: ZipMember[] | Buffer, os = 'linux') {
  const file = path.join(tempRoot(), zipName(`${os}_amd64`));
  fs.writeFileSync(file, Buffer.isBuffer(members) ? members : makeZip(members));
  return checkZip(file, path.basename(file), { name: 'example', os });
}

async function failure(members: ZipMember[] | Buffer, os = 'linux'): Promise<VerificationError> {
  const error = await check(members, os).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(VerificationError);
  expect((error as Error).message).toContain(zipName(`${os}_amd64`));
  expect((error as VerificationError).hint).toBeTruthy();
  return error as VerificationError;
}

describe('checkZip', () => {
  it('accepts the fixture archives (gpg/zip-made, unix modes)', async () => {
    for (const platform of ['linux_amd64', 'windows_amd64']) {
      const file = path.join(FIXTURES, 'release', `${R}_${platform}.zip`);
      const result = await checkZip(file, path.basename(file), {
        name: 'example',
        os: platform.split('_')[0]!,
      });
      expect(result.executable).toMatch(/^terraform-provider-example_v1\.2\.3(\.exe)?$/);
      expect(result.warnings).toEqual([]);
    }
  });

  it('accepts deflated members, extra files and a DOS entry without unix mode', async () => {
    expect(
      (
        await check([
          { name: 'README.md', data: 'hi' },
          { name: EXE, data: 'x'.repeat(5000), deflate: true },
        ])
      ).executable,
    ).toBe(EXE);
    expect((await check([{ name: EXE, data: 'x', mode: null }])).executable).toBe(EXE);
  });

  it('needs no executable bit on windows, but warns without .exe', async () => {
    expect((await check([{ name: `${EXE}.exe`, data: 'x', mode: 0o644 }], 'windows')).warnings).toEqual([]);
    expect((await check([{ name: EXE, data: 'x', mode: null }], 'windows')).warnings[0]).toContain(
      'no .exe extension',
    );
  });

  it.each([
    [
      'not a zip',
      Buffer.from('this is not a zip archive at all, just text'),
      'is not a readable zip archive',
    ],
    ['empty zip', makeZip([]), 'is an empty zip archive'],
    [
      'no executable',
      [{ name: 'README.md', data: 'hi' }],
      'holds no executable named terraform-provider-example* (found: README.md)',
    ],
    [
      'wrong name',
      [{ name: 'terraform-provider-other_v1.2.3', data: 'x' }],
      'holds no executable named terraform-provider-example*',
    ],
    ['in a folder', [{ name: `bin/${EXE}`, data: 'x' }], 'in a folder'],
    ['not executable', [{ name: EXE, data: 'x', mode: 0o644 }], 'is not executable (mode 0644)'],
  ] as [string, ZipMember[] | Buffer, string][])('refuses %s', async (_, members, words) => {
    expect((await failure(members)).message).toContain(words);
  });

  // Found by test/reliability (bad input corpus, "a zip whose only entry has a 60 000-character name").
  it('quotes at most 80 characters of each entry name it lists', async () => {
    const error = await failure([{ name: 'N'.repeat(60_000), data: 'x' }]);
    expect(error.message).toContain(`(found: ${'N'.repeat(80)}… (60000 characters))`);
    expect(error.message.length).toBeLessThan(400);
  });

  it('refuses a truncated archive', async () => {
    const good = makeZip([{ name: EXE, data: 'x'.repeat(100) }]);
    const error = await failure(good.subarray(0, good.length - 30));
    expect(error.message).toMatch(/not a readable zip|damaged/);
  });
});

// A provider zip holds a handful of entries; one with hundreds of thousands made the check walk (and keep)
// every one: 250 000 entries took over 50 s. The walk stops at the executable, and a zip declaring more entries
// than the cap is refused from its end record, before any entry is read. Counted, not timed.
describe('checkZip on zips with many entries', () => {
  const yauzlModule = yauzl as unknown as { ZipFile: { prototype: { readEntry: () => void } } };
  let entriesRead = 0;
  beforeAll(() => {
    const original = yauzlModule.ZipFile.prototype.readEntry;
    vi.spyOn(yauzlModule.ZipFile.prototype, 'readEntry').mockImplementation(function (this: unknown) {
      entriesRead++;
      original.call(this);
    });
  });
  afterAll(() => vi.restoreAllMocks());
  beforeEach(() => {
    entriesRead = 0;
  });

  const filler = (n: number): ZipMember[] =>
    Array.from({ length: n }, (_, i) => ({ name: `doc/${i}.txt`, data: '', mode: 0o644 }));

  it('stops at the executable: one entry read when it comes first', async () => {
    expect((await check([{ name: EXE, data: 'x' }, ...filler(MAX_ZIP_ENTRIES - 1)])).executable).toBe(EXE);
    expect(entriesRead).toBe(1);
  });

  it('reads up to the cap when the executable comes last', async () => {
    expect((await check([...filler(MAX_ZIP_ENTRIES - 1), { name: EXE, data: 'x' }])).executable).toBe(EXE);
    expect(entriesRead).toBe(MAX_ZIP_ENTRIES);
  });

  it.each([
    ['last', [...filler(20_000), { name: EXE, data: 'x' }]],
    ['absent', filler(20_001)],
  ] as [string, ZipMember[]][])(
    'refuses 20 001 entries with the executable %s, reading none of them',
    async (_, members) => {
      const error = await failure(members);
      expect(error.message).toContain(
        `holds 20001 entries; a provider archive holds a handful (the provider binary, perhaps a license and a readme), and at most ${MAX_ZIP_ENTRIES} are read`,
      );
      expect(error.details).toMatchObject({ entries: 20_001, limit: MAX_ZIP_ENTRIES });
      expect(entriesRead).toBe(0);
    },
  );
});
