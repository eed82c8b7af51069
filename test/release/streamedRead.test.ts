/**
 * The read that proves a zip as it uploads it (src/release/hashing/streamedRead.ts): every chunk handed on is the
 * file's, the one that completes the file only once the file hashed to its line and every entry checked out; a
 * file that grew, shrank, has other bytes or a damaged entry fails the read before the consumer holds the whole
 * body, and `proved` is told only of a file that held.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VerificationError } from '../../src/errors.js';
import { CHUNK_BYTES } from '../../src/release/hashing/digest.js';
import { planZipHash } from '../../src/release/hashing/lockHashes.js';
import {
  identityOf,
  streamedChunks,
  type StreamExpectation,
  type StreamResult,
} from '../../src/release/hashing/streamedRead.js';
import { FileChangedError } from '../../src/verifiedFiles.js';
import { tempRoot } from '../helpers/tmp.js';
import { makeZip } from './helpers.js';

const NAME = 'terraform-provider-example_v1.2.3';
/** A zip of one stored entry whose whole size is exactly two chunks: the last chunk is full, then the probe. */
const OVERHEAD = 30 + NAME.length + 46 + NAME.length + 22;

/**
 * Moves the file's modification time an hour on: a change made within the same clock tick as the file's writing
 * could keep its times, where a real change during a run comes much later than the release's first read.
 */
