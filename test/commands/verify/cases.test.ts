/**
 * Broken releases, built from the good one: for each, the exit code (2 for layout ambiguity and flags, 3 for
 * content and signature), a message that names the file (and the SHA256SUMS line), a hint, and no request
 * to the registry other than key lookups. Runs in-process through the CLI's `run()`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import {
  FIXTURES,
  MANIFEST,
  R,
  SIG,
  SUMS,
  copyRelease,
  editSums,
  keyId,
  makeZip,
  publicKeyPath,
  replaceListed,
  resign,
  runCliAtHome,
  zipName,
} from '../../release/helpers.js';
import { emulatorArgs, emulatorWithKeys, requestsOtherThanKeyLookups } from './helpers.js';

interface Case {
  name: string;
  mutate?: (dist: string) => unknown;
  args?: string[];
  env?: Record<string, string>;
  code: 0 | 2 | 3;
  /** Must appear in the error message (the file, for content problems). */
  file?: string;
  /** SHA256SUMS line the message must name. */
  line?: number;
  /** Must appear in the message or the hint. */
  words?: string[];
  /** Checks on the success document. */
  ok?: (doc: SuccessDoc) => void;
}

interface SuccessDoc {
  ok: true;
  keyId: string;
  signer: string;
  protocols: string[];
  warnings: string[];
  platforms: { os: string; arch: string }[];
}

const sig = (name: string) => (dist: string) =>
  fs.copyFileSync(path.join(FIXTURES, 'signatures', name), path.join(dist, SIG));
const key = (name: string): string[] => ['--key', publicKeyPath(name)];
const line = (n: number, edit: (l: string) => string) => (dist: string) =>
  editSums(dist, (lines) => lines.map((l, i) => (i === n - 1 ? edit(l) : l)));
const rm = (name: string) => (dist: string) => fs.rmSync(path.join(dist, name), { recursive: true });
const EXE = 'terraform-provider-example_v1.2.3';

