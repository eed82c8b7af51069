/**
 * A provider registry on loopback for the mirror tests: service discovery, `versions`, `download/:os/:arch` and
 * the files, for releases of `acme/example` built here (zips with the provider's executable, a SHA256SUMS that
 * also lists a manifest the protocol never serves, as HashiCorp's do, signed by the fixture signer). Its faults
 * make it hostile: no keys, a zip other than the signed one, a shasum other than the signed line, 429s, a
 * platform listed but not served. It logs every request.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  createServer as createNetServer,
  type AddressInfo,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import * as path from 'node:path';
import { parse as parseRange } from 'range-parser';
import { afterEach } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { FAST } from '../commands/publish/helpers.js';
import { runCli } from '../helpers/cli.js';
import { FIXTURES, makeZip, signDetached } from '../release/helpers.js';

/** One release the origin serves. */
export interface OriginRelease {
  version: string;
  protocols: string[];
  platforms: string[];
  /** Zips by file name. */
  zips: Map<string, Buffer>;
  sums: Buffer;
  sig: Buffer;
  /** The fixture key (fixtures/keys/<key>) that signed it, and that the origin serves with it. */
  key: string;
  /**
   * When the origin published it (RFC 3339): served as `published_at` by the provider details,
   * `GET <providers.v1>acme/example/<version>`, as registry.terraform.io serves them. Unset: no details (404).
   */
  publishedAt?: string;
}

/** What makes the origin hostile. */
export interface OriginFaults {
  noKeys?: boolean;
  /** `<version> <os_arch>`: the zip served is not the one signed. */
  tamperedZip?: string;
  /** `<version> <os_arch>`: the stated shasum is not the signed line's. */
  wrongShasum?: string;
  /** `<version> <os_arch>`: listed in versions, 404 on its download. */
  unserved?: string;
  /** `<version> <os_arch>`: the document's filename climbs out of the folder (`../…`). */
  climbingFilename?: string;
  /** `<version> <os_arch>`: the document names another version's SHA256SUMS and signature. */
  otherSums?: string;
  /** The versions document answers 302 to the same path at this base URL (`http://…` for the https origin's own). */
  redirectVersions?: string;
  /** The signature URLs carry HashiCorp's short key id (`…_SHA256SUMS.72D7468F.sig`), though the fixture signed. */
  hashicorpSigName?: boolean;
  /** This many requests answered 429 (Retry-After: 1) before any is served. */
  rateLimited?: number;
  /** Service discovery gives an absolute URL rather than a path. */
  absoluteDiscovery?: boolean;
  /** Service discovery offers no provider registry protocol (a host that is not a registry). */
  noProviders?: boolean;
  /** Each zip is sent in two halves this many ms apart (with its Content-Length): its download stays on screen. */
  slowZips?: number;
  /** `<version> <os_arch>`: the zip's link answers 404. */
  missingZip?: string;
  /** `<version> <os_arch>`: the zip's connection is reset after its headers and half its bytes. */
  resetZip?: string;
  /** Like `resetZip`, the first time only. */
  resetZipOnce?: string;
  /** `<version> <os_arch>`: the document's download_url is this (a `file:` or `data:` link). */
  downloadUrl?: { at: string; url: string };
  /** The first release's SHA256SUMS (`sums`) or signature (`sig`), or the versions document, streams without end. */
  endless?: 'sums' | 'sig' | 'versions';
  /** The versions document, or the first release's SHA256SUMS, stalls after its headers and a first byte. */
  stall?: 'versions' | 'sums';
  /** The versions document lists no `platforms` (the protocol only recommends them). */
  noPlatformsListed?: boolean;
  /** `<version> <os_arch>`: the zip's link answers 302 to this location (a `file:`, `data:`, `ftp:` link…). */
  redirectZip?: { at: string; to: string };
  /** Fixture keys served besides the key that signed (`other`): an origin with several keys. */
  extraKeys?: string[];
  /** The key id the origin states for its key: its 40-hex fingerprint rather than its long id. */
  fingerprintIds?: boolean;
  /** Zips answer one byte range (206), as GitHub's and releases.hashicorp.com's storage do. */
  ranges?: boolean;
  /** `<version> <os_arch>`: the zip's whole body has this byte flipped (its ranges are the signed bytes). */
  flippedByte?: { at: string; offset: number };
  /** `<version> <os_arch>`: the zip's ranges are answered from these bytes (its whole body is the signed zip). */
  rangesFrom?: { at: string; bytes: Buffer };
  /** `<version> <os_arch>`: the zip's whole body (a request without a Range) is answered with this status. */
  bodyStatus?: { at: string; status: number };
}

