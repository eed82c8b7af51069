#!/usr/bin/env node
// Refreshes assets/ from the packages they come from (assets/README.md): run after updating one of them.
// test/lockfile/assets.test.ts fails while a copy differs from its package's file.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** @type {[string, string][]} */
const copies = [
  ['@tree-sitter-grammars/tree-sitter-hcl/tree-sitter-hcl.wasm', 'tree-sitter-hcl.wasm'],
  ['@tree-sitter-grammars/tree-sitter-hcl/LICENSE', 'tree-sitter-hcl.LICENSE'],
  ['@microsoft/sarif-matcher-utils/lib/schemas/sarif-2.1.0-rtm.5.json', 'sarif-schema-2.1.0.json'],
];
for (const [from, to] of copies) {
  fs.copyFileSync(require.resolve(from), new URL(`../assets/${to}`, import.meta.url));
  console.log(`assets/${to} ← ${from}`);
}
