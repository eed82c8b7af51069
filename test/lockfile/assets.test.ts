/**
 * assets/ holds copies of files from packages (assets/README.md): each copy must be the package's file byte
 * for byte, so that updating the package without `npm run assets` fails here rather than shipping a stale grammar.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

const require = createRequire(import.meta.url);

describe('assets/ copies', () => {
  for (const [from, to] of [
    ['@tree-sitter-grammars/tree-sitter-hcl/tree-sitter-hcl.wasm', 'tree-sitter-hcl.wasm'],
    ['@tree-sitter-grammars/tree-sitter-hcl/LICENSE', 'tree-sitter-hcl.LICENSE'],
    ['@microsoft/sarif-matcher-utils/lib/schemas/sarif-2.1.0-rtm.5.json', 'sarif-schema-2.1.0.json'],
  ] as const) {
    it(`assets/${to} is ${from} (npm run assets refreshes it)`, () => {
      const copy = fs.readFileSync(path.join(REPO_ROOT, 'assets', to));
      expect(copy.equals(fs.readFileSync(require.resolve(from)))).toBe(true);
    });
  }
});
