/** `readCapped`: the bounded read under every small file of a release and every key file. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCapped } from '../../src/release/smallFile.js';
import { tempRoot } from '../helpers/tmp.js';

describe('readCapped', () => {
  it('reads a file up to its cap', async () => {
    const file = path.join(tempRoot(), 'small');
    fs.writeFileSync(file, 'x'.repeat(100));
    expect((await readCapped(file, 100)).length).toBe(100);
  });

  // A file whose size says nothing about what a read returns (it grows, or is a device): the read is bounded.
  it('stops reading one byte past the cap of a file that reports no size', async () => {
    const error = (await readCapped('/dev/zero', 4096).catch((e: unknown) => e)) as {
      bytes: number;
      limit: number;
      grew: boolean;
    };
    expect(error).toMatchObject({ name: 'FileTooLargeError', bytes: 4097, limit: 4096, grew: true });
  });
});