/** Bytes an endless answer sent before its client went away, by what was asked for. */
export const endlessSent = new Map<string, number>();

const keyFile = (name: string, kind: string): string =>
  fs.readFileSync(path.join(FIXTURES, 'keys', `${name}.${kind}`), 'utf8');
export const SIGNER_ARMOR = keyFile('signer', 'pub.asc');
export const SIGNER_KEY_ID = keyFile('signer', 'keyid').trim();

/**
 * A signed release of `example` for the platforms given, signed by the fixture key `key`; the executables of a
 * release signed by another key than `signer` say so (other bytes).
 */
export async function buildRelease(
  version: string,
  platforms: string[],
  protocols = ['6.0'],
  key = 'signer',
): Promise<OriginRelease> {
  const zips = new Map<string, Buffer>();
  for (const platform of platforms) {
    const exe = `terraform-provider-example_v${version}${platform.startsWith('windows') ? '.exe' : ''}`;
    const data = `binary ${version} ${platform}${key === 'signer' ? '' : ` built by ${key}`}`;
    const zip = makeZip([{ name: exe, data, deflate: true }]);
    zips.set(`terraform-provider-example_${version}_${platform}.zip`, zip);
  }
  const manifest = `terraform-provider-example_${version}_manifest.json`;
  const lines = [...zips].map(([name, bytes]) => `${sha(bytes)}  ${name}`);
  lines.push(`${sha(Buffer.from('{"version":1}'))}  ${manifest}`);
  const sums = Buffer.from(lines.sort((a, b) => (a.slice(66) < b.slice(66) ? -1 : 1)).join('\n') + '\n');
  const sig = Buffer.from(await signDetached(sums, keyFile(key, 'sec.asc')));
  return { version, protocols, platforms, zips, sums, sig, key };
}

/** The release with the zip `name` replaced by `zip`, listed and signed again: the origin signed it so. */
export async function withZip(release: OriginRelease, name: string, zip: Buffer): Promise<OriginRelease> {
  const zips = new Map(release.zips).set(name, zip);
  const lines = release.sums.toString('utf8').split('\n');
  const sums = Buffer.from(
    lines.map((l) => (l.endsWith(`  ${name}`) ? `${sha(zip)}  ${name}` : l)).join('\n'),
  );
  const sig = Buffer.from(await signDetached(sums, keyFile(release.key, 'sec.asc')));
  return { ...release, zips, sums, sig };
}

/** The same release (its zips and SHA256SUMS byte for byte) signed by the fixture key `key` instead. */
export async function resign(release: OriginRelease, key: string): Promise<OriginRelease> {
  const sig = Buffer.from(await signDetached(release.sums, keyFile(key, 'sec.asc')));
  return { ...release, sig, key };
}

