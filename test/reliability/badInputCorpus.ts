/**
 * The bad input corpus: broken releases and flag combinations generated from the good fixture release —
 * truncations, byte flips, renames, extra and missing files, wrong signatures, odd encodings, huge lines,
 * symlinks pointing outside the folder, broken zips, bad flags. Positions and lengths come from a seeded
 * generator, so every case is the same on every run. Each case says what the error message must name.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  FIXTURES,
  MANIFEST,
  PLATFORMS,
  R,
  SIG,
  SUMS,
  editSums,
  makeZip,
  publicKeyPath,
  replaceListed,
  resign,
  signDetached,
  zipName,
} from '../release/helpers.js';
import { seeded } from './helpers.js';

/** One broken input. */
export interface BadCase {
  name: string;
  /** Mutates the copy of the release in `dist` (`outside` is a folder next to it, for symlink targets). */
  build?: (dist: string, outside: string) => unknown;
  /** Arguments after `publish <dist>`; `--key <signer>` is added unless `keyless` or the args name a key. */
  args?: string[];
  /** No --key: the key comes from the registry (a GET, never a write). */
  keyless?: boolean;
  /** Replaces the release folder argument. */
  dir?: (dist: string, outside: string) => string;
  env?: Record<string, string>;
  /** Leave the token out of the environment. */
  noToken?: boolean;
  /** The error message must contain at least one of these. */
  names: (string | RegExp)[];
  /** The exit code, when the case is precise about it (otherwise 2 or 3). */
  code?: 2 | 3;
}

const ZIPS = PLATFORMS.map(zipName);
const FILES = [SUMS, SIG, MANIFEST, ...ZIPS];
const EXE = 'terraform-provider-example_v1.2.3';
const fixture = (...parts: string[]): string => path.join(FIXTURES, ...parts);
const release = (name: string): Buffer => fs.readFileSync(fixture('release', name));
const write = (dist: string, name: string, bytes: Uint8Array | string): void =>
  fs.writeFileSync(path.join(dist, name), bytes);
const remove = (dist: string, name: string): void => fs.rmSync(path.join(dist, name), { force: true });
const sig = (file: string) => (dist: string) =>
  fs.copyFileSync(fixture('signatures', file), path.join(dist, SIG));

/** SHA256SUMS rewritten as raw bytes, then signed again so that only the bytes themselves are wrong. */
const sumsBytes = (edit: (bytes: Buffer) => Buffer) => async (dist: string) => {
  write(dist, SUMS, edit(release(SUMS)));
  await resign(dist);
};

/** A one-member zip, patched after it was built (compression method, encryption flag). */
function patchedZip(patch: (zip: Buffer, central: number) => void): Buffer {
  const zip = makeZip([{ name: EXE, data: '#!/bin/sh\necho hi\n' }]);
  const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  patch(zip, central);
  return zip;
}

