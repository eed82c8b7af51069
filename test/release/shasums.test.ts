import { describe, expect, it } from 'vitest';
import { VerificationError } from '../../src/errors.js';
import { parseShasums } from '../../src/release/shasums.js';

const H = 'a'.repeat(64);
const FILE = 'x_SHA256SUMS';
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function problemOf(text: string): VerificationError {
  try {
    parseShasums(bytes(text), FILE);
  } catch (error) {
    expect(error).toBeInstanceOf(VerificationError);
    return error as VerificationError;
  }
  throw new Error('expected a VerificationError');
}

describe('parseShasums', () => {
  it('reads sha256sum output with line numbers', () => {
    const text = `${H}  a.zip\n${'b'.repeat(64)}  b.zip\n`;
    expect(parseShasums(bytes(text), FILE)).toEqual([
      { line: 1, shasum: H, filename: 'a.zip' },
      { line: 2, shasum: 'b'.repeat(64), filename: 'b.zip' },
    ]);
  });

  it('accepts a last line without a newline', () => {
    expect(parseShasums(bytes(`${H}  a.zip`), FILE)).toHaveLength(1);
  });

  it.each([
    [`${H} *a.zip\n`, 1, '"*" binary-mode marker'],
    [`${H}  *a.zip\n`, 1, '"*" binary-mode marker'],
    [`${H}  a.zip\n${H}  dist/b.zip\n`, 2, 'has a path'],
    [`${H}  a.zip\n${H}  dir\\b.zip\n`, 2, 'has a path'],
    [`${H}  ..\n`, 1, '".."'],
    [`${'A'.repeat(64)}  a.zip\n`, 1, 'upper-case'],
    [`${'a'.repeat(63)}  a.zip\n`, 1, '63 hex digits'],
    [`${'g'.repeat(64)}  a.zip\n`, 1, 'not a hexadecimal'],
    [`${H}  a.zip\n${H}  b.zip\n${H}  a.zip\n`, 3, 'listed twice (first on line 1)'],
    [`${H} a.zip\n`, 1, 'exactly two spaces'],
    [`${H}   a.zip\n`, 1, 'exactly two spaces'],
    [`${H}\ta.zip\n`, 1, 'with a tab'],
    [`${H}  a.zip\r\n`, 1, 'carriage return'],
    [`${H}  a.zip\n\n${H}  b.zip\n`, 2, 'is empty'],
    [`${H}  a b.zip\n`, 1, 'white space'],
    [`${H}\n`, 1, 'no file name'],
    [`${H}  \n`, 1, 'has no file name'],
  ])('%j → line %i: %s', (text, line, words) => {
    const error = problemOf(text);
    expect(error.message).toContain(`${FILE} line ${line}: `);
    expect(error.message).toContain(words);
    expect(error.hint).toMatch(/two spaces/);
    expect(error.details).toMatchObject({ file: FILE, line });
  });

  it('reports the first problem and counts the rest', () => {
    const error = problemOf(`${H}  a.zip\n${H} *b.zip\nzz  c.zip\n`);
    expect(error.message).toContain('line 2');
    expect(error.message).toContain('and 1 more problem');
    expect((error.details as { problems: unknown[] }).problems).toHaveLength(2);
  });

  // Found by test/reliability (bad input corpus, "SHA256SUMS with a UTF-8 byte order mark"): the decoder dropped
  // the BOM, so verify passed and publish uploaded a file on which terraform init refuses the first line's hash.
  it('refuses a byte order mark, which Terraform reads as part of the first hash', () => {
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes(`${H}  a.zip\n`)]);
    let error: unknown;
    try {
      parseShasums(withBom, FILE);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VerificationError);
    expect((error as Error).message).toBe(
      `${FILE} line 1: starts with a byte order mark (BOM, U+FEFF); Terraform reads it as part of the hash and refuses the line. Save the file as UTF-8 without BOM`,
    );
  });

  // Found by test/reliability (bad input corpus, "a 10 MB file name with a path"): the message quoted the whole
  // name, a 10 MB error line (and --json document).
  it.each([
    ['a 10 MB name with a path', `${H}  ${'d/'.repeat(5_000_000)}\n`, 'has a path'],
    ['a 1 MB name with a space', `${H}  ${'n'.repeat(1_000_000)} x\n`, 'white space'],
    ['a 1 MB name with ".."', `${H}  ${'n'.repeat(1_000_000)}..\n`, '".."'],
  ])('keeps the message short for %s', (_name, text, words) => {
    const error = problemOf(text);
    expect(error.message).toContain(words);
    expect(error.message.length).toBeLessThan(400);
    expect(JSON.stringify(error.details).length).toBeLessThan(1000);
  });

  it('keeps at most 20 problems in the details of a file of garbage, and counts them all', () => {
    const error = problemOf('x\n'.repeat(10_000));
    expect(error.message).toContain('(and 9999 more problems)');
    expect(error.details).toMatchObject({ problemCount: 10_000 });
    expect((error.details as { problems: unknown[] }).problems).toHaveLength(20);
  });

  it('refuses an empty file and one that is not UTF-8', () => {
    expect(problemOf('').message).toBe(`${FILE} is empty`);
    expect(() => parseShasums(new Uint8Array([0xff, 0xfe, 0x00]), FILE)).toThrow(/not UTF-8/);
  });
});
