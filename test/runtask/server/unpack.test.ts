/**
 * Unpacking a configuration version: a good archive lands in the folder; hostile ones (built here as raw tar
 * headers: traversal, absolute paths, links, devices, FIFOs, too many entries, a bomb) are refused naming the
 * entry, and nothing is written, inside the folder or out of it.
 */
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32, createGunzip, deflateRawSync, gunzipSync, gzipSync } from 'node:zlib';
import { Header, Pack, ReadEntry } from 'tar';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_UNPACK_LIMITS,
  UnpackError,
  unpackConfiguration,
  type UnpackLimits,
} from '../../../src/runtask/server/check/unpack.js';
import { linkLeavingFolder } from '../../../src/runtask/server/check/unpackTree.js';
import { defaultConfigurationVersion, tarGz as sendTarGz } from '../../../src/runtask/send/defaults.js';
import { tempDir } from '../../helpers/tmp.js';

interface RawEntry {
  name: string;
  /** The ustar type flag: '0' file, '1' hard link, '2' symbolic link, '3' character device, '5' folder, '6' FIFO. */
  type?: string;
  content?: Buffer;
  linkname?: string;
  /** The mode written in the header (default 0644). */
  mode?: number;
  /** The size written in the header, when it is not the content's (a bomb declares more than it holds). */
  declaredSize?: number;
}