export function sha(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A loopback certificate for 127.0.0.1 (test only: its key is in the repository), valid 2020–2120. */
export const LOOPBACK_CERT = fs.readFileSync(new URL('fixtures/loopback.cert.pem', import.meta.url), 'utf8');
const LOOPBACK_KEY = fs.readFileSync(new URL('fixtures/loopback.key.pem', import.meta.url), 'utf8');

/** The folder `--to-dir` keeps an origin's copies in: its host, a port after `_` (`127.0.0.1_8080`). */
export function hostDir(url: string): string {
  return new URL(url).host.replace(':', '_');
}

/** One request as the origin saw it: over TLS or not, its path, and whether it carried an Authorization header. */
export interface SeenRequest {
  scheme: 'http' | 'https';
  path: string;
  authorized: boolean;
}

/** A running origin. */
export interface TestOrigin {
  url: string;
  /** The paths asked for whole: every request without a Range header. */
  requests: string[];
  /** The paths asked for by a Range header, with it (`…zip bytes=-131072`). */
  ranged: string[];
  seen: SeenRequest[];
  /** Requests answered 429. */
  limited: number;
  releases: OriginRelease[];
  faults: OriginFaults;
}

const servers: (Server | NetServer)[] = [];
/** The connections of the https origins' shared ports, which their servers do not track. */
const sockets = new Set<Socket>();
afterEach(async () => {
  // A stalled or endless answer holds its connection open, and a client keeps its idle ones: closed with the server.
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await Promise.all(
    servers.splice(0).map((s) => {
      const closed = new Promise((resolve) => s.close(resolve));
      if ('closeAllConnections' in s) s.closeAllConnections();
      return closed;
    }),
  );
});

/**
 * Starts an origin on loopback serving `releases` of `acme/example`, closed after the test. With `tls`, its URL is
 * https (LOOPBACK_CERT), and the same port answers plain http too, as one host serving both would.
 */
export async function startOrigin(
  releases: OriginRelease[],
  faults: OriginFaults = {},
  options: { tls?: boolean } = {},
): Promise<TestOrigin> {
  const origin: TestOrigin = {
    url: '',
    requests: [],
    ranged: [],
    seen: [],
    limited: 0,
    releases,
    faults,
  };
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', origin.url);
    if (req.headers.range === undefined) origin.requests.push(url.pathname);
    else origin.ranged.push(`${url.pathname} ${req.headers.range}`);
    const encrypted = 'encrypted' in req.socket && req.socket.encrypted === true;
    const scheme = encrypted ? 'https' : 'http';
    origin.seen.push({ scheme, path: url.pathname, authorized: req.headers.authorization !== undefined });
    if (faults.redirectVersions !== undefined && url.pathname.endsWith('/versions') && scheme === 'https') {
      res.writeHead(302, { location: `${faults.redirectVersions}${url.pathname}` });
      return void res.end();
    }
    const json = (status: number, doc: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(doc));
    };
    if (origin.limited < (faults.rateLimited ?? 0)) {
      origin.limited++;
      res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
      res.end('{"errors":["rate limited"]}');
      return;
    }
    if (faults.redirectZip !== undefined && url.pathname.endsWith(zipOf(faults.redirectZip.at))) {
      res.writeHead(302, { location: faults.redirectZip.to });
      return void res.end();
    }
    const kind = kindOf(url.pathname, origin.releases[0]?.version ?? '');
    if (faults.endless !== undefined && faults.endless === kind) return endless(res, kind);
    const answer = route(origin, url.pathname);
    if (answer === undefined) return json(404, { errors: ['not found'] });
    if (faults.stall !== undefined && faults.stall === kind) {
      // Headers and a first byte, then nothing: the connection stays open until the client gives up.
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 1_000_000 });
      return void res.write(Buffer.isBuffer(answer) ? answer.subarray(0, 1) : '{');
    }
    const range = faults.ranges === true && url.pathname.endsWith('.zip') ? req.headers.range : undefined;
    const other = faults.rangesFrom;
    const ranged = other !== undefined && url.pathname.endsWith(zipOf(other.at)) ? other.bytes : answer;
    const ranges =
      Buffer.isBuffer(ranged) && range !== undefined ? parseRange(ranged.length, range) : undefined;
    if (Buffer.isBuffer(ranged) && ranges?.code === 0 && ranges.ranges.length === 1) {
      const { start, end } = ranges.ranges[0]!;
      const headers = { 'content-range': `bytes ${start}-${end}/${ranged.length}` };
      res.writeHead(206, { ...headers, 'content-length': end - start + 1 });
      return void res.end(ranged.subarray(start, end + 1));
    }
    const body = faults.bodyStatus;
    if (body !== undefined && range === undefined && url.pathname.endsWith(zipOf(body.at)))
      return json(body.status, { errors: ['refused'] });
    if (Buffer.isBuffer(answer)) {
      const slow = faults.slowZips !== undefined && url.pathname.endsWith('.zip');
      const flip = faults.flippedByte;
      if (flip !== undefined && url.pathname.endsWith(zipOf(flip.at))) {
        const flipped = Buffer.from(answer);
        flipped[flip.offset] = flipped[flip.offset]! ^ 0xff;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': answer.length });
        return void res.end(flipped);
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': answer.length });
      const reset = faults.resetZip ?? faults.resetZipOnce;
      if (reset !== undefined && url.pathname.endsWith(zipOf(reset))) {
        if (faults.resetZipOnce !== undefined) delete faults.resetZipOnce;
        res.write(answer.subarray(0, Math.floor(answer.length / 2)));
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      if (!slow) return void res.end(answer);
      const half = Math.floor(answer.length / 2);
      res.write(answer.subarray(0, half));
      setTimeout(() => res.end(answer.subarray(half)), faults.slowZips);
      return;
    }
    json(200, answer);
  };
  const plain = createServer(handler);
  servers.push(plain);
  let listening: Server | NetServer = plain;
  if (options.tls === true) {
    const secure = createHttpsServer({ cert: LOOPBACK_CERT, key: LOOPBACK_KEY }, handler);
    // One port for both: a connection whose first byte opens a TLS handshake (22) goes to the https server.
    listening = createNetServer((socket) => {
      sockets.add(socket);
      const route = (): void => {
        const first = socket.read(1) as Buffer | null;
        if (first === null) return void socket.once('readable', route);
        socket.unshift(first);
        (first[0] === 22 ? secure : plain).emit('connection', socket);
      };
      route();
    });
    servers.push(secure, listening);
  }
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  const port = (listening.address() as AddressInfo).port;
  origin.url = `${options.tls === true ? 'https' : 'http'}://127.0.0.1:${port}`;
  return origin;
}

