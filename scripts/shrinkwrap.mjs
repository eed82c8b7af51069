#!/usr/bin/env node
// The published package pins its dependencies: `npm pack` (prepack) writes npm-shrinkwrap.json, the runtime
// part of package-lock.json (the root and every package not marked dev), and postpack removes it again. npm
// installs a registry package's shrinkwrap as it is (docs.npmjs.com, "npm-shrinkwrap.json": meant for "an
// application deployed through the publishing process", e.g. a command-line tool), so `npm install -g
// provider-registry-cli` and `npx provider-registry-cli` get exactly the versions and integrity hashes the tests
// ran with. A tarball installed by path (`npm install ./provider-registry-cli-X.tgz`) is another matter: npm then
// resolves the ranges in package.json itself (seen with npm 11.19: it fetches each dependency's packument).
// test/install/package.test.ts installs exactly the shrinkwrap's tree (`npm ci` of a lock made from it, offline).
//
//   node scripts/shrinkwrap.mjs write|remove [package folder, default: this repository]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const [action, folder = fileURLToPath(new URL('..', import.meta.url))] = process.argv.slice(2);
const lockUrl = path.join(folder, 'package-lock.json');
const shrinkwrapUrl = path.join(folder, 'npm-shrinkwrap.json');
/**
 * A JSON file's document, typed as what it is until the caller says more.
 * @param {string} file
 * @returns {unknown}
 */
function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

if (action === 'write') {
  const lock =
    /** @type {{ packages: Record<string, { dev?: boolean, devOptional?: boolean, devDependencies?: unknown }> }} */ (
      readJson(lockUrl)
    );
  /** @type {typeof lock.packages} */
  const packages = {};
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (entry.dev === true) continue;
    // devOptional: a dev dependency that a runtime package also names as optional (here the optional peers of
    // cosmiconfig: typescript and its types). Listed in a shrinkwrap, npm would install it; provider never loads it.
    if (entry.devOptional === true) continue;
    packages[where] = where === '' ? { ...entry, devDependencies: undefined } : entry;
  }
  fs.writeFileSync(shrinkwrapUrl, `${JSON.stringify({ ...lock, packages }, null, 2)}\n`);
  console.log(`npm-shrinkwrap.json: ${Object.keys(packages).length - 1} runtime packages`);
} else if (action === 'remove') {
  fs.rmSync(shrinkwrapUrl, { force: true });
} else {
  console.error('usage: node scripts/shrinkwrap.mjs write|remove');
  process.exit(2);
}
