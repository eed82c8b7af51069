import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/errors.js';
import { FileReadError, hashFile, hashFiles } from '../../src/release/hashing.js';
import { tempRoot } from './helpers.js';

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
    const digests = await hashFiles(paths);
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
    const digests = await hashFiles(paths, { inlineBelowBytes: 0, parallelism: 2 });
    expect(new Map([...digests].map(([k, v]) => [k, v.sha256]))).toEqual(expected);
  });

  it('hashes an empty file', async () => {
    const root = tempRoot();
    const file = path.join(root, 'empty');
    fs.writeFileSync(file, '');
    expect((await hashFile(file)).sha256).toBe(createHash('sha256').digest('hex'));
    const pooled = await hashFiles([file, path.join(root, 'go.mod')], {
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
      const error = await hashFiles([...paths, missing], { inlineBelowBytes, parallelism: 2 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FileReadError);
      expect(error).toMatchObject({ path: missing, code: 'ENOENT' });
    },
  );

  it('stops when interrupted', async () => {
    const { paths } = files(2, 10);
    const controller = new AbortController();
    controller.abort();
    await expect(hashFiles(paths, { signal: controller.signal })).rejects.toBeInstanceOf(InterruptedError);
    await expect(hashFiles(paths, { signal: controller.signal, inlineBelowBytes: 0 })).rejects.toBeInstanceOf(
      InterruptedError,
    );
  });
});
