/**
 * `provider mirror` into a private registry from an origin that answers byte ranges (as GitHub's and
 * releases.hashicorp.com's storage do): each zip's central directory and local headers are read by ranges, and
 * its body streamed once from the origin to the upload link, proven by that read (its signed SHA256SUMS line,
 * every entry's CRC-32) and its last part held back until it is. No zip is ever written to disk. A zip whose
 * body is not its signed bytes ends the version with exit 3 and the registry as it was; a body cut short is
 * fetched again by the upload's retry; an origin that ignores ranges is downloaded first, as before.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { call, download, emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { watchPlatformId, writeRequests } from '../commands/publish/helpers.js';
import { makeZip } from '../release/helpers.js';
import {
  buildRelease,
  mirrorInto,
  startOrigin,
  withZip,
  type OriginFaults,
  type TestOrigin,
} from './origin.js';

const emulator = emulatorPerTest();
const BIG = 'terraform-provider-example_1.2.3_linux_amd64.zip';
const SMALL = 'terraform-provider-example_1.2.3_darwin_arm64.zip';
const EXE = 'terraform-provider-example_v1.2.3';
/** Several upload chunks: the upload is well under way before the body's end comes in. */
const SIZE = 3 * 1024 * 1024;

/** Bytes that do not compress, the same on every run. */
function noise(size: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 32 < size; i++) blocks.push(createHash('sha256').update(`${i}`).digest());
  return Buffer.concat(blocks).subarray(0, size);
}

/** 1.2.3 for darwin_arm64 and linux_amd64, the latter a 3 MiB deflated executable, listed and signed. */
async function release() {
  const base = await buildRelease('1.2.3', ['darwin_arm64', 'linux_amd64']);
  return withZip(base, BIG, makeZip([{ name: EXE, data: noise(SIZE), deflate: true }]));
}

interface Run {
  exitCode: number;
  stderr: string;
  stdout: string;
  /** Every file name seen under the command's temporary folder while it ran. */
  seen: Set<string>;
  tmp: string;
}

/** `provider mirror acme/example` from `origin` into `e`, watching its temporary folder as it runs. */
async function mirror(origin: TestOrigin, e: Emulator, ...args: string[]): Promise<Run> {
  const cwd = tempRoot();
  const tmp = path.join(cwd, 'tmp');
  fs.mkdirSync(tmp);
  const seen = new Set<string>();
  const look = (): void => {
    for (const name of fs.readdirSync(tmp, { recursive: true, encoding: 'utf8' }))
      seen.add(path.basename(name));
  };
  const watching = setInterval(look, 5);
  try {
    const result = await mirrorInto(origin, e, cwd, { tmpDir: tmp }, ...args);
    return { ...result, seen, tmp };
  } finally {
    clearInterval(watching);
  }
}

async function start(faults: OriginFaults): Promise<{ origin: TestOrigin; e: Emulator }> {
  const origin = await startOrigin([await release()], { ranges: true, ...faults });
  return { origin, e: await emulator() };
}

/** The bytes the registry serves for a platform of acme/example 1.2.3 mirrored into `e`. */
async function served(e: Emulator, os: string, arch: string): Promise<Buffer> {
  const base = `/api/registry/v1/providers/${e.organization}/example/1.2.3/download/${os}/${arch}`;
  const doc = (await call(e.url, 'GET', base, { token: e.ownerToken })).json as { download_url: string };
  return (await download(doc.download_url)).bytes;
}

