import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InterruptedError, VerificationError } from '../../src/errors.js';
import { FILES_AT_ONCE, FileReadError, hashFile, HashingSession } from '../../src/release/hashing/hashing.js';
import { FileChangedError } from '../../src/verifiedFiles.js';
import { tempRoot } from '../helpers/tmp.js';

/** The hashing session the tests hash in: its read buffers, and the chunk digests `readVerified` checks. */
const session = new HashingSession();

function files(count: number, size: number): { paths: string[]; expected: Map<string, string> } {
  const root = tempRoot();
  const expected = new Map<string, string>();
  const paths = Array.from({ length: count }, (_, i) => {
    const file = path.join(root, `f${i}.bin`);
    const data = randomBytes(size + i * 1000);
    fs.writeFileSync(file, data);
    expected.set(file, createHash('sha256').update(data).digest('hex'));
    return file;
  });
  return { paths, expected };
}

describe('hashing', () => {
  it('hashes more files than it reads at once, each to its own digest (across several 1 MiB reads)', async () => {
    const { paths, expected } = files(FILES_AT_ONCE + 3, 3 * 1024 * 1024 + 17);
    let started = 0;
    const digests = await session.hashFiles(paths, { started: () => started++ });
    expect(started).toBe(1);
    for (const file of paths) {
      expect(digests.get(file)).toEqual({
        path: file,
        sha256: expected.get(file),
        bytes: fs.statSync(file).size,
      });
    }
  });

  it('reads files hashed at once into buffers of their own (and reuses them)', async () => {
    // Several files read at the same time, each over several chunks: a session's (several at once) and, beside
    // them, hashFile's (the lock hashes' reads): no file's bytes land in another's buffer.
    const { paths, expected } = files(4, 2 * 1024 * 1024 + 11);
    const [inline, session2] = await Promise.all([
      Promise.all(paths.map((file) => hashFile(file))),
      session.hashFiles(paths),
    ]);
    expect(new Map(inline.map((d) => [d.path, d.sha256]))).toEqual(expected);
    expect(new Map([...session2].map(([k, v]) => [k, v.sha256]))).toEqual(expected);
    // And again, with the buffers the first round left.
    const again = await session.hashFiles(paths);
    expect(new Map([...again].map(([k, v]) => [k, v.sha256]))).toEqual(expected);
  });

  it('hashes an empty file', async () => {
    const root = tempRoot();
    const file = path.join(root, 'empty');
    fs.writeFileSync(file, '');
    expect((await hashFile(file)).sha256).toBe(createHash('sha256').digest('hex'));
    const hashed = await session.hashFiles([file, path.join(root, 'go.mod')]);
    expect(hashed.get(file)?.bytes).toBe(0);
  });

  it('reports an unreadable file with its path', async () => {
    const { paths } = files(2, 10);
    const missing = path.join(path.dirname(paths[0]!), 'gone.zip');
    const error = await session.hashFiles([...paths, missing]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FileReadError);
    expect(error).toMatchObject({ path: missing, code: 'ENOENT' });
  });

  it('stops when interrupted, before the first read or between two reads of a file', async () => {
    const { paths } = files(2, 10);
    const controller = new AbortController();
    controller.abort();
    await expect(session.hashFiles(paths, { signal: controller.signal })).rejects.toBeInstanceOf(
      InterruptedError,
    );
    // Interrupted once the reads are under way: the files (of many reads each) are not read to their end.
    const large = files(1, 8 * 1024 * 1024);
    const midway = new AbortController();
    const hashing = session.hashFiles(large.paths, {
      signal: midway.signal,
      started: () => midway.abort(),
    });
    await expect(hashing).rejects.toBeInstanceOf(InterruptedError);
  });
});

