/**
 * Lock files made to hurt the reader (issue 43, item 14): an escape that is no Unicode character, a string of
 * megabytes, a file of hundreds of thousands of items. Each is a LockFileError (exit 2) naming the file and the
 * line, or is read, never an unexpected error (exit 1, "This is a bug").
 */
import { describe, expect, it } from 'vitest';
import {
  LockFileError,
  MAX_LINE_LENGTH,
  parseLockFile,
  readProviderBlock,
} from '../../src/lockfile/parse.js';

const FILE = 'infra/.terraform.lock.hcl';

/** Parses `text` and decodes every provider block; the error thrown, or undefined. */
async function read(text: string): Promise<unknown> {
  try {
    const parsed = await parseLockFile(text, FILE);
    for (const block of parsed.providers) readProviderBlock(block, FILE);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('a lock file made to hurt the reader', () => {
  it.each([
    ['\\UFFFFFFFF in a version', 'provider "a/b/c" {\n  version = "\\UFFFFFFFF"\n}\n', 2, '\\UFFFFFFFF'],
    ['\\U00110000 in an address', 'provider "a/b/\\U00110000" {\n  version = "1"\n}\n', 1, '\\U00110000'],
    ['a lone surrogate, \\uD800', '\n\nprovider "a/b/c" {\n  version = "1\\ud800"\n}\n', 4, '\\ud800'],
    [
      'a surrogate pair of escapes',
      'provider "a/b/c" {\n  hashes = ["\\uD83D\\uDE00"]\n  version = "1"\n}\n',
      2,
      '\\uD83D',
    ],
  ])('%s is refused as HCL refuses it, naming the line', async (_, text, line, escape) => {
    const error = await read(text);
    expect(error).toBeInstanceOf(LockFileError);
    expect((error as Error).message).toBe(
      `${FILE}:${line}: the escape ${escape} is not a Unicode character: this is not valid HCL`,
    );
  });

  it('decodes escapes of characters outside the Basic Multilingual Plane', async () => {
    const parsed = await parseLockFile('provider "a/b/\\U0001F600" {\n  version = "1"\n}\n', FILE);
    expect(parsed.providers[0]!.label).toBe('a/b/\u{1F600}');
  });

  it.each([
    ['a version', (s: string) => `\n\nprovider "a/b/c" {\n  version = "${s}"\n}\n`, 4],
    ['an address', (s: string) => `provider "${s}" {\n  version = "1"\n}\n`, 1],
    ['a comment', (s: string) => `# ${s}\n`, 1],
  ])('a line of 7 MiB (%s) is refused before it is parsed, naming the line', async (_, make, line) => {
    const text = make('a'.repeat(7 * 1024 * 1024));
    const error = await read(text);
    expect(error).toBeInstanceOf(LockFileError);
    const length = text.split('\n')[line - 1]!.length;
    expect((error as Error).message).toBe(
      `${FILE}:${line}: this line is ${length} characters long, more than the ${MAX_LINE_LENGTH} a lock file's lines may hold`,
    );
  });

  it('reads a line of the longest length allowed', async () => {
    const version = 'a'.repeat(MAX_LINE_LENGTH - '  version = ""'.length);
    const parsed = await parseLockFile(`provider "a/b/c" {\n  version = "${version}"\n}\n`, FILE);
    expect(readProviderBlock(parsed.providers[0]!, FILE).version).toBe(version);
  });

  it('reads a file of 200 000 top-level items', async () => {
    const parsed = await parseLockFile('a = 1\n'.repeat(200_000), FILE);
    expect(parsed.items).toHaveLength(200_000);
    expect(parsed.items[199_999]).toMatchObject({ kind: 'attribute', startRow: 199_999 });
  });
});
