/**
 * bin/compile-cache.cjs: V8's code cache for the program's files, kept in the user's private cache folder and
 * keyed by each file's content. Each case runs a small program of CommonJS files through the hook in a child
 * process, as the shim does, and reads what the hook did (its `stats`) and what the program printed.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as Module from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';

const HOOK = path.join(REPO_ROOT, 'bin', 'compile-cache.cjs');
const SHIM = path.join(REPO_ROOT, 'bin', 'provider.cjs');

interface Outcome {
  mode: string;
  printed: string;
  stats: { cached: number; fresh: number; rejected: number };
}

/** A program of two files under `dir/app`: the entry requires `lib.js`, which says `word`. */
function writeProgram(dir: string, word: string): { root: string; entry: string; lib: string } {
  const root = path.join(dir, 'app');
  fs.mkdirSync(root, { recursive: true });
  const entry = path.join(root, 'entry.js');
  const lib = path.join(root, 'lib.js');
  fs.writeFileSync(entry, "'use strict';\nmodule.exports = () => require('./lib.js').say();\n");
  fs.writeFileSync(lib, `'use strict';\nexports.say = function say() { return '${word}'; };\n`);
  return { root, entry, lib };
}

/** Runs the program through the hook in a new process with `env`; what it printed and what the hook did. */
function runThrough(
  program: { root: string; entry: string },
  env: Record<string, string>,
  { awaits = false } = {},
): Outcome {
  const script = [
    `const hook = require(${JSON.stringify(HOOK)});`,
    `const mode = hook.enableCompileCache({ root: ${JSON.stringify(program.root)}, entry: ${JSON.stringify(program.entry)}, builtIn: false });`,
    `const result = require(${JSON.stringify(program.entry)})();`,
    awaits
      ? 'result.then((printed) => console.log(JSON.stringify({ mode, printed, stats: hook.stats })));'
      : 'console.log(JSON.stringify({ mode, printed: result, stats: hook.stats }));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['-e', script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out) as Outcome;
}

/** Every file under `dir`, relative, with its permission bits. */
function listing(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    found[path.relative(dir, file)] = (fs.statSync(file).mode & 0o777).toString(8);
  }
  return found;
}

const cacheFiles = (dir: string): string[] =>
  Object.keys(listing(dir)).filter((file) => file.endsWith('.v8'));

