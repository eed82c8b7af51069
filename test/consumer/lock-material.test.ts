/**
 * What the consumer side takes for a lock file from a signed SHA256SUMS, as Terraform does
 * (hashicorp/terraform: internal/getproviders/package_authentication.go, `signatureAuthentication.AcceptableHashes`
 * over `bytes.Fields` of each line: a line of one field spoils the document, more fields are a name with spaces),
 * and the download pool's failure rule (every download in flight settles before the first error is thrown, so the
 * scratch folder of `check --download` is removed after them).
 */
import { describe, expect, it } from 'vitest';
import { acceptableHashes } from '../../src/consumer/checksums.js';
import { mapPool } from '../../src/pool.js';

const A = 'a'.repeat(64);
const B = 'B'.repeat(64);

describe('acceptableHashes', () => {
  it('gives a zh: for every line, whatever file it names, lower case', () => {
    const sums = `${A}  terraform-provider-x_1.0.0_linux_amd64.zip\n${B}  terraform-provider-x_1.0.0_manifest.json\n`;
    expect(acceptableHashes(Buffer.from(sums))).toEqual([`zh:${A}`, `zh:${B.toLowerCase()}`]);
  });

  it('keeps a line whose name holds spaces (more than two fields)', () => {
    expect(acceptableHashes(Buffer.from(`${A}  my file.zip\n\n`))).toEqual([`zh:${A}`]);
  });

  it('gives nothing when a line has one field or no hash first', () => {
    expect(acceptableHashes(Buffer.from(`${A}  x.zip\n${B}\n`))).toEqual([]);
    expect(acceptableHashes(Buffer.from(`${A}  x.zip\nnot-a-hash  y.zip\n`))).toEqual([]);
  });
});

describe('mapPool', () => {
  it('throws the first error only once every item in flight has settled, and starts no new item', async () => {
    const events: string[] = [];
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const run = mapPool([1, 2, 3, 4], 2, async (n) => {
      events.push(`start ${n}`);
      if (n === 1) {
        await slow;
        events.push('end 1');
        return n;
      }
      throw new Error(`item ${n} failed`);
    });
    let thrown: unknown;
    void run.catch((error: unknown) => (thrown = error));
    await new Promise((resolve) => setImmediate(resolve));
    expect(thrown).toBeUndefined(); // item 1 is still in flight
    release();
    await expect(run).rejects.toThrow('item 2 failed');
    expect(events).toEqual(['start 1', 'start 2', 'end 1']);
  });
});