/** The whole corpus, in a fixed order. */
export function badInputCorpus(): BadCase[] {
  const r = seeded(20_260_101);
  const cases: BadCase[] = [];
  const add = (c: BadCase): void => {
    cases.push(c);
  };

  // Truncations: every file cut at its start, after one byte, in the middle and one byte short.
  for (const file of FILES) {
    const size = release(file).length;
    for (const cut of [0, 1, Math.floor(size / 2), size - 1]) {
      add({
        name: `truncated ${file} to ${cut} bytes`,
        build: (d) => write(d, file, release(file).subarray(0, cut)),
        names: [file],
        code: 3,
      });
    }
  }
  // Zips truncated and listed anew (SHA256SUMS and the signature brought up to date): the zip itself is broken.
  for (const file of ZIPS) {
    const size = release(file).length;
    const cut = r.pick([0, 10, 30, Math.floor(size / 2), size - 22, size - 1]);
    add({
      name: `truncated ${file} to ${cut} bytes, listed anew`,
      build: (d) => replaceListed(d, file, release(file).subarray(0, cut)),
      names: [file],
      code: 3,
    });
  }

  // Byte flips at seeded positions (SHA256SUMS and the signature not brought up to date).
  for (const file of FILES) {
    const size = release(file).length;
    for (let i = 0; i < 3; i++) {
      const at = r.int(0, size - 1);
      const mask = 1 << r.int(0, 7);
      add({
        name: `byte ${at} of ${file} flipped (xor ${mask})`,
        build: (d) => {
          const bytes = Buffer.from(release(file));
          bytes[at] = bytes[at]! ^ mask;
          write(d, file, bytes);
        },
        names: [file],
        code: 3,
      });
    }
  }

  // Renames.
  const renames: [string, string, (string | RegExp)[], 2 | 3][] = [
    [zipName('linux_arm64'), zipName('linux_386'), [zipName('linux_386')], 3],
    [zipName('linux_arm64'), zipName('plan10_arm64'), [zipName('plan10_arm64')], 3],
    [zipName('linux_arm64'), `${R}_linux_arm64.ZIP`, [zipName('linux_arm64')], 3],
    [zipName('linux_arm64'), `${R}_linux_arm64_v8.zip`, [`${R}_linux_arm64_v8.zip`], 3],
    [zipName('darwin_amd64'), 'terraform-provider-example_1.2.4_darwin_amd64.zip', ['--version', '1.2.4'], 2],
    [zipName('darwin_amd64'), 'terraform-provider-exampel_1.2.3_darwin_amd64.zip', ['--name', 'exampel'], 2],
    [SUMS, `${R}_sha256sums`, [SUMS], 3],
    [SIG, `${SUMS}.asc`, [SIG], 3],
    [SIG, `${SUMS}.gpg`, [SIG], 3],
    [MANIFEST, `${R}_manifest.JSON`, [MANIFEST], 3],
  ];
  for (const [from, to, names, code] of renames) {
    add({
      name: `${from} renamed ${to}`,
      build: (d) => fs.renameSync(path.join(d, from), path.join(d, to)),
      names,
      code,
    });
  }
  add({
    name: 'every file renamed to version 1.2.3.4',
    build: (d) => {
      for (const f of fs.readdirSync(d).filter((x) => x.startsWith(R))) {
        fs.renameSync(path.join(d, f), path.join(d, f.replace('1.2.3', '1.2.3.4')));
      }
    },
    names: ['1.2.3.4'],
    code: 3,
  });
  add({
    name: 'every file renamed to version 01.2.3',
    build: (d) => {
      for (const f of fs.readdirSync(d).filter((x) => x.startsWith(R))) {
        fs.renameSync(path.join(d, f), path.join(d, f.replace('1.2.3', '01.2.3')));
      }
    },
    names: ['01.2.3'],
    code: 3,
  });

  // Extra files.
  add({
    name: 'an extra zip that SHA256SUMS does not list',
    build: (d) =>
      fs.copyFileSync(path.join(d, zipName('linux_amd64')), path.join(d, zipName('freebsd_amd64'))),
    names: [zipName('freebsd_amd64')],
    code: 3,
  });
  add({
    name: 'an extra zip whose name is not UTF-8',
    build: (d) =>
      fs.writeFileSync(
        Buffer.concat([Buffer.from(`${d}/${R}_linux_`), Buffer.from([0xff, 0xfe]), Buffer.from('amd64.zip')]),
        release(zipName('linux_amd64')),
      ),
    names: [/linux_\uFFFD\uFFFDamd64/],
    code: 3,
  });
  add({
    name: 'a zip renamed to a name that is not UTF-8',
    build: (d) =>
      fs.renameSync(
        Buffer.from(path.join(d, zipName('windows_amd64'))),
        Buffer.concat([
          Buffer.from(`${d}/${R}_windows_amd64`),
          Buffer.from([0xc3, 0x28]),
          Buffer.from('.zip'),
        ]),
      ),
    names: [/windows_amd64/],
    code: 3,
  });
  add({
    name: 'a release of another provider beside it',
    build: (d) =>
      fs.copyFileSync(path.join(d, SUMS), path.join(d, 'terraform-provider-other_1.2.3_SHA256SUMS')),
    names: ['--name', 'other'],
    code: 2,
  });
  add({
    name: 'SHA256SUMS listing a file that is not there',
    build: (d) => editSums(d, (lines) => [...lines, `${'ab'.repeat(32)}  ${zipName('netbsd_arm64')}`]),
    names: [zipName('netbsd_arm64')],
    code: 3,
  });

  // Missing files.
  for (const file of [...ZIPS, SUMS, SIG, MANIFEST]) {
    add({ name: `${file} missing`, build: (d) => remove(d, file), names: [file], code: 3 });
  }
  add({
    name: 'every zip missing',
    build: (d) => ZIPS.forEach((f) => remove(d, f)),
    names: [/zip/],
    code: 3,
  });
  add({
    name: 'an empty folder',
    build: (d) => fs.readdirSync(d).forEach((f) => fs.rmSync(path.join(d, f), { recursive: true })),
    names: ['No provider release found'],
    code: 2,
  });

  // Wrong signatures.
  add({ name: 'a signature by another key (--key)', build: sig('by-other.sig'), names: [SIG], code: 3 });
  add({
    name: 'a signature by another key (registry keys)',
    build: sig('by-other.sig'),
    keyless: true,
    names: [SIG],
    code: 3,
  });
  add({
    name: 'a signature by an expired key',
    build: sig('by-expired.sig'),
    args: ['--key', publicKeyPath('expired')],
    names: [SIG],
    code: 3,
  });
  add({
    name: 'a signature by an ECC key',
    build: sig('by-ecc.sig'),
    args: ['--key', publicKeyPath('ecc')],
    names: [SIG],
    code: 3,
  });
  add({ name: 'a signature over other bytes', build: sig('over-other-bytes.sig'), names: [SIG], code: 3 });
  add({ name: 'an armored signature', build: sig('armored.sig.asc'), names: [SIG], code: 3 });
  add({ name: 'an empty signature', build: (d) => write(d, SIG, ''), names: [SIG], code: 3 });
  add({
    name: 'a signature of random bytes with a packet tag',
    build: (d) => {
      const rr = seeded(7);
      write(d, SIG, Buffer.from([0x89, ...Array.from({ length: 300 }, () => rr.int(0, 255))]));
    },
    names: [SIG],
    code: 3,
  });
  add({
    name: 'a signature over the manifest instead of SHA256SUMS',
    build: async (d) =>
      write(
        d,
        SIG,
        await signDetached(release(MANIFEST), fs.readFileSync(fixture('keys', 'signer.sec.asc'), 'utf8')),
      ),
    names: [SIG],
    code: 3,
  });
  add({
    name: 'a public key block where the signature belongs',
    build: (d) => write(d, SIG, fs.readFileSync(publicKeyPath('signer'))),
    names: [SIG],
    code: 3,
  });
  add({
    name: 'a public key block where the signature belongs, with --dearmor-signature',
    build: (d) => write(d, SIG, fs.readFileSync(publicKeyPath('signer'))),
    args: ['--dearmor-signature'],
    names: [SIG],
    code: 3,
  });
  add({
    name: 'the good signature checked with another key',
    args: ['--key', publicKeyPath('other')],
    names: [SIG],
    code: 3,
  });
  add({
    name: 'SHA256SUMS signed by another key, listed keys from the registry',
    build: (d) => resign(d, 'other'),
    keyless: true,
    names: [SIG],
    code: 3,
  });

  // Odd encodings of SHA256SUMS (signed again: only the encoding is wrong).
  const text = (edit: (s: string) => string) =>
    sumsBytes((b) => Buffer.from(edit(b.toString('utf8')), 'utf8'));
  add({
    name: 'SHA256SUMS with a UTF-8 byte order mark',
    build: sumsBytes((b) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b])),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'SHA256SUMS with CRLF line endings',
    build: text((s) => s.replace(/\n/g, '\r\n')),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'SHA256SUMS in UTF-16LE',
    build: sumsBytes((b) => Buffer.from(b.toString('utf8'), 'utf16le')),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'SHA256SUMS in UTF-16LE with a byte order mark',
    build: sumsBytes((b) =>
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(b.toString('utf8'), 'utf16le')]),
    ),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'SHA256SUMS in UTF-16BE with a byte order mark',
    build: sumsBytes((b) => {
      const le = Buffer.from(b.toString('utf8'), 'utf16le');
      return Buffer.concat([Buffer.from([0xfe, 0xff]), le.swap16()]);
    }),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a NUL byte in a file name',
    build: text((s) => s.replace('linux_amd64.zip', 'linux_amd64.zip\0')),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a line of NUL bytes',
    build: text((s) => `${s}${'\0'.repeat(80)}\n`),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a Latin-1 byte in a file name',
    build: sumsBytes((b) =>
      Buffer.concat([b, Buffer.from(`${'cd'.repeat(32)}  caf`), Buffer.from([0xe9]), Buffer.from('.zip\n')]),
    ),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a tab between hash and name',
    build: text((s) => s.replace('  ', '\t')),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'trailing spaces on a line',
    build: text((s) => s.replace('.zip\n', '.zip  \n')),
    names: [SUMS],
    code: 3,
  });
  add({ name: 'a leading space on a line', build: text((s) => ` ${s}`), names: [SUMS], code: 3 });
  add({
    name: 'a blank line in the middle',
    build: text((s) => s.replace('\n', '\n\n')),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a zero-width no-break space inside a line',
    build: text((s) => s.replace('  ', ' \uFEFF ')),
    names: [SUMS],
    code: 3,
  });
  add({ name: 'upper-case hex', build: text((s) => s.toUpperCase()), names: [SUMS], code: 3 });
  add({ name: 'a "*" binary marker', build: text((s) => s.replace(/ {2}/g, ' *')), names: [SUMS], code: 3 });
  add({
    name: 'a non-breaking space in a file name',
    build: text((s) => s.replace('example_1.2.3_darwin', 'example_1.2.3_\u00a0darwin')),
    names: [SUMS],
    code: 3,
  });

  // Huge inputs (the message must stay short and the run cheap).
  const MB10 = 10 * 1024 * 1024;
  add({
    name: 'a 10 MB hash on one SHA256SUMS line',
    build: sumsBytes((b) => Buffer.concat([b, Buffer.alloc(MB10, 'a'), Buffer.from('  x.zip\n')])),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a 10 MB line without spaces',
    build: sumsBytes((b) => Buffer.concat([b, Buffer.alloc(MB10, 'z'), Buffer.from('\n')])),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a 10 MB file name with a path',
    build: sumsBytes((b) =>
      Buffer.concat([b, Buffer.from(`${'ef'.repeat(32)}  `), Buffer.alloc(MB10, 'd/'), Buffer.from('\n')]),
    ),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a 10 MB file name without a path',
    build: sumsBytes((b) =>
      Buffer.concat([b, Buffer.from(`${'ef'.repeat(32)}  `), Buffer.alloc(MB10, 'n'), Buffer.from('\n')]),
    ),
    names: [/SHA256SUMS|nnnn/],
    code: 3,
  });
  add({
    name: '100 000 short bad lines',
    build: sumsBytes((b) => Buffer.concat([b, Buffer.from('x\n'.repeat(100_000))])),
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a 10 MB protocol version in the manifest',
    build: (d) =>
      write(d, MANIFEST, `{"version":1,"metadata":{"protocol_versions":["${'9'.repeat(MB10)}"]}}`),
    names: [MANIFEST],
    code: 3,
  });
  add({
    name: 'a 10 MB signature file',
    build: (d) => write(d, SIG, Buffer.concat([Buffer.from([0x89]), Buffer.alloc(MB10, 0x41)])),
    names: [SIG],
    code: 3,
  });
  add({
    name: 'a zip whose only entry has a 60 000-character name',
    build: (d) =>
      replaceListed(d, zipName('linux_arm64'), makeZip([{ name: 'N'.repeat(60_000), data: 'x' }])),
    names: [zipName('linux_arm64')],
    code: 3,
  });

  // Symlinks pointing outside the folder.
  const link = (name: string, target: (outside: string) => string) => (d: string, outside: string) => {
    fs.rmSync(path.join(d, name), { force: true });
    fs.symlinkSync(target(outside), path.join(d, name));
  };
  add({
    name: 'SHA256SUMS linked to a file outside with other content',
    build: (d, o) => {
      fs.writeFileSync(path.join(o, 'elsewhere.txt'), 'root:x:0:0:root:/root:/bin/bash\n');
      link(SUMS, (out) => path.join(out, 'elsewhere.txt'))(d, o);
    },
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'a zip linked to a folder outside',
    build: link(zipName('linux_amd64'), (o) => o),
    names: [zipName('linux_amd64')],
    code: 3,
  });
  add({
    name: 'a zip linked to nothing outside',
    build: link(zipName('linux_amd64'), (o) => path.join(o, 'gone.zip')),
    names: [zipName('linux_amd64')],
    code: 3,
  });
  add({
    name: 'a zip linked to /dev/zero',
    build: link(zipName('darwin_arm64'), () => '/dev/zero'),
    names: [zipName('darwin_arm64')],
    code: 3,
  });
  add({
    name: 'a zip linked to another zip outside',
    build: (d, o) => {
      fs.copyFileSync(fixture('release', zipName('windows_amd64')), path.join(o, 'other.zip'));
      link(zipName('linux_arm64'), (out) => path.join(out, 'other.zip'))(d, o);
    },
    names: [zipName('linux_arm64')],
    code: 3,
  });
  add({
    name: 'the signature linked to a signature outside by another key',
    build: link(SIG, () => fixture('signatures', 'by-other.sig')),
    names: [SIG],
    code: 3,
  });
  add({
    name: 'SHA256SUMS linked in a loop',
    build: (d) => {
      fs.rmSync(path.join(d, SUMS));
      fs.symlinkSync(path.join(d, 'loop-b'), path.join(d, SUMS));
      fs.symlinkSync(path.join(d, SUMS), path.join(d, 'loop-b'));
    },
    names: [SUMS],
    code: 3,
  });
  add({
    name: 'the release folder itself a link to nothing',
    dir: (_d, o) => {
      fs.symlinkSync(path.join(o, 'nowhere'), path.join(o, 'dist-link'));
      return path.join(o, 'dist-link');
    },
    names: ['dist-link'],
    code: 2,
  });

  // Broken zips, listed anew (only the archive is wrong).
  const zipCases: [string, () => Buffer][] = [
    ['a zip without the executable', () => makeZip([{ name: 'README.md', data: 'hi' }])],
    ['an executable without the x bit', () => makeZip([{ name: EXE, data: '#!/bin/sh\n', mode: 0o644 }])],
    ['an executable in a folder', () => makeZip([{ name: `bin/${EXE}`, data: '#!/bin/sh\n' }])],
    [
      'an executable of another provider',
      () => makeZip([{ name: 'terraform-provider-exampel_v1.2.3', data: 'x' }]),
    ],
    ['an empty zip', () => makeZip([])],
    [
      'a compression method Terraform cannot unpack',
      () => patchedZip((z, c) => (z.writeUInt16LE(99, 8), z.writeUInt16LE(99, c + 10))),
    ],
    [
      'an encrypted executable',
      () => patchedZip((z, c) => (z.writeUInt16LE(0x0801, 6), z.writeUInt16LE(0x0801, c + 8))),
    ],
    ['a zip that is a tarball', () => Buffer.concat([Buffer.from('ustar\0'), Buffer.alloc(1000)])],
    [
      'a central directory pointing past the end',
      () => {
        const z = makeZip([{ name: EXE, data: 'x' }]);
        z.writeUInt32LE(0x7fffffff, z.length - 6);
        return z;
      },
    ],
  ];
  for (const [name, make] of zipCases) {
    const file = zipName(r.pick(PLATFORMS.filter((p) => p !== 'windows_amd64')));
    add({ name: `${name} (${file})`, build: (d) => replaceListed(d, file, make()), names: [file], code: 3 });
  }

  // Flags and settings.
  const flag = (name: string, args: string[], names: (string | RegExp)[], extra: Partial<BadCase> = {}) =>
    add({ name, args, names, code: 2, ...extra });
  flag('--protocols 7.0', ['--protocols', '7.0'], ['--protocols', '7.0']);
  flag('--protocols empty', ['--protocols', ''], ['--protocols']);
  flag('--protocols 5.0,abc', ['--protocols', '5.0,abc'], ['abc']);
  flag('--version 1.2', ['--version', '1.2'], ['1.2']);
  flag('--version 9.9.9', ['--version', '9.9.9'], ['9.9.9']);
  flag('--version with a NUL byte', ['--version', '1.2.3\0'], ['--version']);
  flag('--name other', ['--name', 'other'], ['other']);
  flag('--key naming a missing file', ['--key', 'missing.asc'], ['missing.asc']);
  flag('--key naming SHA256SUMS', ['--key', fixture('release', SUMS)], ['--key']);
  flag('--key empty', ['--key', ''], ['--key']);
  flag('--key naming a folder', ['--key', FIXTURES], ['--key']);
  flag('--concurrency 0', ['--concurrency', '0'], ['concurrency']);
  flag('--concurrency 33', ['--concurrency', '33'], ['concurrency']);
  flag('--concurrency abc', ['--concurrency', 'abc'], ['concurrency']);
  flag('--wait-timeout soon', ['--wait-timeout', 'soon'], ['wait-timeout', 'soon']);
  flag('--hostname not a host', ['--hostname', 'ht!tp://x y'], ['hostname', 'ht!tp']);
  flag('an unknown flag', ['--offline'], ['--offline']);
  flag('no token anywhere', [], ['token'], { noToken: true });
  flag('a token in a config file', ['--config', 'CONFIG'], ['token'], {
    build: (_d, o) => fs.writeFileSync(path.join(o, 'config.json'), '{"token":"abc.atlasv1.def"}'),
  });
  flag('a config file that is not JSON', ['--config', 'CONFIG'], ['config.json'], {
    build: (_d, o) => fs.writeFileSync(path.join(o, 'config.json'), '{"organization": '),
  });
  flag('a config file that does not exist', ['--config', 'CONFIG'], ['config.json']);
  flag('PROVIDER_GPG_KEY that is not a key', [], ['PROVIDER_GPG_KEY'], {
    env: { PROVIDER_GPG_KEY: 'not a key at all' },
    keyless: true,
  });
  flag('PROVIDER_CONCURRENCY 0', [], ['PROVIDER_CONCURRENCY'], { env: { PROVIDER_CONCURRENCY: '0' } });
  flag('the release folder is a file', [], ['is not a folder'], { dir: () => fixture('release', SUMS) });
  flag('the release folder does not exist', [], ['does not exist'], { dir: (_d, o) => path.join(o, 'nope') });
  add({
    name: '--dearmor-signature on armor that holds garbage',
    build: (d) => write(d, SIG, '-----BEGIN PGP SIGNATURE-----\n\nAAAA!!!!\n-----END PGP SIGNATURE-----\n'),
    args: ['--dearmor-signature'],
    names: [SIG],
    code: 3,
  });
  return cases;
}
