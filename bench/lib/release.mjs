// Generated releases for the benchmarks: `example` <version> for the 13 platforms of the provider scaffold's
// build matrix, each a stored zip holding one executable of incompressible (random) bytes (or, with `deflate`,
// a deflated zip of an executable that compresses to about half, as Go binaries do), listed in a SHA256SUMS
// signed with the test-only `signer` key: what goreleaser writes, at any size.
import { createHash, randomFillSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import * as openpgp from 'openpgp';
import { KEYS, MiB } from './env.mjs';

/** The scaffold's build matrix (peers.md §5): 13 os/arch pairs. */
export const PLATFORMS = [
  'darwin_amd64',
  'darwin_arm64',
  'freebsd_386',
  'freebsd_amd64',
  'freebsd_arm',
  'freebsd_arm64',
  'linux_386',
  'linux_amd64',
  'linux_arm',
  'linux_arm64',
  'windows_386',
  'windows_amd64',
  'windows_arm64',
];

/** The provider name of every generated release. */
export const NAME = 'example';

/** @typedef {Awaited<ReturnType<typeof makeRelease>>} Release a generated release, as the benchmarks know it */

/**
 * The records of a one-member zip around its data: the local header, and the central directory with the end
 * record (an executable of unix mode 0755).
 * @param {{ name: Buffer, method: 0 | 8, crc: number, compressed: number, size: number }} member
 */
function zipRecords({ name, method, crc, compressed, size }) {
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x0800, 6);
  local.writeUInt16LE(method, 8);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(compressed, 18);
  local.writeUInt32LE(size, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE((3 << 8) | 20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0x0800, 8);
  central.writeUInt16LE(method, 10);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(compressed, 20);
  central.writeUInt32LE(size, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt32LE((0o100755 << 16) >>> 0, 38);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(local.length + name.length + compressed, 16);
  return { head: Buffer.concat([local, name]), tail: Buffer.concat([central, name, end]) };
}

/**
 * Writes a stored (uncompressed) zip with one executable member of `size` random bytes, streaming (the CRC-32,
 * known at the end, is written into the header afterwards).
 * @param {string} file
 * @param {string} member
 * @param {number} size
 */
function writeZip(file, member, size) {
  const name = Buffer.from(member);
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, zipRecords({ name, method: 0, crc: 0, compressed: size, size }).head);
  const chunk = Buffer.alloc(4 * MiB);
  let crc = 0;
  for (let left = size; left > 0; left -= chunk.length) {
    const part = chunk.subarray(0, Math.min(chunk.length, left));
    randomFillSync(part);
    crc = crc32(part, crc);
    fs.writeSync(fd, part);
  }
  const { head, tail } = zipRecords({ name, method: 0, crc, compressed: size, size });
  fs.writeSync(fd, head, 0, head.length, 0);
  fs.writeSync(fd, tail, 0, tail.length, head.length + size);
  fs.closeSync(fd);
}

/**
 * Writes a deflated zip with one executable member of `size` bytes that compresses to about half (each 4 KiB:
 * 2 KiB random, 2 KiB of a repeated pattern), as goreleaser's zips of Go binaries do.
 * @param {string} file
 * @param {string} member
 * @param {number} size
 */
function writeDeflatedZip(file, member, size) {
  const content = Buffer.alloc(size);
  randomFillSync(content);
  for (let at = 2048; at < size; at += 4096) content.fill('provider', at, Math.min(at + 2048, size));
  const body = deflateRawSync(content, { level: 1 });
  const records = zipRecords({
    name: Buffer.from(member),
    method: 8,
    crc: crc32(content),
    compressed: body.length,
    size,
  });
  fs.writeFileSync(file, Buffer.concat([records.head, body, records.tail]));
}

/**
 * The file's SHA-256, hex.
 * @param {string} file
 */
function sha256(file) {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(4 * MiB);
  const fd = fs.openSync(file, 'r');
  for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer))
    hash.update(buffer.subarray(0, n));
  fs.closeSync(fd);
  return hash.digest('hex');
}

/**
 * A signed release of `example` `version` in `dir`: one zip of `size` bytes per platform, the manifest,
 * SHA256SUMS and its binary detached signature. Returns what the benchmarks need to know about it.
 * @param {string} dir
 * @param {{ version?: string, size: number, platforms?: string[], deflate?: boolean }} options
 */
export async function makeRelease(dir, { version = '1.0.0', size, platforms = PLATFORMS, deflate = false }) {
  fs.mkdirSync(dir, { recursive: true });
  const prefix = `terraform-provider-${NAME}_${version}`;
  const lines = [];
  const zips = [];
  for (const platform of platforms) {
    const filename = `${prefix}_${platform}.zip`;
    const exe = `terraform-provider-${NAME}_v${version}${platform.startsWith('windows') ? '.exe' : ''}`;
    const file = path.join(dir, filename);
    if (deflate) writeDeflatedZip(file, exe, size);
    else writeZip(file, exe, size);
    zips.push(file);
    lines.push(`${sha256(file)}  ${filename}`);
  }
  const manifest = `${prefix}_manifest.json`;
  fs.writeFileSync(path.join(dir, manifest), '{"version":1,"metadata":{"protocol_versions":["6.0"]}}\n');
  lines.push(`${sha256(path.join(dir, manifest))}  ${manifest}`);
  const sums = Buffer.from(
    lines
      .sort((a, b) => a.slice(66).localeCompare(b.slice(66)))
      .map((l) => `${l}\n`)
      .join(''),
  );
  const shasums = path.join(dir, `${prefix}_SHA256SUMS`);
  fs.writeFileSync(shasums, sums);
  const signingKeys = await openpgp.readPrivateKey({
    armoredKey: fs.readFileSync(path.join(KEYS, 'signer.sec.asc'), 'utf8'),
  });
  const message = await openpgp.createMessage({ binary: sums });
  // openpgp's types say Uint8Array for a binary signature of bytes only with its optional peer
  // @openpgp/web-stream-tools installed (its stream types); without it the type is unresolved.
  /** @type {Uint8Array} */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- unresolved without that peer (see above)
  const signature = await openpgp.sign({ message, signingKeys, detached: true, format: 'binary' });
  fs.writeFileSync(`${shasums}.sig`, signature);
  const files = [...zips, path.join(dir, manifest), shasums, `${shasums}.sig`];
  const bytes = files.reduce((sum, f) => sum + fs.statSync(f).size, 0);
  return { dir, name: NAME, version, prefix, zips, shasums, files, bytes, platforms: platforms.length, size };
}