const BASE = '/registry/v1/providers/';

/** What a path asks for, as the `endless` and `stall` faults name it (the files of `version` only). */
function kindOf(pathname: string, version: string): 'sums' | 'sig' | 'versions' | undefined {
  if (pathname.endsWith('/versions')) return 'versions';
  if (pathname.endsWith(`_${version}_SHA256SUMS`)) return 'sums';
  if (pathname.includes(`_${version}_SHA256SUMS.`) && pathname.endsWith('sig')) return 'sig';
  return undefined;
}

/** The zip's file name a `<version> <os_arch>` fault names. */
function zipOf(at: string): string {
  const [version, platform] = at.split(' ');
  return `terraform-provider-example_${version}_${platform}.zip`;
}

/** An answer without end: 64 KiB chunks as fast as the client reads them, until it goes away. */
function endless(res: ServerResponse, kind: string): void {
  res.writeHead(200, {
    'content-type': kind === 'versions' ? 'application/json' : 'application/octet-stream',
  });
  const chunk = Buffer.alloc(64 * 1024, kind === 'versions' ? ' ' : 'a');
  let sent = 0;
  if (kind === 'versions') res.write('{"versions":[');
  const more = (): void => {
    for (let room = true; room && !res.destroyed; sent += chunk.length) room = res.write(chunk);
    endlessSent.set(kind, sent);
  };
  res.on('drain', more);
  res.on('close', () => endlessSent.set(kind, sent));
  more();
}