describe('the compile cache hook', () => {
  it('writes each file’s cache on the first run, in folders only the user may enter, and compiles from it on the next', () => {
    const dir = tempDir('compile-cache');
    const program = writeProgram(dir, 'one');
    const env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    const first = runThrough(program, env);
    expect(first).toEqual({ mode: 'hook', printed: 'one', stats: { cached: 0, fresh: 2, rejected: 0 } });
    const files = listing(path.join(dir, 'cache'));
    expect(cacheFiles(path.join(dir, 'cache'))).toHaveLength(2);
    for (const [file, mode] of Object.entries(files))
      expect(mode, file).toBe(file.endsWith('.v8') ? '600' : '700');
    const second = runThrough(program, env);
    expect(second).toEqual({ mode: 'hook', printed: 'one', stats: { cached: 2, fresh: 0, rejected: 0 } });
  });

  it('never runs a file’s old code: a file changed in place, to the same length, compiles afresh', () => {
    const dir = tempDir('compile-cache-changed');
    const program = writeProgram(dir, 'one');
    const env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    runThrough(program, env);
    // Same length: V8 alone would take the old cache for it (it checks the source's length, not its text).
    writeProgram(dir, 'two');
    expect(runThrough(program, env)).toEqual({
      mode: 'hook',
      printed: 'two',
      stats: { cached: 1, fresh: 1, rejected: 0 },
    });
  });

  it('a program that changes V8’s flags as it runs (src/footprint.ts) still finds every file’s cache usable next time', () => {
    const dir = tempDir('compile-cache-flags');
    const program = writeProgram(dir, 'one');
    // The entry loads lib.js only after changing a flag: V8 refuses a cache made under other flags than the
    // current ones, so the entry's must be made before the change, and lib.js's after it.
    fs.writeFileSync(
      program.entry,
      "'use strict';\nrequire('node:v8').setFlagsFromString('--no-turbofan');\nmodule.exports = () => require('./lib.js').say();\n",
    );
    const env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    expect(runThrough(program, env).stats).toEqual({ cached: 0, fresh: 2, rejected: 0 });
    expect(runThrough(program, env).stats).toEqual({ cached: 2, fresh: 0, rejected: 0 });
  });

  it('a worker thread started as the program runs (its heap resets a flag behind the program’s back) leaves no cache refused next time', () => {
    const dir = tempDir('compile-cache-worker');
    const program = writeProgram(dir, 'one');
    const late = path.join(program.root, 'late.js');
    fs.writeFileSync(late, "'use strict';\nexports.word = 'late';\n");
    // As src/footprint.ts and the hashing workers do: a growth factor of 1, a file loaded, a worker whose heap puts
    // the factor back to 2, the factor set to 1 again once the worker is online, another file loaded.
    fs.writeFileSync(
      program.entry,
      [
        "'use strict';",
        "const v8 = require('node:v8');",
        "const { Worker } = require('node:worker_threads');",
        "v8.setFlagsFromString('--semi-space-growth-factor=1');",
        "const lib = require('./lib.js');",
        'module.exports = () =>',
        '  new Promise((resolve) => {',
        "    const worker = new Worker('0', { eval: true });",
        "    worker.once('online', () => {",
        "      v8.setFlagsFromString('--semi-space-growth-factor=1');",
        "      resolve(`${lib.say()} ${require('./late.js').word}`);",
        '      void worker.terminate();',
        '    });',
        '  });',
        '',
      ].join('\n'),
    );
    const env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    const first = runThrough(program, env, { awaits: true });
    expect(first).toEqual({ mode: 'hook', printed: 'one late', stats: { cached: 0, fresh: 3, rejected: 0 } });
    for (let run = 0; run < 2; run++) {
      expect(runThrough(program, env, { awaits: true }).stats).toEqual({ cached: 3, fresh: 0, rejected: 0 });
    }
  });

  it('each build of the entry has a folder of its own; the three used last are kept, the least recently used goes', () => {
    const dir = tempDir('compile-cache-builds');
    const program = writeProgram(dir, 'one');
    const env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    const source = fs.readFileSync(program.entry, 'utf8');
    const builds = (): string[] =>
      Object.keys(fs.existsSync(path.join(dir, 'cache')) ? listing(path.join(dir, 'cache')) : {})
        .filter((f) => /[0-9a-f]{32}$/.test(f))
        .map((f) => path.basename(f))
        .sort();
    /** Runs build `name` of the entry; what the hook did, and that build's folder. */
    let step = 0;
    const runBuild = (name: string) => {
      fs.writeFileSync(program.entry, `${source}// build ${name}\n`);
      const before = builds();
      const outcome = runThrough(program, env);
      // The hook marks the build it ran as used now, the others are in the past: that one is moved to a minute
      // after the last run's, so that no two folders tie whatever the file system's timestamp resolution.
      const versions = path.join(dir, 'cache', 'provider-registry-cli', 'compile-cache');
      const folders = path.join(versions, fs.readdirSync(versions)[0]!);
      const used = (f: string): number => fs.statSync(path.join(folders, f)).mtimeMs;
      const ran = builds().reduce((latest, f) => (used(f) > used(latest) ? f : latest));
      const at = new Date(Date.UTC(2026, 0, 1, 0, ++step));
      fs.utimesSync(path.join(folders, ran), at, at);
      return { stats: outcome.stats, folder: builds().find((f) => !before.includes(f)) };
    };
    const a = runBuild('a');
    const b = runBuild('b');
    const c = runBuild('c');
    expect(builds()).toEqual([a.folder, b.folder, c.folder].sort());
    // Build a used again (two installs used in turn): its cache is still there, and it is now the latest used.
    expect(runBuild('a').stats).toEqual({ cached: 2, fresh: 0, rejected: 0 });
    const d = runBuild('d');
    expect(builds()).toEqual([a.folder, c.folder, d.folder].sort());
  });

  it('a damaged cache file is refused by V8, the file compiles afresh and its cache is written again', () => {
    const dir = tempDir('compile-cache-damaged');
    const program = writeProgram(dir, 'one');
    const cache = path.join(dir, 'cache');
    runThrough(program, { XDG_CACHE_HOME: cache });
    for (const file of cacheFiles(cache)) fs.writeFileSync(path.join(cache, file), 'not a code cache');
    expect(runThrough(program, { XDG_CACHE_HOME: cache })).toEqual({
      mode: 'hook',
      printed: 'one',
      stats: { cached: 0, fresh: 2, rejected: 2 },
    });
    expect(runThrough(program, { XDG_CACHE_HOME: cache }).stats).toEqual({
      cached: 2,
      fresh: 0,
      rejected: 0,
    });
  });

  it('is not used in a folder others may write to, nor with NODE_DISABLE_COMPILE_CACHE set', () => {
    const dir = tempDir('compile-cache-off');
    const program = writeProgram(dir, 'one');
    const shared = path.join(dir, 'shared');
    runThrough(program, { XDG_CACHE_HOME: shared });
    const versionDir = path.join(
      shared,
      'provider-registry-cli',
      'compile-cache',
      fs.readdirSync(path.join(shared, 'provider-registry-cli', 'compile-cache'))[0]!,
    );
    fs.chmodSync(versionDir, 0o777);
    const off = { mode: 'off', printed: 'one', stats: { cached: 0, fresh: 0, rejected: 0 } };
    expect(runThrough(program, { XDG_CACHE_HOME: shared })).toEqual(off);
    const disabled = path.join(dir, 'disabled');
    expect(runThrough(program, { XDG_CACHE_HOME: disabled, NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual(off);
    expect(fs.existsSync(disabled)).toBe(false);
  });

  it('is not used below a folder others may write to (a sticky one excepted): they could put their own in its place', () => {
    const dir = tempDir('compile-cache-parents');
    const program = writeProgram(dir, 'one');
    const parent = path.join(dir, 'parent');
    const cache = path.join(parent, 'cache');
    fs.mkdirSync(cache, { recursive: true });
    fs.chmodSync(parent, 0o777);
    expect(runThrough(program, { XDG_CACHE_HOME: cache }).mode).toBe('off');
    // Sticky, as /tmp is: others may add to it, but not rename or remove what is not theirs.
    fs.chmodSync(parent, 0o1777);
    expect(runThrough(program, { XDG_CACHE_HOME: cache }).mode).toBe('hook');
    // A link to a private folder is used by its real path.
    fs.chmodSync(parent, 0o755);
    const link = path.join(dir, 'link');
    fs.symlinkSync(cache, link);
    expect(runThrough(program, { XDG_CACHE_HOME: link }).stats).toEqual({ cached: 2, fresh: 0, rejected: 0 });
  });

  it('leaves a file that calls import() to Node, whose loader it needs, and the import works', () => {
    const dir = tempDir('compile-cache-import');
    const program = writeProgram(dir, 'one');
    const esm = path.join(dir, 'config.mjs');
    fs.writeFileSync(esm, 'const word = await Promise.resolve("imported");\nexport default word;\n');
    fs.writeFileSync(
      program.entry,
      `'use strict';\nmodule.exports = () => import(${JSON.stringify(pathToFileURL(esm).href)}).then((m) => \`\${require('./lib.js').say()} \${m.default}\`);\n`,
    );
    const env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    for (let run = 0; run < 2; run++) {
      // The entry is Node's to compile: only lib.js goes through the cache.
      expect(runThrough(program, env, { awaits: true })).toEqual({
        mode: 'hook',
        printed: 'one imported',
        stats: run === 0 ? { cached: 0, fresh: 1, rejected: 0 } : { cached: 1, fresh: 0, rejected: 0 },
      });
    }
  });

  it('ignores a relative XDG_CACHE_HOME, as the XDG specification says, for HOME/.cache', () => {
    const dir = tempDir('compile-cache-relative');
    const program = writeProgram(dir, 'one');
    const home = path.join(dir, 'home');
    expect(runThrough(program, { XDG_CACHE_HOME: 'relative', HOME: home }).stats.fresh).toBe(2);
    expect(cacheFiles(path.join(home, '.cache', 'provider-registry-cli'))).toHaveLength(2);
  });
});

describe('provider with the compile cache', () => {
  /** Node's own cache (22.8 and later) instead of the hook: its files are named and laid out as Node wants. */
  const nodeOwn = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

  /** Every file under `dir` with its inode and modification time: a cache rewritten gets a new inode. */
  function fileStates(dir: string): Record<string, string> {
    const states: Record<string, string> = {};
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const stat = fs.statSync(file);
      states[path.relative(dir, file)] = `${stat.ino}:${stat.mtimeMs}`;
    }
    return states;
  }

  function provider(args: string[], env: Record<string, string>, cwd: string): string {
    return execFileSync(process.execPath, [SHIM, ...args], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  const verifyArgs = [
    'verify',
    path.join(REPO_ROOT, 'fixtures', 'release'),
    '--key',
    path.join(REPO_ROOT, 'fixtures', 'keys', 'signer.pub.asc'),
  ];

  it('a second run compiles the program from the cache the first wrote (none refused, none rewritten), and prints the same', () => {
    const dir = tempDir('compile-cache-provider');
    const env = { HOME: dir };
    const first = provider(verifyArgs, env, dir);
    const cache = path.join(dir, '.cache', 'provider-registry-cli', 'compile-cache');
    const written = fileStates(cache);
    if (!nodeOwn) expect(cacheFiles(cache).length).toBeGreaterThan(5);
    expect(Object.keys(written).length).toBeGreaterThan(5);
    const second = provider(verifyArgs, env, dir);
    expect(second.replace(/\d+ms/g, 'Nms')).toBe(first.replace(/\d+ms/g, 'Nms'));
    // A cache refused by V8 would be made again at exit, under the same name but as a new file. (Node's own cache,
    // 22.8 and later, decides for itself when it writes, and is not checked here beyond being there.)
    if (!nodeOwn) expect(fileStates(cache)).toEqual(written);
  });

  it('reads an ES module configuration file (a default export after a top-level await) the same with the cache, from it, and without it', () => {
    const dir = tempDir('compile-cache-config');
    fs.writeFileSync(
      path.join(dir, 'provider.config.mjs'),
      'const namespace = await Promise.resolve("from-config");\nexport default { namespace };\n',
    );
    const env = { HOME: dir };
    const runs = [
      provider([...verifyArgs, '--json'], env, dir),
      provider([...verifyArgs, '--json'], env, dir),
      provider([...verifyArgs, '--json'], { ...env, NODE_DISABLE_COMPILE_CACHE: '1' }, dir),
    ];
    for (const out of runs) {
      const doc = JSON.parse(out) as { ok: boolean; provider: { namespace: string }; warnings: string[] };
      expect(doc).toMatchObject({ ok: true, provider: { namespace: 'from-config' }, warnings: [] });
    }
  });
});
