#!/usr/bin/env node
// The package.json that ships: `npm pack` and `npm publish` run prepack, which builds and then calls this with
// `strip`, and postpack, which calls it with `restore`. Between the two, package.json holds what a user's npm
// needs and nothing of the project's own work: no scripts (a packed `prepare` or `postinstall` makes `npm install
// -g` warn about, or hold back, an install script), no devDependencies, no allowScripts or overrides (they
// concern this repository's install). The package has no dependencies: the program is bundled (docs/node.md).
//
//   node scripts/pack-manifest.mjs strip     # package.json → .package.json.unpacked, a stripped package.json
//   node scripts/pack-manifest.mjs restore   # puts .package.json.unpacked back
//
// Reversible by hand: a pack that stopped between the two leaves .package.json.unpacked, and `strip` refuses to
// run again until `restore` has put it back.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The fields of package.json that stay out of the packed one. */
export const UNSHIPPED_FIELDS = ['scripts', 'devDependencies', 'allowScripts', 'overrides'];

/**
 * The manifest that ships, from the repository's.
 * @param {Record<string, unknown>} manifest
 */
export function shippedManifest(manifest) {
  return Object.fromEntries(Object.entries(manifest).filter(([key]) => !UNSHIPPED_FIELDS.includes(key)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [action, folder = process.cwd()] = process.argv.slice(2);
  const manifest = path.join(folder, 'package.json');
  const kept = path.join(folder, '.package.json.unpacked');
  if (action === 'strip') {
    if (fs.existsSync(kept)) {
      console.error(
        `${kept} is there from a pack that did not finish: run node scripts/pack-manifest.mjs restore`,
      );
      process.exit(1);
    }
    const text = fs.readFileSync(manifest, 'utf8');
    /** @type {unknown} */
    const parsed = JSON.parse(text);
    const stripped = shippedManifest(/** @type {Record<string, unknown>} */ (parsed));
    fs.writeFileSync(kept, text);
    fs.writeFileSync(manifest, `${JSON.stringify(stripped, null, 2)}\n`);
  } else if (action === 'restore') {
    if (fs.existsSync(kept)) fs.renameSync(kept, manifest);
  } else {
    console.error('usage: node scripts/pack-manifest.mjs strip|restore [package folder]');
    process.exit(2);
  }
}