describe('provider mirror streams each zip from the origin to the registry', () => {
  it('reads each zip once, by ranges and one body, and never writes a zip to disk', async () => {
    // The body comes in two halves 300 ms apart: the run is caught with its scratch folder in use.
    const { origin, e } = await start({ slowZips: 300 });
    const run = await mirror(origin, e, '--json');
    expect(run.exitCode, run.stderr).toBe(0);
    for (const zip of [BIG, SMALL]) {
      expect(
        origin.requests.filter((p) => p.endsWith(`/${zip}`)),
        zip,
      ).toHaveLength(1);
      expect(
        origin.ranged.filter((r) => r.includes(`/${zip} bytes=-`)),
        zip,
      ).toHaveLength(1);
    }
    // The scratch folder held the signed list while the zips streamed, and never a zip.
    expect(run.seen).toContain('terraform-provider-example_1.2.3_SHA256SUMS');
    expect([...run.seen].filter((name) => name.endsWith('.zip'))).toEqual([]);
    expect(fs.readdirSync(run.tmp)).toEqual([]);
    const signed = origin.releases[0]!.zips;
    expect((await served(e, 'linux', 'amd64')).equals(signed.get(BIG)!)).toBe(true);
    expect((await served(e, 'darwin', 'arm64')).equals(signed.get(SMALL)!)).toBe(true);
  });

  it('a body that is not the signed bytes: exit 3 naming the zip, never uploaded complete, nothing left', async () => {
    const { origin, e } = await start({ flippedByte: { at: '1.2.3 linux_amd64', offset: SIZE / 2 } });
    const id = watchPlatformId(e, 'linux', 'amd64');
    const run = await mirror(origin, e);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(
      new RegExp(
        `${BIG.replaceAll('.', '\\.')} does not match terraform-provider-example_1\\.2\\.3_SHA256SUMS`,
      ),
    );
    // Its upload was under way (bytes reached the host) but never complete, and the run's writes were undone.
    const puts = e.requestLog.records.filter((r) => r.method === 'PUT' && r.owner === id());
    expect(puts.length, 'its upload started').toBeGreaterThan(0);
    for (const put of puts) {
      expect(put.status).not.toBe(200);
      expect(put.bytes).toBeLessThan(put.contentLength ?? 0);
    }
    expect(
      puts.some((put) => put.bytes > 0),
      'bytes went out as they came in',
    ).toBe(true);
    const { providers, versions, platforms } = e.store.data;
    expect({ providers, versions, platforms }).toEqual({ providers: [], versions: [], platforms: [] });
    expect(fs.readdirSync(run.tmp)).toEqual([]);
  });

  it('a body cut short is fetched again by the upload’s retry, and the version completes', async () => {
    const { origin, e } = await start({ resetZipOnce: '1.2.3 linux_amd64' });
    const run = await mirror(origin, e);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(origin.requests.filter((p) => p.endsWith(`/${BIG}`))).toHaveLength(2);
    expect((await served(e, 'linux', 'amd64')).equals(origin.releases[0]!.zips.get(BIG)!)).toBe(true);
  });

  it('a version the registry holds in part: the zips it has are proven from the origin, the others uploaded', async () => {
    const { origin, e } = await start({});
    expect((await mirror(origin, e, '--platforms', 'darwin_arm64')).exitCode).toBe(0);
    const run = await mirror(origin, e, '--json');
    expect(run.exitCode, run.stderr).toBe(0);
    // darwin_arm64 was streamed once by each run: uploaded by the first, proven (not uploaded) by the second.
    expect(origin.requests.filter((p) => p.endsWith(`/${SMALL}`))).toHaveLength(2);
    const uploads = e.requestLog.records.filter((r) => r.method === 'PUT' && r.status === 200);
    expect(uploads.filter((r) => r.owner === e.store.data.platforms[0]!.id)).toHaveLength(1);
    expect((await served(e, 'linux', 'amd64')).equals(origin.releases[0]!.zips.get(BIG)!)).toBe(true);
  });

  it.each<[string, number, OriginFaults, RegExp]>([
    [
      'a zip that answers 404',
      4,
      { missingZip: '1.2.3 linux_amd64' },
      /linux_amd64\.zip on 127\.0\.0\.1:\d+ answered 404/,
    ],
    [
      'a zip link that redirects to file:',
      3,
      { redirectZip: { at: '1.2.3 linux_amd64', to: 'file:///etc/passwd' } },
      /linux_amd64\.zip on 127\.0\.0\.1:\d+ redirects to a file: link; only http and https links are fetched/,
    ],
  ])('%s: exit %i naming it, before any write', async (_what, code, faults, message) => {
    const { origin, e } = await start(faults);
    const run = await mirror(origin, e);
    expect(run.exitCode, run.stderr).toBe(code);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/This is a bug|^\s+at /m);
    expect(writeRequests(e)).toEqual([]);
  });

  it('a body cut short every time: exit 4 naming the zip and the origin, the registry as it was', async () => {
    const { origin, e } = await start({ resetZip: '1.2.3 linux_amd64' });
    const run = await mirror(origin, e);
    expect(run.exitCode, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/linux_amd64\.zip from 127\.0\.0\.1:\d+ failed: ECONNRESET/);
    // Retried by the upload, each time from the origin again.
    expect(origin.requests.filter((p) => p.endsWith(`/${BIG}`)).length).toBeGreaterThan(1);
    // The version cannot be completed from the origin now: what the run created is removed, as when a download
    // failed before any write.
    const { providers, versions, platforms } = e.store.data;
    expect({ providers, versions, platforms }).toEqual({ providers: [], versions: [], platforms: [] });
    const again = await startOrigin(origin.releases, { ranges: true });
    const second = await mirror(again, e);
    expect(second.exitCode, second.stderr).toBe(0);
    expect((await served(e, 'linux', 'amd64')).equals(origin.releases[0]!.zips.get(BIG)!)).toBe(true);
  });

  it('ranges that are not the body’s bytes (a directory other than the signed zip’s): exit 3, nothing left', async () => {
    const signed = (await release()).zips.get(BIG)!;
    const doctored = Buffer.from(signed);
    // The executable's external attributes in the central directory (its mode): only the ranges carry it.
    const central = doctored.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    doctored.writeUInt32LE((doctored.readUInt32LE(central + 38) ^ (0o022 << 16)) >>> 0, central + 38);
    const { origin, e } = await start({ rangesFrom: { at: '1.2.3 linux_amd64', bytes: doctored } });
    const run = await mirror(origin, e);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(
      new RegExp(
        `${BIG.replaceAll('.', '\\.')} from 127\\.0\\.0\\.1:\\d+ is not at byte \\d+ what its range answers were`,
      ),
    );
    const { providers, versions, platforms } = e.store.data;
    expect({ providers, versions, platforms }).toEqual({ providers: [], versions: [], platforms: [] });
  });

  it('a body the origin refuses (404) while ranges answer: exit 4 naming it, no upload link refreshed, nothing left', async () => {
    const { origin, e } = await start({ bodyStatus: { at: '1.2.3 linux_amd64', status: 404 } });
    const run = await mirror(origin, e);
    expect(run.exitCode, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/linux_amd64\.zip on 127\.0\.0\.1:\d+ answered 404/);
    expect(run.stderr).not.toMatch(/fresh|refused/i);
    // Refused once: a refusal is not retried.
    expect(origin.requests.filter((p) => p.endsWith(`/${BIG}`))).toHaveLength(1);
    const { providers, versions, platforms } = e.store.data;
    expect({ providers, versions, platforms }).toEqual({ providers: [], versions: [], platforms: [] });
  });

  it('an origin that ignores ranges: says so, downloads the zips first, and completes', async () => {
    const { origin, e } = await start({ ranges: false });
    const run = await mirror(origin, e);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('does not answer range requests; its zips are downloaded first');
    // One request asked for a range and was answered whole; every zip was then downloaded once.
    expect(origin.ranged).toHaveLength(1);
    expect(run.seen).toContain(BIG);
    expect((await served(e, 'linux', 'amd64')).equals(origin.releases[0]!.zips.get(BIG)!)).toBe(true);
  });
});
