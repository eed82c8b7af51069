/**
 * Test helpers for release reading and `provider verify`: copies of the fixture release to mutate, a tiny
 * zip writer, detached signatures made with the test-only keys, and an in-process CLI runner.
 */
import { runCli } from '../helpers/cli.js';
import type { InProcessResult } from '../helpers/result.js';
import { PLATFORMS, type Platform } from '../helpers/platforms.js';
import { tempRoot } from '../helpers/tmp.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { crc32, deflateRawSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import * as openpgp from 'openpgp';
import { Output } from '../../src/ui/output.js';

/** The repository's fixtures folder. */
export const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
/** The fixture release's file name prefix. */
export const R = 'terraform-provider-example_1.2.3';
export const SUMS = `${R}_SHA256SUMS`;
export const SIG = `${SUMS}.sig`;
export const MANIFEST = `${R}_manifest.json`;
/** The fixture release's platforms, in SHA256SUMS order (the manifest is line 5). */
export { PLATFORMS };

/**
 * The `h1:` lock hash of each fixture zip, pinned. Computed outside this project, by Python's zipfile and
 * hashlib following dirhash's Hash1 text (sorted names; `<hex sha256>  <name>\n` lines; base64 of their sha256):
 *   python3 -c 'import zipfile,hashlib,base64; z=zipfile.ZipFile(F); …'
 * test/release/lockHashes.test.ts derives the same values again with a zip reader written in the test.
 */
export const FIXTURE_H1: Record<Platform, string> = {
  darwin_amd64: 'h1:YKpnBdIzIPiMhkHaGgJKj0ZLBi+s7i8Y29dA3MOAKao=',
  darwin_arm64: 'h1:MkaeXlI13zqwYhhtYB5Xdgn4TbscxW9AY4rlFd/U0PU=',
  linux_amd64: 'h1:8R6Zp2qy/MaNGZAYNr59B5gMtYMlKr4toFGKCZxjoiw=',
  linux_arm64: 'h1:gt027XmP27ybr+Et7u9SiQ0/9VU8wN6sC62QfvTxtEY=',
  windows_amd64: 'h1:s5DjVaODHLaOuYq2F66YKvmnBTgM8fC0ZygmgbhLe7s=',
};

/** `terraform-provider-example_1.2.3_<platform>.zip`. */
export function zipName(platform: string): string {
  return `${R}_${platform}.zip`;
}

/** Copies the fixture release to `<root>/dist` and returns that folder. */
export function copyRelease(root: string = tempRoot()): string {
  const dist = path.join(root, 'dist');
  fs.cpSync(path.join(FIXTURES, 'release'), dist, { recursive: true });
  return dist;
}

/** A test key's long key id, read from `fixtures/keys/<name>.keyid`. */
export function keyId(name: string): string {
  return fs.readFileSync(path.join(FIXTURES, 'keys', `${name}.keyid`), 'utf8').trim();
}

/** Path of a test key's armored public key. */
export function publicKeyPath(name: string): string {
  return path.join(FIXTURES, 'keys', `${name}.pub.asc`);
}

/** A binary detached signature over `data` by a secret key (armored text). */
export async function signDetached(
  data: Uint8Array,
  armoredSecretKey: string,
  date?: Date,
): Promise<Uint8Array> {
  const signingKeys = await openpgp.readPrivateKey({ armoredKey: armoredSecretKey });
  const message = await openpgp.createMessage({ binary: data });
  // openpgp's return type is conditional on its web stream types, which resolve to any without the DOM library.
  return (await openpgp.sign({ message, signingKeys, detached: true, format: 'binary', date })) as Uint8Array;
}

/** Re-signs the release's SHA256SUMS with a fixture key (default `signer`). */
export async function resign(dir: string, key = 'signer'): Promise<void> {
  const secret = fs.readFileSync(path.join(FIXTURES, 'keys', `${key}.sec.asc`), 'utf8');
  const sig = await signDetached(fs.readFileSync(path.join(dir, SUMS)), secret);
  fs.writeFileSync(path.join(dir, SIG), sig);
}

