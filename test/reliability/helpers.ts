/**
 * Shared machinery of the reliability suites: a seeded generator (every case is replayable from its seed),
 * the case counts and the soak multiplier, a recorder of every archivist link the in-process emulators issue,
 * secret scans over texts and written files, and the end-state check of a publish (complete, byte-identical,
 * nothing duplicated, no token on a link host).
 *
 *   PROVIDER_SOAK=1          every suite runs 10× its cases (PROVIDER_SOAK=<n>, n ≥ 2: n×)
 *   PROVIDER_SEED=<n>        run only the case with this seed (replay a failure)
 *   PROVIDER_RELIABILITY_REPORT=<file>   append each suite's figures (counts, exits, CPU) to this file
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect, vi } from 'vitest';
import { LinkSigner } from '../../src/emulator/links.js';
import type { RequestRecord } from '../../src/emulator/requestLog.js';
import type { Emulator } from '../../src/emulator/server.js';
import { PLATFORMS, RELEASE } from '../commands/publish/helpers.js';

// ---------------------------------------------------------------------------------------------------------
// Seeds and counts

/** mulberry32: small, fast and the same on every machine for a seed. */
export function seeded(seed: number): Random {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

/** A seeded source of choices. */
export interface Random {
  /** [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
}

/** The case multiplier: 1 by default, 10 with PROVIDER_SOAK=1, n with PROVIDER_SOAK=n (n ≥ 2). */
export const SOAK: number = (() => {
  const raw = (process.env.PROVIDER_SOAK ?? '').trim();
  if (raw === '' || raw === '0' || raw === 'false') return 1;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 2 ? n : 10;
})();

/**
 * The seeds of a suite: `first`, `first + 1`, … (`count` × SOAK of them), or only PROVIDER_SEED when it is set
 * and falls in the suite's range (so a replay runs exactly the failing case).
 */
export function seedsFor(first: number, count: number): number[] {
  const all = Array.from({ length: count * SOAK }, (_, i) => first + i);
  const replay = process.env.PROVIDER_SEED;
  if (replay === undefined || replay.trim() === '') return all;
  const seed = Number(replay);
  return seed >= first && seed < first + count * SOAK ? [seed] : [];
}

/** True when PROVIDER_SEED narrows the run to one case. */
export const REPLAYING = (process.env.PROVIDER_SEED ?? '').trim() !== '';

/** Appends a suite's figures to the file named by PROVIDER_RELIABILITY_REPORT (tests print nothing themselves). */
export function report(line: string): void {
  const file = process.env.PROVIDER_RELIABILITY_REPORT;
  if (file !== undefined && file.trim() !== '')
    fs.appendFileSync(file, `${new Date().toISOString()} ${line}\n`);
}

// ---------------------------------------------------------------------------------------------------------
// Links issued by in-process emulators

const issued = new Map<string, string[]>();
let recording = false;

/**
 * Records every archivist link (upload and download) the emulators of this test file sign, keyed by the
 * emulator's base URL, so that the scans can look for each one (and its bare secret) in every output.
 */
export function recordLinks(): void {
  if (recording) return;
  recording = true;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- re-applied below with the spied call's own `this`
  const original = LinkSigner.prototype.sign;
  vi.spyOn(LinkSigner.prototype, 'sign').mockImplementation(function (
    this: LinkSigner,
    ...args: Parameters<LinkSigner['sign']>
  ) {
    const link = original.apply(this, args);
    const list = issued.get(args[0]) ?? [];
    list.push(link);
    issued.set(args[0], list);
    return link;
  });
}

/** The links an emulator (by base URL) has issued so far. */
export function linksIssued(baseUrl: string): string[] {
  return issued.get(baseUrl) ?? [];
}

/** Forgets the links of an emulator that is gone. */
export function forgetLinks(baseUrl: string): void {
  issued.delete(baseUrl);
}

// ---------------------------------------------------------------------------------------------------------
// Secrets

/** The secrets of one emulator: its three tokens, its link-signing key, and every link it issued. */
export function emulatorSecrets(emulator: Emulator): string[] {
  const tokens = [emulator.ownerToken, emulator.memberToken, emulator.outsiderToken];
  const links = linksIssued(emulator.url);
  // The bare secret too (the part after the prefix): a log that strips the host must not keep it.
  const bare = links.map((l) =>
    l.slice(l.indexOf('/_archivist/v1/object/') + '/_archivist/v1/object/'.length),
  );
  // The MAC alone is what makes a link valid.
  const macs = bare.map((s) => s.slice(s.indexOf('.') + 1)).filter((m) => m.length >= 16);
  return [...tokens, emulator.store.data.linkKey, ...links, ...bare, ...macs];
}

/** Fails when any secret appears in a text; names the place and which kind of secret, never the secret. */
export function expectNoSecretIn(text: string, secrets: Iterable<string>, where: string): void {
  for (const secret of secrets) {
    if (secret.length < 8) continue;
    if (text.includes(secret)) {
      const kind = secret.includes('.atlasv1.')
        ? 'a token'
        : secret.includes('/_archivist/')
          ? 'an archivist link'
          : 'a secret';
      expect.fail(`${where} contains ${kind} (${secret.slice(0, 6)}…)`);
    }
  }
  // Any archivist link other than the redacted form is a leak, even one this file did not record.
  const leaked = [...text.matchAll(/_archivist\/v1\/object\/([^\s"'\\)]+)/g)]
    .map((m) => m[1])
    .filter((s) => s !== '[secret]' && s !== '…');
  expect(leaked, `${where} contains an archivist link`).toEqual([]);
}

/** Every regular file under `dir` (recursively), as absolute paths. */
export function filesUnder(dir: string): Buffer[] {
  return walk(Buffer.from(dir));
}

// Buffers, not strings: a file name that is not UTF-8 must still be found and read.
function walk(dir: Buffer): Buffer[] {
  if (!fs.existsSync(dir)) return [];
  const out: Buffer[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) {
    const full = Buffer.concat([dir, Buffer.from('/'), entry.name]);
    if (entry.isDirectory()) out.push(...walk(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/**
 * Fails when a secret appears in any file under `dir`. `exclude` returns a reason for a file that may hold
 * secrets by design (the emulator's state.json stores its tokens and link key: it is the server's database).
 */
export function expectNoSecretInFiles(
  dir: string,
  secrets: readonly string[],
  where: string,
  exclude: (file: string) => string | undefined = () => undefined,
): number {
  let scanned = 0;
  for (const file of filesUnder(dir)) {
    const name = file.toString('utf8');
    if (exclude(name) !== undefined) continue;
    scanned++;
    expectNoSecretIn(
      fs.readFileSync(file).toString('latin1'),
      secrets,
      `${where}: ${path.relative(dir, name)}`,
    );
  }
  return scanned;
}

/** The emulator's own database holds its tokens and link key by design (mode of a server's state). */
export function emulatorStateFile(file: string): string | undefined {
  const base = path.basename(file);
  return base === 'state.json' || /^state\.json\.\d+\.tmp$/.test(base)
    ? "the emulator's state holds its tokens and link key"
    : undefined;
}

/** No request to a link host (archivist paths) carried an Authorization header. */
export function expectNoTokenOnLinks(records: readonly RequestRecord[], where: string): void {
  const bad = records.filter((r) => r.path.startsWith('/_archivist/') && r.authorization);
  expect(
    bad.map((r) => `${r.method} ${r.path} ${r.status}`),
    `${where}: archivist requests with Authorization`,
  ).toEqual([]);
}

// ---------------------------------------------------------------------------------------------------------
// The end state of a publish

const releases = new Map<string, Map<string, Buffer>>();

/** The bytes of a release file (default: the fixture release). */
export function releaseFile(name: string, dir: string = RELEASE): Buffer {
  let files = releases.get(dir);
  if (files === undefined) {
    files = new Map();
    for (const file of fs.readdirSync(dir)) {
      if (file.startsWith('terraform-provider-example_1.2.3_'))
        files.set(file, fs.readFileSync(path.join(dir, file)));
    }
    releases.set(dir, files);
  }
  const bytes = files.get(name);
  if (bytes === undefined) throw new Error(`the release in ${dir} has no ${name}`);
  return bytes;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

interface Doc {
  data: {
    attributes: Record<string, unknown>;
    links: Record<string, string | undefined>;
  };
}
interface ListDoc {
  data: { attributes: Record<string, unknown>; links: Record<string, string | undefined> }[];
}

async function getJson<T>(emulator: Emulator, urlPath: string): Promise<T> {
  const response = await fetch(`${emulator.url}${urlPath}`, {
    headers: { authorization: `Bearer ${emulator.ownerToken}`, accept: 'application/vnd.api+json' },
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${urlPath}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Downloads a link as a consumer does: no token. */
async function fetchLink(link: string | undefined, what: string): Promise<Buffer> {
  if (link === undefined) throw new Error(`no download link for ${what}`);
  const response = await fetch(link);
  const bytes = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`downloading ${what}: ${response.status}`);
  return bytes;
}

/**
 * The registry holds the fixture release completely and exactly: one provider, one key, one version, one
 * platform per os/arch; every file flagged uploaded; every file downloaded through its link is byte-identical
 * to the release's (the fixture, or the release in `releaseDir`). `where` prefixes every failure (the seed).
 */
export async function expectPublishedExactly(
  emulator: Emulator,
  where: string,
  releaseDir: string = RELEASE,
): Promise<void> {
  const { providers, gpgKeys, versions, platforms } = emulator.store.data;
  expect(
    { providers: providers.length, keys: gpgKeys.length, versions: versions.length },
    `${where}: stored resources`,
  ).toEqual({ providers: 1, keys: 1, versions: 1 });
  const names = platforms.map((p) => `${p.os}_${p.arch}`).sort();
  expect(names, `${where}: one platform per os/arch`).toEqual(PLATFORMS);

  const base = `/api/v2/organizations/${emulator.organization}/registry-providers/private/${emulator.organization}/example/versions/1.2.3`;
  const version = await getJson<Doc>(emulator, base);
  expect(
    [version.data.attributes['shasums-uploaded'], version.data.attributes['shasums-sig-uploaded']],
    `${where}: checksum files flagged uploaded`,
  ).toEqual([true, true]);
  const sums = await fetchLink(version.data.links['shasums-download'], 'SHA256SUMS');
  const sig = await fetchLink(version.data.links['shasums-sig-download'], 'SHA256SUMS.sig');
  expect(
    sums.equals(releaseFile('terraform-provider-example_1.2.3_SHA256SUMS', releaseDir)),
    `${where}: SHA256SUMS bytes`,
  ).toBe(true);
  expect(
    sig.equals(releaseFile('terraform-provider-example_1.2.3_SHA256SUMS.sig', releaseDir)),
    `${where}: signature bytes`,
  ).toBe(true);

  const list = await getJson<ListDoc>(emulator, `${base}/platforms?page%5Bsize%5D=100`);
  expect(list.data, `${where}: platforms listed`).toHaveLength(PLATFORMS.length);
  for (const p of list.data) {
    const filename = String(p.attributes.filename);
    const expected = releaseFile(filename, releaseDir);
    expect(p.attributes['provider-binary-uploaded'], `${where}: ${filename} flagged uploaded`).toBe(true);
    expect(p.attributes.shasum, `${where}: ${filename} shasum`).toBe(sha256(expected));
    const bytes = await fetchLink(p.links['provider-binary-download'], filename);
    expect(bytes.equals(expected), `${where}: ${filename} bytes`).toBe(true);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Small things

/** The last lines of a text, for failure messages. */
export function tail(text: string, lines = 12): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}