/** One ustar header block, written byte by byte, whatever it claims. */
function header(entry: RawEntry): Buffer {
  const block = Buffer.alloc(512);
  const put = (offset: number, length: number, text: string): void => {
    block.write(text, offset, length, 'ascii');
  };
  const octal = (value: number, length: number): string => value.toString(8).padStart(length - 1, '0') + '\0';
  put(0, 100, entry.name);
  put(100, 8, octal(entry.mode ?? 0o644, 8));
  put(108, 8, octal(0, 8));
  put(116, 8, octal(0, 8));
  put(124, 12, octal(entry.declaredSize ?? entry.content?.length ?? 0, 12));
  put(136, 12, octal(1_700_000_000, 12));
  put(148, 8, '        ');
  put(156, 1, entry.type ?? '0');
  put(157, 100, entry.linkname ?? '');
  put(257, 6, 'ustar\0');
  put(263, 2, '00');
  let sum = 0;
  for (const byte of block) sum += byte;
  put(148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
  return block;
}

/** A .tar.gz of raw entries; a bomb's body is zeros up to its declared size (which gzip shrinks to little). */
function tarGz(entries: RawEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const size = entry.declaredSize ?? entry.content?.length ?? 0;
    const body = Buffer.alloc(Math.ceil(size / 512) * 512);
    entry.content?.copy(body);
    blocks.push(header(entry), body);
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** An entry as go-slug writes it (archive/tar, FormatUnknown: ustar here). */
interface PackedEntry {
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink';
  mode: number;
  content?: Buffer;
  linkpath?: string;
}

/** A .tar.gz as HCP Terraform's packer writes a folder, built with node-tar's own header writer. */
async function platformPacked(entries: PackedEntry[]): Promise<Buffer> {
  const pack = new Pack({ gzip: true });
  for (const entry of entries) {
    const header = new Header({
      path: entry.path,
      type: entry.type,
      mode: entry.mode,
      size: entry.content?.length ?? 0,
      mtime: new Date(1_700_000_000_000),
      uid: 0,
      gid: 0,
      uname: '',
      gname: '',
      ...(entry.linkpath === undefined ? {} : { linkpath: entry.linkpath }),
    });
    const read = new ReadEntry(header);
    read.end(entry.content ?? Buffer.alloc(0));
    pack.write(read);
  }
  pack.end();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

let root: string;
let folder: string;
let archive: string;

beforeEach(() => {
  // The folder sits two levels down, so that `../x` and `../../x` would land in folders this test watches.
  root = tempDir('unpack');
  folder = join(root, 'job', 'configuration');
  mkdirSync(folder, { recursive: true });
  archive = join(root, 'cv.tar.gz');
});

/** Every path under the test's root, but the archive itself. */
function written(): string[] {
  return (readdirSync(root, { recursive: true }) as string[]).filter((p) => p !== 'cv.tar.gz').sort();
}

async function refused(entries: RawEntry[] | Buffer, limits?: UnpackLimits): Promise<UnpackError> {
  writeFileSync(archive, Buffer.isBuffer(entries) ? entries : tarGz(entries));
  const error = await unpackConfiguration(archive, folder, limits).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UnpackError);
  // Nothing written anywhere: not the good entries before the bad one, not the bad one outside.
  expect(written()).toEqual(['job', join('job', 'configuration')]);
  return error as UnpackError;
}

const MAIN_TF = { name: 'main.tf', content: Buffer.from('terraform {}\n') };

describe('unpacking a configuration version', () => {
  it('unpacks files and folders into the folder', async () => {
    writeFileSync(
      archive,
      tarGz([
        MAIN_TF,
        { name: 'modules/', type: '5' },
        { name: 'modules/net/main.tf', content: Buffer.from('# net\n') },
        { name: './.terraform.lock.hcl', content: Buffer.from('# lock\n') },
      ]),
    );
    await expect(unpackConfiguration(archive, folder)).resolves.toBe(4);
    expect(readFileSync(join(folder, 'main.tf'), 'utf8')).toBe('terraform {}\n');
    expect(readFileSync(join(folder, 'modules', 'net', 'main.tf'), 'utf8')).toBe('# net\n');
    expect(readFileSync(join(folder, '.terraform.lock.hcl'), 'utf8')).toBe('# lock\n');
  });

  it('unpacks what runtask send serves: its default main.tf, and files past one block with their modes', async () => {
    writeFileSync(archive, await defaultConfigurationVersion(new Date(0)));
    await expect(unpackConfiguration(archive, folder)).resolves.toBe(1);
    expect(readFileSync(join(folder, 'main.tf'), 'utf8')).toBe(
      'resource "terraform_data" "example" {\n  input = "hello"\n}\n',
    );

    rmSync(folder, { recursive: true });
    mkdirSync(folder);
    const long = Buffer.alloc(1300, 'x');
    const files = [
      { name: 'long.tf', content: long },
      { name: 'after.tf', content: Buffer.from('# after\n') },
    ];
    writeFileSync(archive, await sendTarGz(files, new Date(1_700_000_000_000)));
    await expect(unpackConfiguration(archive, folder)).resolves.toBe(2);
    expect(readFileSync(join(folder, 'long.tf')).equals(long)).toBe(true);
    expect(readFileSync(join(folder, 'after.tf'), 'utf8')).toBe('# after\n');
    expect(statSync(join(folder, 'after.tf')).mtime.getTime()).toBe(1_700_000_000_000);
  });

  it('leaves folders the job can remove, whatever mode the archive gives them', async () => {
    writeFileSync(
      archive,
      tarGz([
        { name: 'locked/', type: '5', mode: 0o555 },
        { name: 'locked/main.tf', content: Buffer.from('# locked\n'), mode: 0o444 },
      ]),
    );
    await unpackConfiguration(archive, folder);
    // The owner may write the folder (checked by mode: as root, removing would succeed whatever the mode), so
    // the job's folder can be removed after the handler by a non-root integrator.
    expect(statSync(join(folder, 'locked')).mode & 0o700).toBe(0o700);
    rmSync(folder, { recursive: true });
    expect(existsSync(folder)).toBe(false);
  });

  it('drops set-uid, set-gid and sticky bits', async () => {
    writeFileSync(
      archive,
      tarGz([
        { name: 'shared/', type: '5', mode: 0o3775 },
        { name: 'shared/run.sh', content: Buffer.from('#!/bin/sh\n'), mode: 0o4755 },
        { name: 'group.sh', content: Buffer.from('#!/bin/sh\n'), mode: 0o2755 },
      ]),
    );
    await unpackConfiguration(archive, folder);
    expect((statSync(join(folder, 'shared', 'run.sh')).mode & 0o7777).toString(8)).toBe('755');
    expect((statSync(join(folder, 'group.sh')).mode & 0o7777).toString(8)).toBe('755');
    expect(statSync(join(folder, 'shared')).mode & 0o7000).toBe(0);
  });

  it("names the entry at fault as the archive does, never the job's folder", async () => {
    const under = await refused([
      { name: 'a', content: Buffer.from('x') },
      { name: 'a/b', content: Buffer.from('y') },
    ]);
    expect(under.message).toBe('the configuration version was refused: "a/b" is inside the file "a"');
    // A failure while writing (here a folder already in the way) says the entry and the code, not the path.
    mkdirSync(join(folder, 'x', 'y'), { recursive: true });
    writeFileSync(archive, tarGz([{ name: 'x', content: Buffer.from('x') }]));
    const failed = (await unpackConfiguration(archive, folder).catch((e: unknown) => e)) as Error;
    expect(failed).toBeInstanceOf(UnpackError);
    expect(failed.message).toBe('the configuration version could not be unpacked at "x": ENOTEMPTY');
    expect(failed.message).not.toContain(root);
  });

  it('refuses a path climbing out with ..', async () => {
    const error = await refused([MAIN_TF, { name: '../x', content: Buffer.from('out') }]);
    expect(error.message).toContain('"../x" climbs out of the folder with ..');
    expect(error.entry).toBe('../x');
    const deeper = await refused([{ name: 'a/../../../x', content: Buffer.from('out') }]);
    expect(deeper.entry).toBe('a/../../../x');
  });

  it('refuses an absolute path', async () => {
    const error = await refused([MAIN_TF, { name: '/etc/x', content: Buffer.from('out') }]);
    expect(error.message).toContain('"/etc/x" is an absolute path');
  });

  it('unpacks a folder holding a link as HCP Terraform packs it: the link kept, pointing inside', async () => {
    // go-slug's Pack of `common/providers.tf`, `main.tf` and `providers.tf -> common/providers.tf`: Walk order,
    // a folder's name ending in `/`, permission bits only, owner 0, a link's mode 0777 (its lstat) and no size.
    writeFileSync(
      archive,
      await platformPacked([
        { path: 'common/', type: 'Directory', mode: 0o755 },
        {
          path: 'common/providers.tf',
          type: 'File',
          mode: 0o644,
          content: Buffer.from('provider "random" {}\n'),
        },
        { path: 'main.tf', type: 'File', mode: 0o644, content: Buffer.from('terraform {}\n') },
        { path: 'providers.tf', type: 'SymbolicLink', mode: 0o777, linkpath: 'common/providers.tf' },
        { path: 'modules/', type: 'Directory', mode: 0o755 },
        { path: 'modules/net/', type: 'Directory', mode: 0o755 },
        {
          path: 'modules/net/providers.tf',
          type: 'SymbolicLink',
          mode: 0o777,
          linkpath: '../../common/providers.tf',
        },
        { path: 'shared', type: 'SymbolicLink', mode: 0o777, linkpath: 'common' },
      ]),
    );
    await expect(unpackConfiguration(archive, folder)).resolves.toBe(8);
    expect(readlinkSync(join(folder, 'providers.tf'))).toBe('common/providers.tf');
    expect(readFileSync(join(folder, 'providers.tf'), 'utf8')).toBe('provider "random" {}\n');
    expect(readFileSync(join(folder, 'modules', 'net', 'providers.tf'), 'utf8')).toBe(
      'provider "random" {}\n',
    );
    expect(readFileSync(join(folder, 'shared', 'providers.tf'), 'utf8')).toBe('provider "random" {}\n');
  });

  it('refuses a link that leaves the folder, naming it, as go-slug refuses an external target', async () => {
    const up = await refused([
      MAIN_TF,
      { name: 'providers.tf', type: '2', linkname: '../shared/providers.tf' },
    ]);
    expect(up.message).toBe(
      'the configuration version was refused: "providers.tf" is a symbolic link to "../shared/providers.tf", which leaves the folder: only links that stay inside it are unpacked',
    );
    expect(up.entry).toBe('providers.tf');
    const deeper = await refused([{ name: 'modules/net/x.tf', type: '2', linkname: '../a/../../../x.tf' }]);
    expect(deeper.message).toContain(
      '"modules/net/x.tf" is a symbolic link to "../a/../../../x.tf", which leaves',
    );
    const absolute = await refused([{ name: 'escape', type: '2', linkname: '/etc' }, MAIN_TF]);
    expect(absolute.message).toContain(
      '"escape" is a symbolic link to "/etc", an absolute path: only links that stay inside the folder are unpacked',
    );
  });

  it('refuses entries under a link, and links through links', async () => {
    const under = await refused([
      { name: 'common/', type: '5' },
      { name: 'mods', type: '2', linkname: 'common' },
      { name: 'mods/x.tf', content: Buffer.from('# x') },
    ]);
    expect(under.message).toContain('"mods/x.tf" is inside the symbolic link "mods"');
    // The second link comes first: the check is on the whole archive, not on what came before.
    const chain = await refused([
      { name: 'b.tf', type: '2', linkname: 'a/main.tf' },
      { name: 'a', type: '2', linkname: 'common' },
      { name: 'common/main.tf', content: Buffer.from('# main') },
    ]);
    expect(chain.message).toContain(
      '"b.tf" is a symbolic link to "a/main.tf", through the symbolic link "a": links to links are not unpacked',
    );
    const twice = await refused([MAIN_TF, { name: 'main.tf', type: '2', linkname: 'common/main.tf' }]);
    expect(twice.message).toContain('"main.tf" appears twice in the archive, once as a symbolic link');
  });

  it('refuses a link whose `..` comes back through another link, as the kernel follows it', async () => {
    // On paper `l/../../../../etc` from d1/d2/d3 stays inside; the kernel follows `l` to the folder first, so
    // the `..` after it climbs from there: the link would lead to /etc.
    const deep = await refused([
      MAIN_TF,
      { name: 'd1/', type: '5' },
      { name: 'd1/d2/', type: '5' },
      { name: 'd1/d2/d3/', type: '5' },
      { name: 'd1/d2/d3/l', type: '2', linkname: '../../..' },
      { name: 'd1/d2/d3/x', type: '2', linkname: 'l/../../../../etc' },
    ]);
    expect(deep.message).toBe(
      'the configuration version was refused: "d1/d2/d3/x" is a symbolic link to "l/../../../../etc", through the symbolic link "d1/d2/d3/l": links to links are not unpacked',
    );
    expect(deep.entry).toBe('d1/d2/d3/x');
    // Two deep: `a/l -> .`, then `a/x -> l/../..` would be the job's folder, the configuration's parent.
    const shallow = await refused([
      { name: 'a/', type: '5' },
      { name: 'a/l', type: '2', linkname: '.' },
      { name: 'a/x', type: '2', linkname: 'l/../..' },
    ]);
    expect(shallow.message).toContain(
      '"a/x" is a symbolic link to "l/../..", through the symbolic link "a/l"',
    );
  });

  it('finds, once unpacked, a link the kernel resolves out of the folder (the check after extraction)', async () => {
    mkdirSync(join(folder, 'd1', 'd2', 'd3'), { recursive: true });
    writeFileSync(join(folder, 'main.tf'), 'terraform {}\n');
    symlinkSync('main.tf', join(folder, 'same.tf'));
    symlinkSync('d1/d2/missing.tf', join(folder, 'dangling.tf'));
    symlinkSync('../../..', join(folder, 'd1', 'd2', 'd3', 'l'));
    await expect(linkLeavingFolder(folder, ['same.tf', 'dangling.tf', 'd1/d2/d3/l'])).resolves.toBe(
      undefined,
    );
    // What a walk by names alone takes for `d1/d2/etc`: the kernel follows `l` first, and lands in /etc.
    symlinkSync('l/../../../../etc', join(folder, 'd1', 'd2', 'd3', 'x'));
    await expect(linkLeavingFolder(folder, ['same.tf', 'd1/d2/d3/x'])).resolves.toBe('d1/d2/d3/x');
    // Past where a target exists, a `..` could go anywhere once the missing name appears: it leaves.
    symlinkSync('d1/missing/../../..', join(folder, 'later'));
    await expect(linkLeavingFolder(folder, ['later'])).resolves.toBe('later');
    symlinkSync('loop', join(folder, 'loop'));
    await expect(linkLeavingFolder(folder, ['loop'])).resolves.toBe('loop');
  });

  it("refuses a link or file in a folder's place (`./`, `.`, `a/.`), saying nothing of the job's folder", async () => {
    // node-tar writes nothing for a link named `./` or `.` (the folder stays), and the check after extraction
    // then read the folder as a link: its error, with the job's path, went to the platform.
    const slash = await refused([MAIN_TF, { name: './', type: '2', linkname: 'sub' }]);
    expect(slash.message).toBe(
      'the configuration version was refused: "./" is a symbolic link in the place of the configuration\'s folder itself: only a folder entry may be named so',
    );
    expect(slash.entry).toBe('./');
    const dot = await refused([MAIN_TF, { name: '.', type: '2', linkname: 'sub' }]);
    expect(dot.message).toContain(
      '"." is a symbolic link in the place of the configuration\'s folder itself',
    );
    const sub = await refused([
      { name: 'sub/', type: '5' },
      { name: 'sub/.', type: '2', linkname: '.' },
    ]);
    expect(sub.message).toContain('"sub/." is a symbolic link in the place of the folder "sub"');
    // A file there would be dropped without a word: refused too.
    const file = await refused([MAIN_TF, { name: '.', content: Buffer.from('x') }]);
    expect(file.message).toContain('"." is a file in the place of the configuration\'s folder itself');
    for (const error of [slash, dot, sub, file]) expect(error.message).not.toContain(root);
    // A folder entry named so is what packers write: unpacked as ever.
    writeFileSync(archive, tarGz([{ name: './', type: '5' }, { name: './sub/.', type: '5' }, MAIN_TF]));
    await expect(unpackConfiguration(archive, folder)).resolves.toBe(3);
  });

  it('takes what is no link once unpacked (the folder itself, nothing at all) for a link that leaves', async () => {
    writeFileSync(join(folder, 'main.tf'), 'terraform {}\n');
    await expect(linkLeavingFolder(folder, ['./'])).resolves.toBe('./');
    await expect(linkLeavingFolder(folder, ['main.tf'])).resolves.toBe('main.tf');
    await expect(linkLeavingFolder(folder, ['gone.tf'])).resolves.toBe('gone.tf');
  });

  it('refuses hard links, whatever they point at', async () => {
    const hardlink = await refused([MAIN_TF, { name: 'passwd', type: '1', linkname: '/etc/passwd' }]);
    expect(hardlink.message).toContain('"passwd" is a hard link');
    const inside = await refused([MAIN_TF, { name: 'again.tf', type: '1', linkname: 'main.tf' }]);
    expect(inside.entry).toBe('again.tf');
  });

  it('refuses devices and FIFOs', async () => {
    const device = await refused([MAIN_TF, { name: 'null', type: '3' }]);
    expect(device.message).toContain('"null" is a CharacterDevice entry');
    const block = await refused([{ name: 'disk', type: '4' }]);
    expect(block.message).toContain('"disk" is a BlockDevice entry');
    const fifo = await refused([{ name: 'pipe', type: '6' }]);
    expect(fifo.message).toContain('"pipe" is a FIFO entry');
  });

  it('refuses entries of a type tar does not unpack', async () => {
    const error = await refused([MAIN_TF, { name: 'sparse', type: 'S', content: Buffer.from('x') }]);
    expect(error.message).toContain('"sparse" is');
  });

  it('refuses too many entries', async () => {
    const entries = Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.tf`, content: Buffer.from('#') }));
    const error = await refused(entries, { ...DEFAULT_UNPACK_LIMITS, maxEntries: 10 });
    expect(error.message).toContain('the archive holds more than 10 entries');
  });

  it('refuses a bomb: a small .tar.gz that unpacks past the limit, at the header declaring it', async () => {
    const bomb = tarGz([MAIN_TF, { name: 'zeros.bin', declaredSize: 120 * 1024 * 1024 }]);
    expect(bomb.length).toBeLessThan(200 * 1024);
    const error = await refused(bomb);
    expect(error.message).toContain('the archive unpacks to more than 104857600 bytes (at "zeros.bin")');
  });

  it('refuses an archive whose gzip members inflate past the cap, counting every member', async () => {
    // A good archive, then members of zeros after it: a tar reader stops at the archive's end, the cap does not.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    const bomb = Buffer.concat([tarGz([MAIN_TF]), ...Array.from({ length: 9 }, () => member)]);
    expect(bomb.length).toBeLessThan(200 * 1024);
    const error = await refused(bomb);
    expect(error.message).toBe(
      'the configuration version was refused: it inflates to more than 134217728 bytes (128 MiB), the most the integrator unpacks',
    );
    // Under the cap, what follows the archive's end is read past (GNU tar pads to 10 KiB records).
    rmSync(folder, { recursive: true });
    mkdirSync(folder);
    writeFileSync(archive, Buffer.concat([tarGz([MAIN_TF]), gzipSync(Buffer.alloc(10 * 1024))]));
    await expect(unpackConfiguration(archive, folder)).resolves.toBe(1);
  });

  it('refuses an archive compressed twice, as the platform would', async () => {
    const error = await refused(gzipSync(tarGz([MAIN_TF])));
    expect(error.message).toContain('the archive is compressed twice');
  });

  it('refuses an archive compressed twice whose first inflated byte comes alone', async () => {
    // A .tar.gz inside, its first byte (0x1f) in a gzip member of its own, then a member of the rest behind empty
    // stored blocks: Gunzip hands the inflated stream on as a chunk of 1 byte, then the rest.
    const inner = tarGz([MAIN_TF]);
    const rest = inner.subarray(1);
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc32(rest) >>> 0, 0);
    trailer.writeUInt32LE(rest.length, 4);
    const outer = Buffer.concat([
      gzipSync(inner.subarray(0, 1)),
      Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]),
      ...Array.from({ length: 20_000 }, () => Buffer.from([0, 0, 0, 0xff, 0xff])),
      deflateRawSync(rest),
      trailer,
    ]);
    expect(gunzipSync(outer)).toEqual(inner);
    writeFileSync(archive, outer);
    const sizes: number[] = [];
    for await (const chunk of createReadStream(archive).pipe(createGunzip()))
      sizes.push((chunk as Buffer).length);
    expect(sizes[0]).toBe(1);
    const error = await refused(outer);
    expect(error.message).toContain('the archive is compressed twice');
  });

  it("stops when the job's signal is aborted, before or while it reads", async () => {
    writeFileSync(archive, tarGz([MAIN_TF, { name: 'b.tf', content: Buffer.from('# b') }]));
    const before = new AbortController();
    before.abort();
    await expect(
      unpackConfiguration(archive, folder, DEFAULT_UNPACK_LIMITS, before.signal),
    ).rejects.toMatchObject({ name: 'AbortError' });
    const during = new AbortController();
    const unpacking = unpackConfiguration(archive, folder, DEFAULT_UNPACK_LIMITS, during.signal);
    during.abort();
    await expect(unpacking).rejects.toMatchObject({ name: 'AbortError' });
    expect(written()).toEqual(['job', join('job', 'configuration')]);
  });

  it('refuses what is not a .tar.gz', async () => {
    writeFileSync(archive, 'not an archive at all, just text that goes on for a while '.repeat(20));
    const error = await unpackConfiguration(archive, folder).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnpackError);
    expect((error as Error).message).toContain('is not a readable .tar.gz');
    writeFileSync(archive, gzipSync(Buffer.alloc(1024)));
    await expect(unpackConfiguration(archive, folder)).rejects.toThrow(
      'the configuration version is not a readable .tar.gz: TAR_BAD_ARCHIVE: Unrecognized archive format',
    );
    expect(written()).toEqual(['job', join('job', 'configuration')]);
  });
});
