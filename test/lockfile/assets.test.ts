/**
 * assets/ holds copies of files from packages (assets/README.md): each copy must be the package's file byte
 * for byte, so that updating the package without `npm run assets` fails here rather than shipping a stale grammar.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ASSETS, assetSource } from '../../scripts/copy-assets.mjs';
import { REPO_ROOT } from '../helpers/paths.js';

describe('assets/ copies', () => {
  it('are every file of assets/ but its README', () => {
    const copies = ASSETS.map(([, , to]) => to).sort();
    expect(
      fs
        .readdirSync(path.join(REPO_ROOT, 'assets'))
        .filter((f) => f !== 'README.md')
        .sort(),
    ).toEqual(copies);
  });
  for (const [anchor, file, to] of ASSETS) {
    it(`assets/${to} is ${file} of ${anchor.split('/').slice(0, -1).join('/')} (npm run assets refreshes it)`, () => {
      const copy = fs.readFileSync(path.join(REPO_ROOT, 'assets', to));
      expect(copy.equals(fs.readFileSync(assetSource(anchor, file)))).toBe(true);
    });
  }
});