const cases: Case[] = [
  // Layout and flags: exit 2.
  {
    name: 'an empty folder',
    mutate: (d) => fs.readdirSync(d).forEach((f) => rm(f)(d)),
    code: 2,
    file: 'dist',
    words: ['No provider release found'],
  },
  {
    name: 'a folder that does not exist',
    args: ['./nope'],
    code: 2,
    file: 'nope',
    words: ['does not exist'],
  },
  {
    name: 'two versions in one folder',
    mutate: (d) =>
      fs.copyFileSync(
        path.join(d, zipName('linux_amd64')),
        path.join(d, 'terraform-provider-example_1.2.4_linux_amd64.zip'),
      ),
    code: 2,
    words: ['several versions: 1.2.3, 1.2.4', '--version'],
  },
  {
    name: 'two provider names',
    mutate: (d) =>
      fs.copyFileSync(
        path.join(d, zipName('linux_amd64')),
        path.join(d, 'terraform-provider-other_1.2.3_linux_amd64.zip'),
      ),
    code: 2,
    words: ['several providers: example, other', '--name'],
  },
  { name: 'invalid --protocols', args: ['--protocols', '7.0'], code: 2, words: ['--protocols', '"7.0"'] },
  {
    name: 'no protocols anywhere',
    mutate: async (d) => {
      rm(MANIFEST)(d);
      await editSums(d, (l) => l.filter((x) => !x.endsWith(MANIFEST)));
    },
    code: 2,
    words: ['protocol versions', '--protocols'],
  },
  {
    name: '--offline without a key',
    args: ['--offline'],
    code: 2,
    words: ['--offline', '--key', 'PROVIDER_GPG_KEY'],
  },
  {
    name: '--key naming a missing file',
    args: ['--key', 'missing.asc'],
    code: 2,
    words: ['missing.asc', 'does not exist'],
  },
  {
    name: '--key naming something that is not a key',
    args: ['--key', path.join(FIXTURES, 'release', SUMS)],
    code: 2,
    words: ['not an ASCII-armored OpenPGP public key'],
  },
  {
    name: '--version that is not semver',
    args: ['--version=1.2'],
    code: 2,
    words: ['--version "1.2" is not a semantic version'],
  },
  {
    name: '--version not in the folder',
    args: ['--version=2.0.0'],
    code: 2,
    words: ['No files of version 2.0.0', '1.2.3'],
  },
  {
    name: '--name not in the folder',
    args: ['--name', 'other'],
    code: 2,
    words: ['No release of provider "other"', 'example'],
  },

  // Files and SHA256SUMS: exit 3, naming the file and the line.
  { name: 'missing SHA256SUMS', mutate: rm(SUMS), code: 3, file: SUMS, words: ['is missing'] },
  {
    name: 'missing signature',
    mutate: rm(SIG),
    code: 3,
    file: SIG,
    words: ['is missing', 'gpg --detach-sign'],
  },
  {
    name: 'an empty SHA256SUMS',
    mutate: (d) => fs.writeFileSync(path.join(d, SUMS), ''),
    code: 3,
    file: SUMS,
    words: ['is empty'],
  },
  {
    name: 'a "*" binary marker',
    mutate: line(3, (l) => l.replace('  ', ' *')),
    code: 3,
    file: SUMS,
    line: 3,
    words: ['binary-mode marker'],
  },
  {
    name: 'a path in a name',
    mutate: line(2, (l) => l.replace('  ', '  dist/')),
    code: 3,
    file: SUMS,
    line: 2,
    words: ['has a path'],
  },
  {
    name: 'upper-case hex',
    mutate: line(1, (l) => l.slice(0, 64).toUpperCase() + l.slice(64)),
    code: 3,
    file: SUMS,
    line: 1,
    words: ['upper-case'],
  },
  {
    name: 'a short hash',
    mutate: line(4, (l) => l.slice(1)),
    code: 3,
    file: SUMS,
    line: 4,
    words: ['63 hex digits'],
  },
  {
    name: 'a duplicate name',
    mutate: (d) => editSums(d, (l) => [...l, l[0]!]),
    code: 3,
    file: SUMS,
    line: 7,
    words: ['listed twice (first on line 1)'],
  },
  {
    name: 'one space instead of two',
    mutate: line(6, (l) => l.replace('  ', ' ')),
    code: 3,
    file: SUMS,
    line: 6,
    words: ['exactly two spaces'],
  },
  {
    // Found by test/reliability: verify passed, and publish uploaded a file terraform init refuses.
    name: 'a UTF-8 byte order mark',
    mutate: async (d) => {
      const file = path.join(d, SUMS);
      fs.writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), fs.readFileSync(file)]));
      await resign(d);
    },
    code: 3,
    file: SUMS,
    line: 1,
    words: ['byte order mark'],
  },
  {
    name: 'Windows line endings',
    mutate: line(1, (l) => `${l}\r`),
    code: 3,
    file: SUMS,
    line: 1,
    words: ['carriage return'],
  },
  {
    name: 'a zip not listed',
    mutate: (d) => editSums(d, (l) => l.filter((x) => !x.endsWith(zipName('linux_arm64')))),
    code: 3,
    file: zipName('linux_arm64'),
    words: [`is not listed in ${SUMS}`],
  },
  {
    name: 'a listed file missing',
    mutate: rm(zipName('darwin_arm64')),
    code: 3,
    file: zipName('darwin_arm64'),
    line: 2,
    words: [SUMS, 'which is not in'],
  },
  {
    name: 'a hash mismatch',
    mutate: (d) => fs.appendFileSync(path.join(d, zipName('linux_amd64')), 'x'),
    code: 3,
    file: zipName('linux_amd64'),
    line: 3,
    words: [SUMS, 'does not match'],
  },
  {
    name: 'a zip name without os/arch',
    mutate: (d) =>
      fs.copyFileSync(path.join(d, zipName('linux_amd64')), path.join(d, `${R}_linux_amd64_v1.zip`)),
    code: 3,
    file: `${R}_linux_amd64_v1.zip`,
    words: ['does not follow'],
  },
  {
    name: 'a version that is not semver',
    mutate: (d) =>
      fs
        .readdirSync(d)
        .filter((f) => f.startsWith(R))
        .forEach((f) => fs.renameSync(path.join(d, f), path.join(d, f.replace('1.2.3', '1.2')))),
    code: 3,
    file: 'terraform-provider-example_1.2_',
    words: ['"1.2" is not a semantic version'],
  },
  {
    name: 'an unknown os/arch',
    mutate: (d) => fs.renameSync(path.join(d, zipName('linux_arm64')), path.join(d, zipName('plan10_arm64'))),
    code: 3,
    file: zipName('plan10_arm64'),
    words: ['not a Go platform', 'unknown operating system "plan10"'],
  },
  {
    name: 'a malformed manifest',
    mutate: (d) => fs.writeFileSync(path.join(d, MANIFEST), '{"version":1,'),
    code: 3,
    file: MANIFEST,
    words: ['malformed', 'not JSON'],
  },
  {
    name: 'a manifest with an unknown protocol',
    mutate: (d) =>
      fs.writeFileSync(path.join(d, MANIFEST), '{"version":1,"metadata":{"protocol_versions":["7.0"]}}'),
    code: 3,
    file: MANIFEST,
    words: ['"7.0"'],
  },

  // Zip contents: exit 3 (SHA256SUMS and signature brought up to date so only the content is wrong).
  {
    name: 'a zip that is not a zip',
    mutate: (d) => replaceListed(d, zipName('windows_amd64'), Buffer.from('not a zip')),
    code: 3,
    file: zipName('windows_amd64'),
    words: ['not a readable zip archive'],
  },
  {
    name: 'a zip without the executable',
    mutate: (d) => replaceListed(d, zipName('linux_arm64'), makeZip([{ name: 'README.md', data: 'hi' }])),
    code: 3,
    file: zipName('linux_arm64'),
    words: ['holds no executable'],
  },
  {
    name: 'an executable with the wrong name',
    mutate: (d) =>
      replaceListed(
        d,
        zipName('linux_arm64'),
        makeZip([{ name: 'terraform-provider-exampel_v1.2.3', data: '#!/bin/sh\n' }]),
      ),
    code: 3,
    file: zipName('linux_arm64'),
    words: ['terraform-provider-example*', 'terraform-provider-exampel_v1.2.3'],
  },
  {
    name: 'an executable without the x bit',
    mutate: (d) =>
      replaceListed(d, zipName('darwin_amd64'), makeZip([{ name: EXE, data: '#!/bin/sh\n', mode: 0o644 }])),
    code: 3,
    file: zipName('darwin_amd64'),
    words: ['not executable (mode 0644)', 'chmod +x'],
  },
  {
    name: 'an executable in a folder',
    mutate: (d) =>
      replaceListed(d, zipName('darwin_amd64'), makeZip([{ name: `bin/${EXE}`, data: '#!/bin/sh\n' }])),
    code: 3,
    file: zipName('darwin_amd64'),
    words: ['in a folder'],
  },

  // Signatures and keys: exit 3.
  {
    name: 'an armored signature',
    mutate: sig('armored.sig.asc'),
    code: 3,
    file: SIG,
    words: ['ASCII-armored', 'tag byte does not have MSB set', '--dearmor-signature'],
  },
  {
    name: 'a signature that is not OpenPGP',
    mutate: (d) => fs.writeFileSync(path.join(d, SIG), 'signed, honest\n'),
    code: 3,
    file: SIG,
    words: ['not an OpenPGP signature'],
  },
  {
    name: 'a signature by another key (registry keys)',
    mutate: sig('by-other.sig'),
    code: 3,
    file: SIG,
    words: [keyId('other'), 'provider gpg-keys add'],
  },
  {
    name: 'a signature by another key (--key)',
    mutate: sig('by-other.sig'),
    args: key('signer'),
    code: 3,
    file: SIG,
    words: [keyId('other'), keyId('signer')],
  },
  {
    name: 'a signature over other bytes',
    mutate: sig('over-other-bytes.sig'),
    code: 3,
    file: SIG,
    words: [`over a different checksum file than ${SUMS}`, 'never mix the dist folders'],
  },
  {
    name: 'an ECC key',
    mutate: sig('by-ecc.sig'),
    args: key('ecc'),
    code: 3,
    file: SIG,
    words: [keyId('ecc'), 'ECC', 'only RSA and DSA'],
  },
  {
    name: 'an expired key',
    mutate: sig('by-expired.sig'),
    args: key('expired'),
    code: 3,
    file: SIG,
    words: [keyId('expired'), 'expired on 2020-01-02'],
  },

  // Releases that pass.
  {
    name: 'the good release, key from the registry',
    code: 0,
    ok: (d) => expect(d.keyId).toBe(keyId('signer')),
  },
  {
    name: 'a subkey signature (primary key id)',
    mutate: sig('by-subkey.sig'),
    args: key('subkey'),
    code: 0,
    ok: (d) => expect(d.keyId).toBe(keyId('subkey')),
  },
  {
    name: 'an armored signature with --dearmor-signature',
    mutate: sig('armored.sig.asc'),
    args: ['--dearmor-signature'],
    code: 0,
    ok: (d) => expect(d.keyId).toBe(keyId('signer')),
  },
  {
    name: 'a manifest not listed (warning)',
    mutate: (d) => editSums(d, (l) => l.filter((x) => !x.endsWith(MANIFEST))),
    code: 0,
    ok: (d) => expect(d.warnings).toEqual([expect.stringContaining(`${MANIFEST} is not listed`)]),
  },
  {
    name: '--version with a v',
    args: ['--version=v1.2.3'],
    code: 0,
    ok: (d) => expect(d.platforms).toHaveLength(5),
  },
  {
    name: '--protocols overriding the manifest (warning)',
    args: ['--protocols', '5.0,6.0'],
    code: 0,
    ok: (d) => expect([d.protocols, d.warnings.length]).toEqual([['5.0', '6.0'], 1]),
  },
  {
    name: 'the key in PROVIDER_GPG_KEY',
    env: { PROVIDER_GPG_KEY: fs.readFileSync(publicKeyPath('signer'), 'utf8') },
    code: 0,
    ok: (d) => expect(d.signer).toContain('signer@example.invalid'),
  },
  {
    name: 'an unusual platform (warning)',
    mutate: async (d) => {
      fs.renameSync(path.join(d, zipName('linux_arm64')), path.join(d, zipName('plan9_amd64')));
      await editSums(d, (l) => l.map((x) => x.replace(zipName('linux_arm64'), zipName('plan9_amd64'))));
      rm('artifacts.json')(d);
    },
    code: 0,
    ok: (d) => expect(d.warnings).toEqual([expect.stringContaining('plan9_amd64 is an unusual platform')]),
  },
];

