/**
 * The WebAssembly the HCL parser runs. From the package (npm install, a clone): the grammar is the project's own
 * copy in `assets/` (two folders up from both `src/lockfile/` and `dist/lockfile/`), and tree-sitter's runtime
 * finds its own `.wasm` beside its module (no bytes given). The bundles (GitHub Action, single executable)
 * replace this module with one that carries both files' bytes (scripts/bundle.mjs), since a bundle has no
 * folders beside it.
 */
import { readFile } from 'node:fs/promises';

/** The bytes the parser starts from: tree-sitter's runtime (when not found by itself) and the HCL grammar. */
export interface HclWasm {
  runtime?: Uint8Array;
  grammar: Uint8Array;
}

/** Reads the grammar shipped in `assets/`. */
export async function hclWasm(): Promise<HclWasm> {
  return { grammar: await readFile(new URL('../../assets/tree-sitter-hcl.wasm', import.meta.url)) };
}