/** Rewrites SHA256SUMS line by line (lines without the trailing newline), then re-signs it. */
export async function editSums(
  dir: string,
  edit: (lines: string[]) => string[],
  options = { resign: true },
): Promise<void> {
  const file = path.join(dir, SUMS);
  const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
  fs.writeFileSync(
    file,
    edit(lines)
      .map((l) => `${l}\n`)
      .join(''),
  );
  if (options.resign) await resign(dir);
}

/** One entry of goreleaser's artifacts.json, as the fixture holds it. */
export interface FixtureArtifact {
  name: string;
  path: string;
  type: string;
  goos?: string;
  goarch?: string;
  extra?: Record<string, unknown>;
  [field: string]: unknown;
}

/** Rewrites the release's artifacts.json (goreleaser writes it as one line of JSON). */
export function editArtifacts(dir: string, edit: (artifacts: FixtureArtifact[]) => FixtureArtifact[]): void {
  const file = path.join(dir, 'artifacts.json');
  fs.writeFileSync(
    file,
    JSON.stringify(edit(JSON.parse(fs.readFileSync(file, 'utf8')) as FixtureArtifact[])),
  );
}

/**
 * Replaces a release file and brings SHA256SUMS (and its signature) and artifacts.json's `extra.Checksum` up to
 * date, so only the content is wrong.
 */
export async function replaceListed(dir: string, filename: string, bytes: Uint8Array): Promise<void> {
  fs.writeFileSync(path.join(dir, filename), bytes);
  const sha = createHash('sha256').update(bytes).digest('hex');
  await editSums(dir, (lines) => lines.map((l) => (l.endsWith(`  ${filename}`) ? `${sha}  ${filename}` : l)));
  if (fs.existsSync(path.join(dir, 'artifacts.json'))) {
    editArtifacts(dir, (list) =>
      list.map((a) => (a.name === filename ? { ...a, extra: { ...a.extra, Checksum: `sha256:${sha}` } } : a)),
    );
  }
}

/** One member of a zip made by `makeZip`. */
export interface ZipMember {
  name: string;
  data: string | Uint8Array;
  /** Unix mode (default 0o755); `null` writes a DOS entry without unix attributes. */
  mode?: number | null;
  deflate?: boolean;
}

/** A minimal but valid zip archive (stored or deflated members, unix modes in the external attributes). */
export function makeZip(members: ZipMember[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const member of members) {
    const name = Buffer.from(member.name, 'utf8');
    const raw = typeof member.data === 'string' ? Buffer.from(member.data) : Buffer.from(member.data);
    const body = member.deflate ? deflateRawSync(raw) : raw;
    const method = member.deflate ? 8 : 0;
    const crc = crc32(raw);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x5c21, 12); // 2026-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const mode = member.mode === undefined ? 0o755 : member.mode;
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(mode === null ? 20 : (3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x5c21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(raw.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(mode === null ? 0 : ((0o100000 | mode) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** The one in-process runner (test/helpers/cli.ts `runCli`), with colour off and the working folder as home. */
export async function runCliAtHome(
  argv: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<InProcessResult> {
  return runCli(argv, {
    cwd: options.cwd,
    homeDir: options.cwd,
    env: { NO_COLOR: '1', ...options.env },
  });
}

/** An output sink writing into strings, for calling the core directly. */
export function captureOutput(options: { json?: boolean; verbose?: boolean } = {}): {
  output: Output;
  stdout: () => string;
  stderr: () => string;
} {
  let out = '';
  let err = '';
  const output = new Output({
    stdout: { write: (c: string) => (out += c) },
    stderr: { write: (c: string) => (err += c) },
    env: { NO_COLOR: '1' },
    ...options,
  });
  return { output, stdout: () => out, stderr: () => err };
}
