#!/usr/bin/env node
// Refreshes assets/ from the packages they come from (assets/README.md): run after updating one of them.
// test/lockfile/assets.test.ts fails while a copy differs from its package's file.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * Each copy: a file its package exports (how the package's folder is found), the file of that folder to copy,
 * and its name in assets/.
 * @type {readonly (readonly [string, string, string])[]}
 */
export const ASSETS = [
  [
    '@tree-sitter-grammars/tree-sitter-hcl/tree-sitter-hcl.wasm',
    'tree-sitter-hcl.wasm',
    'tree-sitter-hcl.wasm',
  ],
  ['@tree-sitter-grammars/tree-sitter-hcl/tree-sitter-hcl.wasm', 'LICENSE', 'tree-sitter-hcl.LICENSE'],
  ['web-tree-sitter/web-tree-sitter.wasm', 'web-tree-sitter.wasm', 'web-tree-sitter.wasm'],
  ['web-tree-sitter/web-tree-sitter.wasm', 'LICENSE', 'web-tree-sitter.LICENSE'],
];

/**
 * The package's file a copy comes from.
 * @param {string} anchor
 * @param {string} file
 */
export function assetSource(anchor, file) {
  return path.join(path.dirname(require.resolve(anchor)), file);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const [anchor, file, to] of ASSETS) {
    const from = assetSource(anchor, file);
    fs.copyFileSync(from, new URL(`../assets/${to}`, import.meta.url));
    console.log(`assets/${to} ← ${path.relative(process.cwd(), from)}`);
  }
}
