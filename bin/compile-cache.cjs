// V8's code cache for the program's files (dist/bundle/), so that a run after the first one skips parsing and
// compiling what it loads (README, "Performance": to the first request of `provider versions list`, some 25 ms
// of 55 over node -e 0 on a busy 2-core machine).
//
// From Node 22.8, Node keeps this cache itself (module.enableCompileCache, given our folder). Node 20 to 22.7
// have no such call, but compile a CommonJS module through Module.prototype._compile, where V8's cached data can be
// given to the compiler (vm.Script's `cachedData`): this does that for the files under `root` only, reading
// each one's cache if there is one and writing, as the process exits, the caches of those it compiled afresh.
// Written here rather than taken from v8-compile-cache (unmaintained since 2023), because of where and how it
// keeps the cache:
//   - in the user's own cache folder ($XDG_CACHE_HOME or ~/.cache, %LOCALAPPDATA% on Windows), made 0700, and
//     used only if it is a folder of this user and every folder above it belongs to the user or to root, and
//     none of them may be written to by others (unless sticky, as /tmp is: others cannot rename what is in it):
//     V8 runs cached bytecode without checking it against the source, so a cache that someone else could write
//     or put in its place would let them run code as the user. It is used by its real path from then on;
//   - keyed by the SHA-256 of each file's source (and its path), never by its name alone: V8 itself rejects
//     cached data only for a source of another length, so a file changed in place would otherwise run its old
//     code;
//   - one folder per Node version, architecture and V8 cache format, and in it one per build of the program (named by the entry
//     file's hash: every chunk's name holds a hash of its content, so any change reaches the entry), the
//     `KEPT_BUILDS` used last kept (a build in use marks its folder; a new one removes the least recently used),
//     so that two installs used in turn (a global one and a project's) do not remove each other's every run, and
//     the cache never grows beyond a few builds';
//   - labelled by the state of V8's flags it was made in. V8 refuses a cache made under other flags than the
//     current ones (it keeps a hash of them in the cache's header), and the program changes flags as it runs
//     (src/footprint.ts), some of them behind its back: a worker thread's heap sets the young generation's growth
//     factor back to 2. A cache made at exit for a file compiled before such a change would be refused at every
//     run. So each cache is made at the latest before any change the hook can see (a flag set, a worker started)
//     and at exit, and is filed under the flag state it was made in (read off a cache of a one-character
//     script, made on the spot: a few microseconds), and a file is looked for under the state it compiles in.
// Nothing here can fail a run: a folder that cannot be made, a cache that cannot be read or is rejected, a write
// that fails: the program compiles as it would without. NODE_DISABLE_COMPILE_CACHE=1 (Node's own switch) turns
// it off.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const Module = require('node:module');
const os = require('node:os');
const path = require('node:path');
const vm = require('node:vm');

/** The folder the caches live under, or undefined when there is none to use. */
function cacheRoot(env = process.env) {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  // A relative path in an XDG variable is to be ignored (XDG Base Directory Specification).
  const absolute = (dir) => (dir && path.isAbsolute(dir) ? dir : undefined);
  let base = absolute(env.XDG_CACHE_HOME);
  if (base === undefined && process.platform === 'win32') base = absolute(env.LOCALAPPDATA);
  if (base === undefined) {
    const home = absolute(env.HOME) ?? absolute(os.homedir());
    if (home === undefined) return undefined;
    base = path.join(home, '.cache');
  }
  return path.join(base, 'provider-registry-cli', 'compile-cache');
}

/** Whether folders have an owner and permission bits to check (not on Windows). */
const OWNED = process.platform !== 'win32' && typeof process.getuid === 'function';

/** Whether `dir` is a folder (not a link) of this user that no one else may write to. */
function isPrivate(dir) {
  const stat = fs.lstatSync(dir);
  if (!stat.isDirectory()) return false;
  return !OWNED || (stat.uid === process.getuid() && (stat.mode & 0o022) === 0);
}

/**
 * Whether no one but this user (and root) can change what `dir`, a real path, holds: every folder above it
 * belongs to the user or to root and is not writable by others, or is sticky (others cannot rename or remove
 * what is in it). Otherwise someone could put a folder of theirs in its place after it was checked.
 */
