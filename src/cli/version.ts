/**
 * The program's version: package.json's, read beside the compiled program. The bundles (GitHub Action, single
 * executable) have no package.json beside them: scripts/bundle.mjs replaces this module by one returning the
 * version it was built with.
 */
import { readFileSync } from 'node:fs';

/** The version of the package this program belongs to. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