function later(file: string): void {
  const hour = new Date(Date.now() + 3_600_000);
  fs.utimesSync(file, hour, hour);
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A zip written to disk, its expectation as the release's first read would make it, and its entry's content. */
async function zipOnDisk(size = 2 * CHUNK_BYTES) {
  const content = randomBytes(size - OVERHEAD);
  const bytes = makeZip([{ name: NAME, data: content }]);
  expect(bytes.length).toBe(size);
  const file = path.join(tempRoot(), 'p.zip');
  fs.writeFileSync(file, bytes);
  const { plan } = await planZipHash(file, 'p.zip');
  const failures = {
    shasum: (actual: string) => new VerificationError(`p.zip does not match its line: ${actual}`),
    entry: (entry: string, failure: string) => new VerificationError(`entry ${entry}: ${failure}`),
  };
  const expect_: StreamExpectation = {
    filename: 'p.zip',
    sha256: sha256(bytes),
    bytes: bytes.length,
    identity: identityOf(fs.statSync(file, { bigint: true })),
    plan,
    failures,
  };
  return { file, bytes, content, expect: expect_ };
}

/** Reads the chunks to the end or the first error; what was handed on, what was proved, and the error. */
async function readAll(file: string, expectation: StreamExpectation, change?: (handed: number) => void) {
  const proved: StreamResult[] = [];
  const chunks = streamedChunks(file, expectation, (r) => proved.push(r));
  const handed: Buffer[] = [];
  let error: unknown;
  try {
    for await (const chunk of chunks) {
      handed.push(Buffer.from(chunk));
      change?.(handed.length);
    }
  } catch (caught) {
    error = caught;
  }
  return { handed: Buffer.concat(handed), proved, error };
}

describe('the read that proves a zip as it uploads it', () => {
  it('hands on exactly the file, and proves it before the chunk that completes it', async () => {
    const { file, bytes, content, expect: expectation } = await zipOnDisk();
    const proved: StreamResult[] = [];
    const handed: Buffer[] = [];
    for await (const chunk of streamedChunks(file, expectation, (r) => proved.push(r))) {
      // The chunk that completes the file comes only after the proof.
      if (handed.reduce((n, b) => n + b.length, 0) + chunk.length === bytes.length)
        expect(proved).toHaveLength(1);
      else expect(proved).toEqual([]);
      handed.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(handed).equals(bytes)).toBe(true);
    expect(proved).toEqual([{ sha256: sha256(bytes), bytes: bytes.length, entries: [sha256(content)] }]);
  });

  it.each([
    {
      what: 'grown by one byte past a whole number of chunks',
      change: (file: string) => fs.appendFileSync(file, 'x'),
      error: FileChangedError,
      message: /p\.zip changed since it was verified: it now has more than 524288 bytes/,
    },
    {
      what: 'shrunk inside its last chunk',
      change: (file: string) => fs.truncateSync(file, 2 * CHUNK_BYTES - 10),
      error: FileChangedError,
      message: /p\.zip changed since it was verified: it now has 524278 bytes, not 524288/,
    },
    {
      what: 'rewritten with other bytes of the same size',
      change: (file: string) => {
        const bytes = fs.readFileSync(file);
        bytes[CHUNK_BYTES + 5] = bytes[CHUNK_BYTES + 5]! ^ 0xff;
        fs.writeFileSync(file, bytes);
        later(file);
      },
      error: FileChangedError,
      message: /p\.zip changed since it was verified: it now hashes to [0-9a-f]{64}, not [0-9a-f]{64}/,
    },
  ])('a file $what before it is read: fails, never the whole body, nothing proved', async (c) => {
    const { file, bytes, expect: expectation } = await zipOnDisk();
    c.change(file);
    const { handed, proved, error } = await readAll(file, expectation);
    expect(error).toBeInstanceOf(c.error);
    expect((error as Error).message).toMatch(c.message);
    expect(handed.length).toBeLessThan(bytes.length);
    expect(proved).toEqual([]);
  });

  it('a file changed while it is read (after its first chunk went): fails as changed', async () => {
    const { file, bytes, expect: expectation } = await zipOnDisk();
    const flipped = Buffer.from(bytes);
    flipped[bytes.length - 100] = flipped[bytes.length - 100]! ^ 0xff;
    const { handed, proved, error } = await readAll(file, expectation, (n) => {
      if (n !== 1) return;
      fs.writeFileSync(file, flipped);
      later(file);
    });
    expect(error).toBeInstanceOf(FileChangedError);
    expect((error as Error).message).toMatch(/it now hashes to/);
    expect(handed.length).toBeLessThan(bytes.length);
    expect(proved).toEqual([]);
  });

  it('a file that is as it was read but not its line: the line’s error, not "changed"', async () => {
    const { file, bytes, expect: expectation } = await zipOnDisk();
    const { handed, proved, error } = await readAll(file, { ...expectation, sha256: '0'.repeat(64) });
    expect(error).not.toBeInstanceOf(FileChangedError);
    expect((error as Error).message).toBe(`p.zip does not match its line: ${sha256(bytes)}`);
    expect(handed.length).toBeLessThan(bytes.length);
    expect(proved).toEqual([]);
  });

  it('an entry damaged deep inside, its zip hashing to its line: the entry’s error', async () => {
    const { file, bytes, expect: expectation } = await zipOnDisk();
    const damaged = Buffer.from(bytes);
    damaged[2 * CHUNK_BYTES - 200] = damaged[2 * CHUNK_BYTES - 200]! ^ 0xff;
    fs.writeFileSync(file, damaged);
    const sameFile = {
      ...expectation,
      sha256: sha256(damaged),
      identity: identityOf(fs.statSync(file, { bigint: true })),
    };
    const { handed, proved, error } = await readAll(file, sameFile);
    expect((error as Error).message).toBe(`entry "${NAME}": its content does not match its CRC-32`);
    expect(handed.length).toBeLessThan(bytes.length);
    expect(proved).toEqual([]);
  });

  it('a read given up part way (the upload failed) leaves nothing proved and can start again', async () => {
    const { file, bytes, content, expect: expectation } = await zipOnDisk();
    const proved: StreamResult[] = [];
    const first = streamedChunks(file, expectation, (r) => proved.push(r))[Symbol.asyncIterator]();
    expect((await first.next()).done).toBe(false);
    await first.return?.();
    expect(proved).toEqual([]);
    const again = await readAll(file, expectation);
    expect(again.handed.equals(bytes)).toBe(true);
    expect(again.proved).toEqual([
      { sha256: sha256(bytes), bytes: bytes.length, entries: [sha256(content)] },
    ]);
  });
});
