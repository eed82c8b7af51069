#!/usr/bin/env node
// The shim: the program is dist/bundle/provider.js, built by `npm run build` (scripts/bundle.mjs package): one
// CommonJS file holding commander and the command declarations, which loads each command's core and the libraries
// it needs from dist/bundle/chunks/ when that command runs. Node's own compile cache (module.enableCompileCache,
// Node 22.1+; the same call TypeScript, ESLint and npm make) keeps V8's compiled code of those files between runs.
//
// The version is data, answered here without loading even that file: `provider --version` (or `-V`) on its own
// prints the version line. Anything else, help included, runs the program. This file is CommonJS: Node starts a
// CommonJS script some 3 ms sooner than an ES module, a sixth of its own start-up.
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const args = process.argv.slice(2);

/** The oldest Node.js the package runs on (package.json's engines), as [major, minor]. */
const FLOOR = [22, 14];
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);

if (major < FLOOR[0] || (major === FLOOR[0] && minor < FLOOR[1])) {
  // Said before anything loads: an older Node would fail later on with a stack of the bundle's internals.
  process.stderr.write(
    `provider: needs Node.js ${FLOOR.join('.')} or later, and this is Node.js ${process.versions.node}; ` +
      'install a current one (Node.js 24 LTS), or use the single executable, which carries its own\n',
  );
  process.exitCode = 2; // a set-up error, as a bad configuration is (README, Exit codes)
} else if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else {
  // Before the first of the program's files loads. Node keeps the cache in NODE_COMPILE_CACHE, or else in
  // os.tmpdir()/node-compile-cache, and turns it off under NODE_DISABLE_COMPILE_CACHE.
  require('node:module').enableCompileCache?.();
  const program = join(ROOT, 'dist', 'bundle', 'provider.js');
  /** @type {{ main: () => Promise<void> } | undefined} */
  let loaded;
  try {
    loaded = require(program);
  } catch (error) {
    // A package without its build (a git clone before `npm run build`): said plainly, not as a stack.
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'MODULE_NOT_FOUND') throw error;
    const reason = /** @type {Error} */ (error).message.split('\n')[0];
    process.stderr.write(`provider: cannot load dist/bundle/provider.js (${reason}); run npm run build\n`);
    process.exitCode = 2;
  }
  if (loaded !== undefined) void loaded.main();
}
