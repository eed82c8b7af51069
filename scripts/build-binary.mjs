#!/usr/bin/env node
// The single executable, for runners without Node.js: Node's single executable applications (SEA,
// https://nodejs.org/api/single-executable-applications.html). Builds for the machine it runs on, with Node 24
// (RELEASE_NODE, the line the release, the Action and the docs name): the node running this script when it is
// of that line, else the official binary from the npm registry (scripts/with-node.mjs, .cache/node/24/).
//
//   npm run build:binary            # build/provider-<platform>-<arch>[.exe]
//   npm run build:binary -- --out <file>
//
// Steps, as Node's documentation gives them: the whole CLI bundled into one CommonJS file (scripts/bundle.mjs
// cli), a preparation blob from it (`node --experimental-sea-config`), a copy of this node binary, the blob
// injected into the copy with postject (npm registry), and on macOS the copy signed again (ad hoc). The handler
// runner of `runtask serve` runs as `<executable> -e <its function's source>`
// (src/runtask/server/handler/spawnHelper.ts, src/cli/bundleEntry.ts). package.json and assets/ go in as the
// executable's assets (`seaAssets`), read with node:sea by src/packageFiles.ts; nothing is read beside the binary. A node binary without the SEA fuse (some distributions build Node without
// it) cannot build one: the script says so and exits 3.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from './bundle.mjs';
import { nodeBinDir } from './with-node.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
/** The sentinel postject looks for, from Node's documentation. */
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** The Node.js line the released single executables are built with. */
export const RELEASE_NODE = '24';

/** The node binary of the release's line: this one when it is of that line, else one from the npm registry. */
export function releaseNode() {
  if (process.versions.node.split('.')[0] === RELEASE_NODE) return process.execPath;
  return path.join(nodeBinDir(RELEASE_NODE), process.platform === 'win32' ? 'node.exe' : 'node');
}

/**
 * Whether `node` can become a single executable; the reason when it cannot.
 * @param {string} node a node binary
 * @returns {string | undefined}
 */
export function cannotBuild(node) {
  if (!fs.readFileSync(node).includes(FUSE)) {
    return `${node} was built without the SEA fuse (${FUSE}); use an official Node.js binary`;
  }
  return undefined;
}

/**
 * The files the program reads besides its code, by the names src/packageFiles.ts asks for: package.json and
 * every file of assets/ but its README.
 * @returns {Record<string, string>}
 */
function seaAssets() {
  /** @type {Record<string, string>} */
  const assets = { 'package.json': path.join(ROOT, 'package.json') };
  for (const name of fs.readdirSync(path.join(ROOT, 'assets'))) {
    if (name !== 'README.md') assets[`assets/${name}`] = path.join(ROOT, 'assets', name);
  }
  return assets;
}

/**
 * Builds the executable with `node` (default: Node 24, `releaseNode()`); resolves to its path.
 * @param {string} [out]
 * @param {string} [node]
 */
export async function buildBinary(out, node = releaseNode()) {
  const reason = cannotBuild(node);
  if (reason !== undefined)
    throw Object.assign(new Error(`cannot build a single executable here: ${reason}`), { exitCode: 3 });
  const exe = process.platform === 'win32' ? '.exe' : '';
  const target = path.resolve(ROOT, out ?? `build/provider-${process.platform}-${process.arch}${exe}`);
  // build/ is not in a fresh clone (ignored by git): made before the scratch folder beside the target.
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const work = fs.mkdtempSync(path.join(path.dirname(target), '.sea-'));
  try {
    const script = await bundle('cli', path.join(work, 'provider.cjs'));
    const blob = path.join(work, 'provider.blob');
    const config = path.join(work, 'sea-config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        main: script,
        output: blob,
        disableExperimentalSEAWarning: true,
        useCodeCache: true,
        assets: seaAssets(),
      }),
    );
    execFileSync(node, ['--experimental-sea-config', config], { stdio: 'pipe' });
    fs.rmSync(target, { force: true });
    fs.copyFileSync(node, target);
    fs.chmodSync(target, 0o755);
    if (process.platform === 'darwin') execFileSync('codesign', ['--remove-signature', target]);
    const postject = require.resolve('postject/dist/cli.js');
    const args = [postject, target, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE];
    if (process.platform === 'darwin') args.push('--macho-segment-name', 'NODE_SEA');
    execFileSync(process.execPath, args, { stdio: 'pipe' });
    if (process.platform === 'darwin') execFileSync('codesign', ['--sign', '-', target]);
    return target;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  try {
    const written = await buildBinary(args[0] === '--out' ? args[1] : undefined);
    const version = execFileSync(written, ['--version'], { encoding: 'utf8' }).trim();
    const size = fs.statSync(written).size;
    console.log(
      `${path.relative(process.cwd(), written)}: ${(size / 2 ** 20).toFixed(0)} MiB, provider ${version}`,
    );
  } catch (error) {
    console.error(`build:binary: ${/** @type {Error} */ (error).message}`);
    process.exit(/** @type {{ exitCode?: number }} */ (error).exitCode ?? 1);
  }
}
