/** Terraform's checksum checks, replayed: how a SHA256SUMS line is found, and the exact error wordings. */
import { describe, expect, it } from 'vitest';
import { archiveChecksumProblem, listedHash, matchingChecksumProblem } from '../../src/consumer/checksums.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const doc = (text: string) => Buffer.from(text, 'utf8');
const platform = { os: 'linux', arch: 'amd64', filename: 'p_1.0.0_linux_amd64.zip', shasum: A };

describe('listedHash', () => {
  it('finds the first line whose second field is the filename, byte for byte', () => {
    expect(listedHash(doc(`${B}  other.zip\n${A}  p.zip\n${B}  p.zip\n`), 'p.zip')).toBe(A);
    expect(listedHash(doc(`${A}\tp.zip\r\n`), 'p.zip')).toBe(A);
    expect(listedHash(doc(`${A}  ./p.zip\n`), 'p.zip')).toBeUndefined();
    expect(listedHash(doc(`${A}  P.zip\n`), 'p.zip')).toBeUndefined();
    expect(listedHash(doc(`${A} *p.zip\n`), 'p.zip')).toBeUndefined();
  });
});

describe('matchingChecksumProblem', () => {
  it('passes when the line carries the shasum (hex case does not matter, as Go decodes it)', () => {
    expect(
      matchingChecksumProblem(doc(`${A.toUpperCase()}  ${platform.filename}\n`), platform),
    ).toBeUndefined();
  });

  it("uses Terraform's words for a missing line and for another hash", () => {
    expect(matchingChecksumProblem(doc(`${A}  other.zip\n`), platform)?.terraform).toBe(
      'checksum list has no SHA-256 hash for "p_1.0.0_linux_amd64.zip"',
    );
    expect(matchingChecksumProblem(doc(`${B}  ${platform.filename}\n`), platform)?.terraform).toBe(
      `checksum list has unexpected SHA-256 hash ${B} (expected ${A})`,
    );
  });

  it('reports a registry shasum that is not a hash', () => {
    const problem = matchingChecksumProblem(doc(''), { ...platform, shasum: 'nope' });
    expect(problem?.message).toContain('is not 64 hexadecimal digits');
  });
});

describe('archiveChecksumProblem', () => {
  it("uses Terraform's zh: form", () => {
    expect(archiveChecksumProblem(platform, A)).toBeUndefined();
    expect(archiveChecksumProblem(platform, B)?.terraform).toBe(
      `archive has incorrect checksum zh:${B} (expected zh:${A})`,
    );
  });
});