describe('provider verify on broken releases', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await emulatorWithKeys(['signer']);
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('has at least 30 failing cases', () => {
    expect(cases.filter((c) => c.code !== 0).length).toBeGreaterThanOrEqual(30);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases)('$name → exit $code', async (c) => {
    const dist = copyRelease();
    const root = path.dirname(dist);
    await c.mutate?.(dist);
    const { args, env } = emulatorArgs(emulator);
    emulator.requestLog.clear();
    const result = await runCliAtHome(['verify', ...(c.args ?? []), '--json', ...args], {
      cwd: root,
      env: { ...env, ...c.env },
    });
    const doc = JSON.parse(result.stdout) as {
      ok: boolean;
      error?: { code: string; message: string; hint: string };
    };

    expect(requestsOtherThanKeyLookups(emulator)).toEqual([]);
    if (c.args?.includes('--offline') || c.args?.includes('--key') || c.env?.PROVIDER_GPG_KEY) {
      expect(emulator.requestLog.records).toEqual([]);
    }
    expect({ code: result.exitCode, ok: doc.ok }).toEqual({ code: c.code, ok: c.code === 0 });
    if (c.code === 0) {
      c.ok?.(doc as unknown as SuccessDoc);
      return;
    }
    const error = doc.error!;
    expect(error.code).toBe(c.code === 2 ? 'usage' : 'verification');
    if (c.file !== undefined) expect(error.message).toContain(c.file);
    if (c.line !== undefined) expect(error.message).toContain(`line ${c.line}`);
    for (const word of c.words ?? []) expect(`${error.message}\n${error.hint}`).toContain(word);
    expect(error.hint.length).toBeGreaterThan(10);
    expect(result.stderr).toContain(`error: ${error.message}`);
  });

  it('leaves the release untouched (--dearmor-signature converts in memory only)', async () => {
    const dist = copyRelease();
    sig('armored.sig.asc')(dist);
    const before = fs.readFileSync(path.join(dist, SIG));
    const { args, env } = emulatorArgs(emulator);
    const result = await runCliAtHome(['verify', '--dearmor-signature', ...args], {
      cwd: path.dirname(dist),
      env,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('converted from ASCII armor in memory');
    expect(fs.readFileSync(path.join(dist, SIG))).toEqual(before);
  });

  // The program's own version flag must not swallow the command's `--version <v>`.
  it('accepts `--version 1.2.3` with a space', async () => {
    const dist = copyRelease();
    const result = await runCliAtHome(['verify', '--version', '1.2.3', '--key', publicKeyPath('signer')], {
      cwd: path.dirname(dist),
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('example 1.2.3 verified');
  });

  it('stops at the first usage mistake before reading the release', async () => {
    const dist = copyRelease();
    await resign(dist, 'other');
    const result = await runCliAtHome(['verify', '--protocols', 'x', '--offline'], {
      cwd: path.dirname(dist),
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--protocols');
  });
});
