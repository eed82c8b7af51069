import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InterruptedError, VerificationError } from '../../src/errors.js';
import { FileReadError, hashFile, HashingSession } from '../../src/release/hashing/hashing.js';
import { FileChangedError } from '../../src/verifiedFiles.js';
import { tempRoot } from '../helpers/tmp.js';

/** The hashing session the tests hash in: its workers, and the chunk digests `readVerified` checks. */
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
  it('hashes on the main thread below the threshold', async () => {
    const { paths, expected } = files(3, 3 * 1024 * 1024 + 17);
    const digests = await session.hashFiles(paths);
    for (const file of paths) {
      expect(digests.get(file)).toEqual({
        path: file,
        sha256: expected.get(file),
        bytes: fs.statSync(file).size,
      });
    }
  });

  it('gives the same digests from the worker pool (more files than workers)', async () => {
    const { paths, expected } = files(5, 1024 * 1024 + 3);
    const digests = await session.hashFiles(paths, { inlineBelowBytes: 0, parallelism: 2 });
    expect(new Map([...digests].map(([k, v]) => [k, v.sha256]))).toEqual(expected);
  });

  it('hashes with workers started ahead, and without them when the files turn out small', async () => {
    const { paths, expected } = files(3, 1024 * 1024 + 5);
    const pooled = { inlineBelowBytes: 0, parallelism: 2 };
    await session.startWorkers(paths, pooled);
    const digests = await session.hashFiles(paths, pooled);
    expect(new Map([...digests].map(([k, v]) => [k, v.sha256]))).toEqual(expected);
    // Started for a large release, then not needed: hashed on the main thread all the same.
    await session.startWorkers(paths, pooled);
    const inline = await session.hashFiles(paths, { inlineBelowBytes: Infinity, parallelism: 2 });
    expect(new Map([...inline].map(([k, v]) => [k, v.sha256]))).toEqual(expected);
  });

  it('starts the workers for a release folder before anything else is known of it (warmHashWorkers)', async () => {
    const pooled = { inlineBelowBytes: 0, parallelism: 2 };
    const { paths, expected } = files(3, 1000);
    const dir = path.dirname(paths[0]!);
    const zips = paths.map((file) => {
      fs.renameSync(file, `${file}.zip`);
      return `${file}.zip`;
    });
    // A folder that cannot be read, and one without zips: nothing started, no failure.
    await session.warm(path.join(dir, 'missing'), pooled);
    await session.warm(tempRoot(), pooled);
    expect(session.waitingWorkers()).toBe(0);
    // Zips small enough to hash inline: no worker either.
    await session.warm(dir, { parallelism: 2 });
    expect(session.waitingWorkers()).toBe(0);
    await session.warm(dir, pooled);
    expect(session.waitingWorkers()).toBe(1);
    // The verification then takes it instead of starting another.
    const digests = await session.hashFiles(zips, pooled);
    expect(session.waitingWorkers()).toBe(0);
    expect([...digests.values()].map((d) => d.sha256).sort()).toEqual([...expected.values()].sort());
  });

  it('a session closed while its warm-up still sizes the files starts no worker after it', async () => {
    const { paths } = files(3, 1000);
    const closing = new HashingSession();
    const pooled = { inlineBelowBytes: 0, parallelism: 3 };
    // The warm-up first reads the files' sizes; the command ends meanwhile (a check failed early).
    const warming = closing.startWorkers(paths, pooled);
    closing.close();
    await warming;
    expect(closing.waitingWorkers()).toBe(0);
    // The same warm-up on an open session starts them (two: one core is the main thread's).
    const open = new HashingSession();
    try {
      await open.startWorkers(paths, pooled);
      expect(open.waitingWorkers()).toBe(2);
    } finally {
      open.close();
    }
    expect(open.waitingWorkers()).toBe(0);
  });

  it('reads files hashed at once on the main thread into buffers of their own (each thread reuses its buffers)', async () => {
    // Several files read at the same time, each over several chunks, on the main thread (hashFile: the lock
    // hashes' reads), while a worker pool hashes others: no file's bytes land in another's buffer.
    const { paths, expected } = files(4, 2 * 1024 * 1024 + 11);
    const [inline, pooled] = await Promise.all([
      Promise.all(paths.map((file) => hashFile(file))),
      session.hashFiles(paths, { inlineBelowBytes: 0, parallelism: 2 }),
    ]);
    expect(new Map(inline.map((d) => [d.path, d.sha256]))).toEqual(expected);
    expect(new Map([...pooled].map(([k, v]) => [k, v.sha256]))).toEqual(expected);
    // And again, with the buffers the first round left.
    const again = await Promise.all(paths.map((file) => hashFile(file)));
    expect(new Map(again.map((d) => [d.path, d.sha256]))).toEqual(expected);
  });

  it('hashes an empty file', async () => {
    const root = tempRoot();
    const file = path.join(root, 'empty');
    fs.writeFileSync(file, '');
    expect((await hashFile(file)).sha256).toBe(createHash('sha256').digest('hex'));
    const pooled = await session.hashFiles([file, path.join(root, 'go.mod')], {
      inlineBelowBytes: 0,
      parallelism: 2,
    });
    expect(pooled.get(file)?.bytes).toBe(0);
  });

  it.each([0, Infinity])(
    'reports an unreadable file with its path (inline below %s bytes)',
    async (inlineBelowBytes) => {
      const { paths } = files(2, 10);
      const missing = path.join(path.dirname(paths[0]!), 'gone.zip');
      const error = await session
        .hashFiles([...paths, missing], { inlineBelowBytes, parallelism: 2 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FileReadError);
      expect(error).toMatchObject({ path: missing, code: 'ENOENT' });
    },
  );

  it('stops when interrupted', async () => {
    const { paths } = files(2, 10);
    const controller = new AbortController();
    controller.abort();
    await expect(session.hashFiles(paths, { signal: controller.signal })).rejects.toBeInstanceOf(
      InterruptedError,
    );
    await expect(
      session.hashFiles(paths, { signal: controller.signal, inlineBelowBytes: 0 }),
    ).rejects.toBeInstanceOf(InterruptedError);
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

  it.each([
    ['on the main thread', Infinity],
    ['in the pool', 0],
  ])(
    "checks a file hashed here by its chunks' digests (%s): the same bytes pass, one byte changed is refused with what it hashes to now",
    async (_where, inlineBelowBytes) => {
      const data = randomBytes(3 * 1024 * 1024 + 17);
      const { file } = verified(data);
      const other = path.join(path.dirname(file), 'go.mod');
      fs.writeFileSync(other, 'module x\n');
      const digest = (await session.hashFiles([file, other], { inlineBelowBytes, parallelism: 2 })).get(
        file,
      )!;
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
    },
  );

  it('checks each chunk of a file hashed here against its digest before handing it on', async () => {
    // A byte of the second chunk changed: the first chunk goes on, the second never does. Checked by the file's
    // SHA-256 alone, the second chunk would go on before the change is known.
    const data = randomBytes(3 * 256 * 1024 + 17);
    const { file } = verified(data);
    const digest = (await session.hashFiles([file])).get(file)!;
    const changed = Buffer.from(data);
    changed[256 * 1024 + 5] = changed[256 * 1024 + 5]! ^ 1;
    fs.writeFileSync(file, changed);
    const { received, error } = await drain(session.readVerified(file, 'x.zip', digest));
    expect(error).toBeInstanceOf(FileChangedError);
    expect((error as Error).message).toBe(
      `x.zip changed since it was verified: it now hashes to ${createHash('sha256').update(changed).digest('hex')}, not ${digest.sha256}`,
    );
    expect(received.equals(data.subarray(0, 256 * 1024))).toBe(true);
  });

  it('refuses a single-chunk file whose bytes changed without handing on anything', async () => {
    const { file, digest } = verified(Buffer.from('verified bytes'));
    fs.writeFileSync(file, 'changed bytes!');
    const { received, error } = await drain(session.readVerified(file, 'x.zip', digest));
    expect(error).toBeInstanceOf(FileChangedError);
    expect(received.length).toBe(0);
  });
});
