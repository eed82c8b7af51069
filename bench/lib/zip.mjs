// Zip archives written as Go's archive/zip writes them (goreleaser's zips): each member's local header with no
// sizes, its data, a data descriptor with the CRC-32 and sizes, then the central directory. Streamed: a member's
// content comes in chunks and is deflated on the way to the file, so a 128 MiB member never sits in memory.
// Every member gets a fixed modification time (an extended-timestamp extra field, as Go adds), so the same
// content always gives the same bytes.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createDeflateRaw } from 'node:zlib';

/**
 * One member of a zip: its name, unix mode, method (0 stored, 8 deflated) and content, as chunks.
 * @typedef {object} Member
 * @property {string} name
 * @property {number} mode e.g. 0o755
 * @property {0 | 8} method
 * @property {() => Iterable<Buffer>} chunks
 */

/**
 * What was written: the file's SHA-256 (hex) and size, and its members' sizes before and after compression.
 * @typedef {{ sha256: string, bytes: number, contentBytes: number, dataBytes: number }} Written
 */

/** Go's archive/zip writes flate at level 5. */
const LEVEL = 5;
/** 2026-01-01 00:00:00 UTC, as MS-DOS time and date, and as unix seconds. */
const DOS_TIME = 0;
const DOS_DATE = ((2026 - 1980) << 9) | (1 << 5) | 1;
const UNIX_TIME = Date.UTC(2026, 0, 1) / 1000;
/** Has a data descriptor (0x8): the local header's CRC-32 and sizes are 0, the real ones follow the data. */
const FLAGS = 0x0008;

/** The extended-timestamp extra field (0x5455): the modification time only. */
function timestampExtra() {
  const extra = Buffer.alloc(9);
  extra.writeUInt16LE(0x5455, 0);
  extra.writeUInt16LE(5, 2);
  extra.writeUInt8(1, 4);
  extra.writeUInt32LE(UNIX_TIME, 5);
  return extra;
}

/**
 * A member's local header (no CRC-32 or sizes: a data descriptor follows its data).
 * @param {Buffer} name
 * @param {0 | 8} method
 */
function localHeader(name, method) {
  const extra = timestampExtra();
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(FLAGS, 6);
  header.writeUInt16LE(method, 8);
  header.writeUInt16LE(DOS_TIME, 10);
  header.writeUInt16LE(DOS_DATE, 12);
  header.writeUInt16LE(name.length, 26);
  header.writeUInt16LE(extra.length, 28);
  return Buffer.concat([header, name, extra]);
}

/**
 * The data descriptor after a member's data.
 * @param {{ crc: number, compressed: number, size: number }} sizes
 */
function dataDescriptor({ crc, compressed, size }) {
  const descriptor = Buffer.alloc(16);
  descriptor.writeUInt32LE(0x08074b50, 0);
  descriptor.writeUInt32LE(crc, 4);
  descriptor.writeUInt32LE(compressed, 8);
  descriptor.writeUInt32LE(size, 12);
  return descriptor;
}

/**
 * A member's central directory record (made on unix, so the external attributes hold its mode).
 * @param {{ name: Buffer, method: 0 | 8, mode: number, crc: number, compressed: number, size: number, offset: number }} entry
 */
function centralRecord({ name, method, mode, crc, compressed, size, offset }) {
  const extra = timestampExtra();
  const record = Buffer.alloc(46);
  record.writeUInt32LE(0x02014b50, 0);
  record.writeUInt16LE((3 << 8) | 20, 4);
  record.writeUInt16LE(20, 6);
  record.writeUInt16LE(FLAGS, 8);
  record.writeUInt16LE(method, 10);
  record.writeUInt16LE(DOS_TIME, 12);
  record.writeUInt16LE(DOS_DATE, 14);
  record.writeUInt32LE(crc, 16);
  record.writeUInt32LE(compressed, 20);
  record.writeUInt32LE(size, 24);
  record.writeUInt16LE(name.length, 28);
  record.writeUInt16LE(extra.length, 30);
  record.writeUInt32LE(((0o100000 | mode) << 16) >>> 0, 38);
  record.writeUInt32LE(offset, 42);
  return Buffer.concat([record, name, extra]);
}

/**
 * The end of central directory record.
 * @param {number} entries
 * @param {number} size the central directory's size
 * @param {number} offset where it starts
 */
function endRecord(entries, size, offset) {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries, 8);
  end.writeUInt16LE(entries, 10);
  end.writeUInt32LE(size, 12);
  end.writeUInt32LE(offset, 16);
  return end;
}

/**
 * Writes `members` to a new zip at `file`, in order; resolves with its SHA-256 and sizes.
 * @param {string} file
 * @param {Member[]} members
 * @returns {Promise<Written>}
 */
export async function writeZip(file, members) {
  const handle = await fs.open(file, 'w');
  const hash = createHash('sha256');
  let offset = 0;
  const write = async (/** @type {Buffer} */ bytes) => {
    hash.update(bytes);
    offset += bytes.length;
    await handle.write(bytes);
  };
  /** @type {Buffer[]} */
  const central = [];
  let contentBytes = 0;
  let dataBytes = 0;
  try {
    for (const member of members) {
      const name = Buffer.from(member.name);
      const start = offset;
      await write(localHeader(name, member.method));
      let crc = 0;
      let size = 0;
      const counted = function* () {
        for (const chunk of member.chunks()) {
          crc = crc32(chunk, crc);
          size += chunk.length;
          yield chunk;
        }
      };
      const dataStart = offset;
      if (member.method === 8) {
        await pipeline(
          Readable.from(counted()),
          createDeflateRaw({ level: LEVEL, chunkSize: 256 * 1024 }),
          async (/** @type {AsyncIterable<Buffer>} */ deflated) => {
            for await (const chunk of deflated) await write(chunk);
          },
        );
      } else for (const chunk of counted()) await write(chunk);
      const compressed = offset - dataStart;
      await write(dataDescriptor({ crc, compressed, size }));
      central.push(
        centralRecord({
          name,
          method: member.method,
          mode: member.mode,
          crc,
          compressed,
          size,
          offset: start,
        }),
      );
      contentBytes += size;
      dataBytes += compressed;
    }
    const directory = Buffer.concat(central);
    const directoryStart = offset;
    await write(directory);
    await write(endRecord(central.length, directory.length, directoryStart));
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), bytes: offset, contentBytes, dataBytes };
}