describe('readVerified', () => {
  /** Reads the stream to its end or its error: the bytes it handed on, and the error. */
  async function drain(stream: AsyncIterable<Uint8Array>): Promise<{ received: Buffer; error: unknown }> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return { received: Buffer.concat(chunks), error: undefined };
    } catch (error) {
      return { received: Buffer.concat(chunks), error };
    }
  }

  function verified(data: Buffer) {
    const file = path.join(tempRoot(), 'terraform-provider-x_1.0.0_linux_amd64.zip');
    fs.writeFileSync(file, data);
    return { file, digest: { sha256: createHash('sha256').update(data).digest('hex'), bytes: data.length } };
  }

  it('hands on exactly the verified bytes (several chunks, an odd size, an empty file)', async () => {
    for (const data of [randomBytes(3 * 1024 * 1024 + 17), Buffer.alloc(0)]) {
      const { file, digest } = verified(data);
      const { received, error } = await drain(session.readVerified(file, 'x.zip', digest));
      expect(error).toBeUndefined();
      expect(received.equals(data)).toBe(true);
    }
  });

  it('reads into the buffers of chunks handed back as sent, and only into those', async () => {
    const data = randomBytes(8 * 256 * 1024 + 5);
    const { file, digest } = verified(data);
    const stream = session.readVerified(file, 'x.zip', digest);
    const copies: Buffer[] = [];
    const seen = new Set<ArrayBufferLike>();
    let sent = 0;
    for await (const chunk of stream) {
      const buffer = chunk;
      // A copy taken as it arrives: a buffer read into again too early would change what was received.
      copies.push(Buffer.from(buffer));
      seen.add(buffer.buffer);
      sent += buffer.length;
      stream.sent(sent);
    }
    expect(Buffer.concat(copies).equals(data)).toBe(true);
    // Nine chunks through one buffer: handed back as sent, and read into again for the next chunk (the last one
    // too, held back there until the file was checked).
    expect(seen.size).toBe(1);
  });

  it('reads each chunk when it is asked for, not ahead: bytes changed after the first chunk left are caught', async () => {
    const data = randomBytes(3 * 256 * 1024);
    const { file, digest } = verified(data);
    const chunks = session.readVerified(file, 'x.zip', digest)[Symbol.asyncIterator]();
    const first = await chunks.next();
    expect(first.done).toBe(false);
    expect(Buffer.from(first.value as Buffer).equals(data.subarray(0, 256 * 1024))).toBe(true);
    // Nothing past the first chunk was read yet: a change there now is read, and refused.
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.from([data[300 * 1024]! ^ 1]), 0, 1, 300 * 1024);
    fs.closeSync(fd);
    const rest = await (async () => {
      try {
        for (let next = await chunks.next(); !next.done; next = await chunks.next());
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    expect(rest).toBeInstanceOf(FileChangedError);
  });

  it('holds the last chunk back: a file changed at its very end is refused before its end is handed on', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const { file, digest } = verified(data);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.from([data[data.length - 1]! ^ 1]), 0, 1, data.length - 1);
    fs.closeSync(fd);
    const { received, error } = await drain(session.readVerified(file, 'x.zip', digest));
    expect(error).toBeInstanceOf(FileChangedError);
    expect(error).toBeInstanceOf(VerificationError);
    expect((error as Error).message).toMatch(/^x\.zip changed since it was verified: it now hashes to /);
    // Everything handed on is verified bytes, and the last chunk (with the changed byte) never left.
    expect(received.length).toBeLessThan(data.length);
    expect(received.equals(data.subarray(0, received.length))).toBe(true);
  });

  it("checks a file hashed here by its chunks' digests: the same bytes pass, one byte changed is refused with what it hashes to now", async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const { file } = verified(data);
    const other = path.join(path.dirname(file), 'go.mod');
    fs.writeFileSync(other, 'module x\n');
    const digest = (await session.hashFiles([file, other])).get(file)!;
    const passed = await drain(session.readVerified(file, 'x.zip', digest));
    expect(passed.error).toBeUndefined();
    expect(passed.received.equals(data)).toBe(true);

    const changed = Buffer.from(data);
    changed[1234] = changed[1234]! ^ 1;
    fs.writeFileSync(file, changed);
    const now = createHash('sha256').update(changed).digest('hex');
    const { received, error } = await drain(session.readVerified(file, 'x.zip', digest));
    expect(error).toBeInstanceOf(FileChangedError);
    expect((error as Error).message).toBe(
      `x.zip changed since it was verified: it now hashes to ${now}, not ${digest.sha256}`,
    );
    expect(received.length).toBeLessThan(data.length);
  });

  it('checks a file hashed without chunk digests (chunkDigests: false, as verify hashes) by its SHA-256', async () => {
    // The same change as above: refused all the same, but only once the file is read to its end.
    const data = randomBytes(3 * 256 * 1024 + 17);
    const { file } = verified(data);
    const digest = (await session.hashFiles([file], { chunkDigests: false })).get(file)!;
    const changed = Buffer.from(data);
    changed[256 * 1024 + 5] = changed[256 * 1024 + 5]! ^ 1;
    fs.writeFileSync(file, changed);
    const { received, error } = await drain(session.readVerified(file, 'x.zip', digest));
    expect(error).toBeInstanceOf(FileChangedError);
    expect(received.length).toBe(3 * 256 * 1024);
  });

  it('refuses a single-chunk file whose bytes changed without handing on anything', async () => {
    const { file, digest } = verified(Buffer.from('verified bytes'));
    fs.writeFileSync(file, 'changed bytes!');
    const { received, error } = await drain(session.readVerified(file, 'x.zip', digest));
    expect(error).toBeInstanceOf(FileChangedError);
    expect(received.length).toBe(0);
  });
});
