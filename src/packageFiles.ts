/**
 * The files the program carries besides its code: `package.json` (the version) and `assets/` (the HCL parser's
 * WebAssembly). They are found the same way wherever the program runs: up from this module's own file to the
 * package's root, the first folder whose package.json names this package. The sources (vitest), tsc's `dist/`,
 * the package's `dist/bundle/` and the Action's `action/main.cjs` all sit below it; the bundles are built with
 * `import.meta.filename` meaning the file the code landed in (scripts/bundle.mjs), which is below it too. A
 * single executable has no folder of files: it carries these as its assets (scripts/build-binary.mjs), by the
 * same names.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getRawAsset, isSea } from 'node:sea';

/** This package's name, as its package.json says. */
const PACKAGE_NAME = 'provider-registry-cli';

let root: string | undefined;

/** The package.json at `file`, or undefined when there is none or it is not JSON. */
function manifestAt(file: string): { name?: unknown; version?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
  } catch {
    return undefined;
  }
}

/** The package's root folder, found once. */
function packageRoot(): string {
  if (root !== undefined) return root;
  const here = import.meta.filename;
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    if (manifestAt(join(dir, 'package.json'))?.name === PACKAGE_NAME) return (root = dir);
    if (dirname(dir) === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${here}`);
  }
}

/** One of the package's files by its path from the root (`package.json`, `assets/…`), read whole. */
export function packageFile(name: string): Uint8Array {
  if (isSea()) return new Uint8Array(getRawAsset(name));
  return readFileSync(join(packageRoot(), name));
}

/** The version of the package this program belongs to. */
export function packageVersion(): string {
  const manifest = JSON.parse(new TextDecoder().decode(packageFile('package.json'))) as { version: string };
  return manifest.version;
}