function safeAncestors(dir) {
  if (!OWNED) return true;
  const uid = process.getuid();
  for (let above = path.dirname(dir); ; above = path.dirname(above)) {
    const stat = fs.statSync(above);
    if (stat.uid !== uid && stat.uid !== 0) return false;
    if ((stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0) return false;
    if (path.dirname(above) === above) return true;
  }
}

/** Makes `dir` (and its parents) private to this user; its real path if it is, else undefined. */
function privateDir(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const real = fs.realpathSync(dir);
  return isPrivate(real) && safeAncestors(real) ? real : undefined;
}

function sha256(text) {
  return crypto.createHash('sha256').update(text).digest('hex');
}

/**
 * The state of V8's flags, as V8 checks it when it reads a cache: the header of the cache of a one-character
 * script, made now. A V8 cache starts with a magic number, V8's version hash, the source's hash and the hash of
 * the flags it was made under (4 bytes each; the rest of it varies from process to process). Some 8 µs. Were a
 * V8 to move the flags' hash out of those 16 bytes, states would only be told apart less: V8 still refuses a
 * cache made under other flags, and the file compiles afresh.
 */
function flagState() {
  const probe = new vm.Script('0', { filename: 'provider-flag-state' }).createCachedData();
  return probe.subarray(0, 16).toString('hex');
}

/** What the hook did in this process (for tests): files compiled from a cache, afresh, and caches V8 refused. */
const stats = { cached: 0, fresh: 0, rejected: 0 };

/**
 * Turns the cache on for the files under `root`, whose entry (the first file loaded) is `entry`. Returns what it
 * did: 'node' (Node's own cache), 'hook' (this one), or 'off' (no usable folder, or turned off). `builtIn: false`
 * uses the hook even where Node has its own cache (tests).
 * @param {{ root: string, entry: string, env?: NodeJS.ProcessEnv, builtIn?: boolean }} options
 */
function enableCompileCache({ root, entry, env = process.env, builtIn = true }) {
  const base = cacheRoot(env);
  if (base === undefined) return 'off';
  const v8 = require('node:v8');
  /** @type {string | undefined} */
  let versionDir;
  try {
    versionDir = privateDir(
      path.join(base, `node-${process.version}-${process.arch}-${v8.cachedDataVersionTag().toString(16)}`),
    );
  } catch {
    // a folder that cannot be made or read
  }
  if (versionDir === undefined) return 'off';
  if (builtIn && typeof Module.enableCompileCache === 'function') {
    // Node's own checks of what it reads (source hash, V8 version and flags); its folder is private as above.
    Module.enableCompileCache(versionDir);
    return 'node';
  }
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  /** The current build's folder, set when the entry compiles (it compiles first). */
  let buildDir;
  /**
   * The flag state, read once and again after each flag set: only a worker's start changes it unseen, at a moment
   * of its own, so once one has started it is read every time.
   * @type {string | undefined}
   */
  let known;
  let workers = false;
  const currentState = () => (workers ? flagState() : (known ??= flagState()));
  /** @type {{ key: string, script: vm.Script }[]} compiled afresh, their caches not made yet */
  const fresh = [];
  const compile = Module.prototype._compile;
  // No closure here may capture `content`: the module's `require` below lives as long as the module, and would keep
  // every file's source in memory with it (5–6 MB for publish, seen in the bench's memory figure).
  Module.prototype._compile = function cachedCompile(content, filename, format) {
    // Node 22 and later pass the module's format: an ES module loaded by require() is Node's to compile.
    if (!filename.startsWith(prefix) || (format !== undefined && format !== 'commonjs'))
      return compile.call(this, content, filename, format);
    // A file that may call `import()` (cosmiconfig's, of an ES module configuration file) is left to Node: a
    // vm.Script gives it Node's loader only with an experimental warning on Node 20, and a script compiled from a
    // cache loses it. The text is enough to tell (a comment that mentions one only costs that file its cache).
    const dynamic = content.includes('import(');
    if (dynamic && filename !== entry) return compile.call(this, content, filename, format);
    // The text V8 compiles, wrapper included: V8 checks only its length against a cache.
    const wrapped = Module.wrap(content);
    const key = sha256(`${path.relative(root, filename)}\0${wrapped}`);
    // The entry's key names the build: it holds the name of every chunk, each named by a hash of its content.
    if (filename === entry) buildDir = openBuild(versionDir, key);
    if (buildDir === undefined || dynamic) return compile.call(this, content, filename, format);
    const file = path.join(buildDir, `${key}.${currentState()}.v8`);
    let cachedData;
    try {
      cachedData = fs.readFileSync(file);
    } catch {
      // none yet
    }
    const script = new vm.Script(wrapped, { filename, cachedData });
    if (cachedData !== undefined && script.cachedDataRejected) stats.rejected += 1;
    if (cachedData === undefined || script.cachedDataRejected) {
      stats.fresh += 1;
      fresh.push({ key, script });
    } else {
      stats.cached += 1;
    }
    const run = script.runInThisContext({ displayErrors: true });
    // The module's `require`, as Node makes it (lib/internal/modules/helpers.js, makeRequireFunction).
    const moduleRequire = (id) => this.require(id);
    moduleRequire.resolve = (request, options) => Module._resolveFilename(request, this, false, options);
    moduleRequire.resolve.paths = (request) => Module._resolveLookupPaths(request, this);
    moduleRequire.main = require.main;
    moduleRequire.extensions = Module._extensions;
    moduleRequire.cache = Module._cache;
    return run.call(this.exports, this.exports, moduleRequire, this, filename, path.dirname(filename));
  };
  // The caches of the files compiled so far are made before any change of V8's flags the hook can see, in the
  // state they were compiled in, and the rest at exit; each is filed under the state it was made in.
  /** @type {{ file: string, data: Buffer }[]} */
  const made = [];
  const takeCaches = () => {
    if (fresh.length === 0) return;
    const state = currentState();
    for (const { key, script } of fresh.splice(0))
      made.push({ file: path.join(buildDir, `${key}.${state}.v8`), data: script.createCachedData() });
  };
  const setFlagsFromString = v8.setFlagsFromString;
  v8.setFlagsFromString = function setFlagsAfterCaching(flags) {
    takeCaches();
    known = undefined;
    return setFlagsFromString.call(this, flags);
  };
  // A worker thread's heap may change a flag of the process's as it is made, some time after this call.
  const threads = require('node:worker_threads');
  const Worker = threads.Worker;
  threads.Worker = class CachingWorker extends Worker {
    constructor(...args) {
      takeCaches();
      workers = true;
      super(...args);
    }
  };
  process.once('exit', () => {
    takeCaches();
    for (const { file, data } of made) {
      // Written whole under another name, then renamed: a run reading it meanwhile sees all of it or none.
      const partial = `${file}.${process.pid}.part`;
      try {
        fs.writeFileSync(partial, data, { mode: 0o600, flag: 'wx' });
        fs.renameSync(partial, file);
      } catch {
        try {
          fs.rmSync(partial, { force: true });
        } catch {
          // left behind: it is never read (only names ending .v8 are)
        }
      }
    }
  });
  return 'hook';
}

/** How many builds' caches are kept, those used last (a few MB each). */
const KEPT_BUILDS = 3;

/**
 * The folder of the build whose entry hashes to `id`, marked as used now; made if new, the least recently used
 * of the others removed beyond `KEPT_BUILDS`. Undefined when there is none to use.
 */
function openBuild(versionDir, id) {
  const dir = path.join(versionDir, id.slice(0, 32));
  try {
    const now = new Date();
    if (fs.existsSync(dir)) {
      if (!isPrivate(dir)) return undefined;
      fs.utimesSync(dir, now, now);
      return dir;
    }
    const others = fs
      .readdirSync(versionDir)
      .filter((name) => /^[0-9a-f]{32}$/.test(name))
      .map((name) => ({
        dir: path.join(versionDir, name),
        used: fs.statSync(path.join(versionDir, name)).mtimeMs,
      }))
      .sort((a, b) => b.used - a.used);
    for (const other of others.slice(KEPT_BUILDS - 1)) fs.rmSync(other.dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { mode: 0o700 });
    return isPrivate(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

module.exports = { enableCompileCache, stats };