function route(origin: TestOrigin, pathname: string): unknown {
  const { faults } = origin;
  if (pathname === '/.well-known/terraform.json') {
    if (faults.noProviders === true) return { 'modules.v1': '/modules/' };
    return { 'providers.v1': faults.absoluteDiscovery === true ? `${origin.url}${BASE}` : BASE };
  }
  const file = /\/files\/([^/]+)$/.exec(pathname)?.[1];
  if (file !== undefined) return fileBytes(origin, file);
  if (pathname === `${BASE}acme/example/versions`) {
    return {
      versions: origin.releases.map((r) => ({
        version: r.version,
        protocols: r.protocols,
        ...(faults.noPlatformsListed === true
          ? {}
          : { platforms: r.platforms.map((p) => ({ os: p.split('_')[0], arch: p.split('_')[1] })) }),
      })),
    };
  }
  const details = new RegExp(`^${BASE}acme/example/([^/]+)$`).exec(pathname);
  if (details !== null) return providerDetails(origin, details[1]!);
  const m = new RegExp(`^${BASE}acme/example/([^/]+)/download/([^/]+)/([^/]+)$`).exec(pathname);
  if (m === null) return undefined;
  const [, version, os, arch] = m;
  const release = origin.releases.find((r) => r.version === version);
  const platform = `${os}_${arch}`;
  if (release === undefined || !release.platforms.includes(platform)) return undefined;
  if (faults.unserved === `${version} ${platform}`) return undefined;
  const own = `terraform-provider-example_${version}_${platform}.zip`;
  const filename = faults.climbingFilename === `${version} ${platform}` ? `../../${own}` : own;
  const sums = faults.otherSums === `${version} ${platform}` ? origin.releases[0]!.version : version;
  const sig = faults.hashicorpSigName === true ? '72D7468F.sig' : 'sig';
  const shasum =
    faults.wrongShasum === `${version} ${platform}` ? '0'.repeat(64) : sha(release.zips.get(own)!);
  return {
    protocols: release.protocols,
    os,
    arch,
    filename,
    // Relative to this document's URL: …/<version>/download/<os>/<arch> → …/<version>/files/<name>.
    download_url:
      faults.downloadUrl?.at === `${version} ${platform}` ? faults.downloadUrl.url : `../../files/${own}`,
    shasums_url: `../../files/terraform-provider-example_${sums}_SHA256SUMS`,
    shasums_signature_url: `../../files/terraform-provider-example_${sums}_SHA256SUMS.${sig}`,
    shasum,
    signing_keys: {
      gpg_public_keys:
        faults.noKeys === true
          ? null
          : [...(faults.extraKeys ?? []), release.key].map((key) => ({
              key_id: keyFile(key, faults.fingerprintIds === true ? 'fpr' : 'keyid').trim(),
              ascii_armor: keyFile(key, 'pub.asc'),
              trust_signature: '',
              source: 'Acme',
              source_url: 'https://acme.example/security',
            })),
    },
  };
}

/** The registry's provider details of a version, as registry.terraform.io's `/v1/providers/…/<version>` gives them. */
function providerDetails(origin: TestOrigin, version: string): unknown {
  const release = origin.releases.find((r) => r.version === version);
  if (release?.publishedAt === undefined) return undefined;
  return {
    id: `acme/example/${version}`,
    owner: 'acme',
    namespace: 'acme',
    name: 'example',
    version,
    tag: `v${version}`,
    published_at: release.publishedAt,
    tier: 'community',
    versions: origin.releases.map((r) => r.version),
  };
}

function fileBytes(origin: TestOrigin, name: string): Buffer | undefined {
  for (const release of origin.releases) {
    if (name === `terraform-provider-example_${release.version}_SHA256SUMS`) return release.sums;
    if (name.startsWith(`terraform-provider-example_${release.version}_SHA256SUMS.`) && name.endsWith('.sig'))
      return release.sig;
    const zip = release.zips.get(name);
    if (zip === undefined) continue;
    if (origin.faults.missingZip !== undefined && name === zipOf(origin.faults.missingZip)) return undefined;
    const platform = name.replace(`terraform-provider-example_${release.version}_`, '').replace('.zip', '');
    if (origin.faults.tamperedZip === `${release.version} ${platform}`)
      return Buffer.concat([zip, Buffer.from('x')]);
    return zip;
  }
  return undefined;
}

/** An origin of two versions of `acme/example`, 1.0.0 (darwin_arm64 and linux_amd64) and 1.1.0 (linux_amd64). */
export async function startTwoVersionOrigin(faults: OriginFaults = {}): Promise<TestOrigin> {
  const releases = [
    await buildRelease('1.0.0', ['darwin_arm64', 'linux_amd64']),
    await buildRelease('1.1.0', ['linux_amd64']),
  ];
  return startOrigin(releases, faults);
}

/**
 * `provider mirror acme/example --from <origin>` into the emulator's private registry with its owner token, run in
 * `cwd` (its home too), with `tmpDir` as the system's temporary folder when given, and `args` after.
 */
export function mirrorInto(
  origin: { url: string },
  e: Emulator,
  cwd: string,
  options: { tmpDir?: string } = {},
  ...args: string[]
) {
  const to = ['--hostname', e.url, '--organization', e.organization];
  return runCli(['mirror', 'acme/example', '--from', origin.url, ...to, ...args], {
    cwd,
    homeDir: cwd,
    ...options,
    env: { TFE_TOKEN: e.ownerToken, ...FAST },
  });
}
