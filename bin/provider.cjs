#!/usr/bin/env node
// The shim: the program is dist/bundle/provider.js, built by `npm run build` (scripts/bundle.mjs package): one
// CommonJS file holding commander and the command declarations, which loads each command's core and the libraries
// it needs from dist/bundle/chunks/ when that command runs. Node's own compile cache (module.enableCompileCache,
// Node 22.1+; the same call TypeScript, ESLint and npm make) keeps V8's compiled code of those files between runs.
//
// Help and the version are data, answered here without loading even that file, because start-up is all they
// cost: `provider --version` (or `-V`) on its own prints the version line, and the help of any command —
// `provider [command…] --help` (or `-h`), `provider help [command]` — when stdout is not a terminal or is 80
// columns wide, is the text the build rendered for it with the program itself (scripts/render-help.mjs →
// dist/help.json). Anything else, or a build without that file, runs the program. This file is CommonJS: Node
// starts a CommonJS script some 3 ms sooner than an ES module, a sixth of its own start-up.
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const args = process.argv.slice(2);

/** The words of a command path whose help `args` asks for, if they ask for nothing else. */
function helpWords() {
  const last = args[args.length - 1];
  if (last === '--help' || last === '-h') return args.slice(0, -1);
  if (args[0] === 'help' && args.length <= 2) return args.slice(1);
  return undefined;
}

/** The help the build rendered for `words`, when it holds the one this terminal would get. */
function renderedHelp() {
  const words = helpWords();
  // An option among the words, or a word with a space (`"versions list"` is not the two words): the program.
  if (words === undefined || words.some((word) => word.startsWith('-') || /\s/.test(word))) return undefined;
  if (process.stdout.isTTY && process.stdout.columns !== 80) return undefined;
  try {
    /** @type {{ commands: Record<string, string> }} */
    const rendered = JSON.parse(readFileSync(join(ROOT, 'dist', 'help.json'), 'utf8'));
    return Object.hasOwn(rendered.commands, words.join(' ')) ? rendered.commands[words.join(' ')] : undefined;
  } catch {
    return undefined; // not built with it: the program prints its help
  }
}

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
  const help = renderedHelp();
  if (help !== undefined) {
    process.stdout.write(help);
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
}
