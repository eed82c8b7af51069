#!/usr/bin/env node
// Bundled builds of the program, with esbuild:
//
//   node scripts/bundle.mjs package [--out dir]   # what bin/provider.cjs runs: dist/bundle/ (npm run build)
//   node scripts/bundle.mjs action [--out file]   # the GitHub Action: action/main.cjs (committed; action.yml runs it)
//   node scripts/bundle.mjs cli [--out file]      # the whole CLI in one file: build/provider.cjs (the single
//                                                 # executable's script, scripts/build-binary.mjs)
//
// One esbuild build makes all three (`buildOnce`): the three entries, split at every dynamic `import()` into
// chunks they share. `package` is that build as it is, with every file turned into CommonJS (`toCommonJs`):
// bin/provider.cjs requires the entry (commander and the command declarations), and each command's core, and the
// heavy libraries only some commands need (got, zod, openpgp, ora, the prompts…), are chunks loaded when that
// command runs. `action` and `cli` join their entry and every chunk it reaches into one CommonJS file, for the
// places that have no node_modules and no folder of files (the Action's checkout, a single executable): the same
// modules as the package's, not a second build of them.
// Why split, and why CommonJS, measured on Node 24 with Node's compile cache (module.enableCompileCache, in the
// shim; medians of 41 runs, docs/node.md): to the first request of `provider versions list`, one 5.7 MiB file
// took 26–53 % longer than the split build, and the split build left as ES modules 41–49 % longer than as CommonJS
// (Node's ES module loader does per-file work, resolution and the module graph's promises, that CommonJS skips).
// Nothing here changes a dependency's code, and no module of src/ is replaced: what the tests run is what users
// run. Plugins only choose which of a package's own builds is used (`commonJsBuilds`). The files the program reads
// besides its code (package.json, assets/) are found at run time by src/packageFiles.ts, up from the file the
// code is in: `import.meta.filename` is defined as `__filename`, the file of the bundle (every bundle sits below
// the package's root), and a single executable carries them as its assets (scripts/build-binary.mjs).
// All three target Node 22.14 (package.json's engines) and are not minified (a reviewer can read the committed
// action bundle's diff; a stack trace names real functions). The package also gets licenses.json, the
// licences of every package the build holds. The output depends only on the sources, the lock file's packages and
// this script, so a fresh build equals the committed action bundle byte for byte (test/install/action.test.ts
// fails when they differ: run `npm run build:action` and commit).
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

/** The entries of the one build, by the name of their file in it. */
const ENTRIES = {
  provider: 'src/cli/main.ts',
  action: 'src/cli/actionEntry.ts',
  cli: 'src/cli/bundleEntry.ts',
};

/**
 * What each target makes of the one build: the entry it runs and its default output (the package's folder, or
 * one file).
 * @type {Record<'package' | 'action' | 'cli', { entry: keyof typeof ENTRIES, out: string }>}
 */
const TARGETS = {
  package: { entry: 'provider', out: 'dist/bundle' },
  action: { entry: 'action', out: 'action/main.cjs' },
  cli: { entry: 'cli', out: 'build/provider.cjs' },
};

/**
 * What both esbuild passes share.
 * @type {esbuild.BuildOptions}
 */
const COMMON = {
  bundle: true,
  platform: 'node',
  target: 'node22.14',
  minify: false,
  sourcemap: false,
  legalComments: 'eof',
  charset: 'utf8',
  logLevel: 'warning',
  // import.meta is empty in CommonJS: a module that still uses it (to find a file beside itself) would break
  // at run time, so the build fails instead. The one use the product makes, src/packageFiles.ts's, is the
  // bundle's own file (see the top of this file).
  logOverride: { 'empty-import-meta': 'error' },
  define: { 'import.meta.filename': '__filename' },
  // cosmiconfig requires the TypeScript compiler only for .ts configuration files, which provider does not
  // search for (src/config/load.ts): leaving it out saves 10 MB.
  external: ['typescript'],
};

/**
 * A JSON file's document, typed as what it is until the caller says more.
 * @param {string} file
 * @returns {unknown}
 */
function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/**
 * The one build: every entry, ES modules split at each dynamic `import()`, into `dir/bundle/`.
 * @param {string} dir
 * @returns {Promise<esbuild.Metafile>}
 */
async function buildOnce(dir) {
  const result = await esbuild.build({
    ...COMMON,
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outdir: path.join(dir, 'bundle'),
    format: 'esm',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
    plugins: [namedDynamicImports(), commonJsBuilds()],
  });
  if (result.metafile === undefined) throw new Error('esbuild gave no metafile');
  return result.metafile;
}

/**
 * Bundles one target from the one build; resolves to the output path (the entry's file for the package).
 * @param {keyof typeof TARGETS} target
 * @param {string} [out] output file, or the package's folder (default: the target's)
 */
export async function bundle(target, out) {
  const spec = TARGETS[target];
  const output = path.resolve(ROOT, out ?? spec.out);
  const pkg = /** @type {{ name: string, version: string }} */ (readJson(path.join(ROOT, 'package.json')));
  const banner = `// ${pkg.name} ${pkg.version}, bundled by scripts/bundle.mjs from src/ (${ENTRIES[spec.entry]}); do not edit.`;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-bundle-'));
  try {
    const metafile = await buildOnce(work);
    const built = path.join(work, 'bundle');
    if (target === 'package') {
      fs.rmSync(output, { recursive: true, force: true });
      // The other entries are the single files' starts; their code is in the chunks both share.
      for (const entry of Object.keys(ENTRIES)) {
        if (entry !== spec.entry) fs.rmSync(path.join(built, `${entry}.js`));
      }
      fs.cpSync(built, output, { recursive: true });
      refuseImportMeta(output);
      await toCommonJs(output, banner);
      writeLicenses(metafile, path.join(output, 'licenses.json'));
      return path.join(output, `${spec.entry}.js`);
    }
    // One CommonJS file of the entry and every chunk it reaches (esbuild inlines each import() of a chunk):
    // the same modules as the package's, joined. Built with `work` as the working folder, so that the module
    // names in the file (bundle/chunks/…) do not depend on where the build ran.
    await esbuild.build({
      ...COMMON,
      absWorkingDir: work,
      entryPoints: [path.join(built, `${spec.entry}.js`)],
      outfile: output,
      format: 'cjs',
      banner: { js: banner },
      // web-tree-sitter's eval, which esbuild left alone in node_modules, is no longer under node_modules here.
      logOverride: { ...COMMON.logOverride, 'direct-eval': 'silent' },
    });
    return output;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The licences of the packages the build holds, into `file` (shipped with the package): for each package, in
 * order, its name, version, folder in node_modules, licence and the text of its licence file. The package has
 * no dependencies of its own (docs/node.md), so this is where their notices travel; test/install/package.test.ts
 * also reads it to check every one of them runs on the Node.js the package declares.
 * @param {esbuild.Metafile} metafile
 * @param {string} file
 */
function writeLicenses(metafile, file) {
  /** @type {Set<string>} */
  const folders = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(?:[^:]+:)?(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) folders.add(/** @type {string} */ (match[1]));
  }
  // The HCL grammar's WebAssembly is shipped too, its package's copy in assets/.
  folders.add('node_modules/@tree-sitter-grammars/tree-sitter-hcl');
  const packages = [...folders].sort().map((folder) => {
    const manifest = /** @type {{ name: string, version: string, license?: string }} */ (
      readJson(path.join(ROOT, folder, 'package.json'))
    );
    const licenseFile = fs
      .readdirSync(path.join(ROOT, folder))
      .find((name) => /^(licen[cs]e|copying)(\.(md|txt|markdown))?$/i.test(name));
    return {
      name: manifest.name,
      version: manifest.version,
      folder,
      license: manifest.license ?? null,
      text: licenseFile === undefined ? null : fs.readFileSync(path.join(ROOT, folder, licenseFile), 'utf8'),
    };
  });
  fs.writeFileSync(file, `${JSON.stringify({ packages }, null, 1)}\n`);
}

/**
 * In the split build, `import.meta.url` would be the URL of the chunk a module landed in, not of the module's own
 * file (and CommonJS has no import.meta at all). The CommonJS builds fail on any use (esbuild's
 * empty-import-meta); this fails the split build on any use, before `toCommonJs`.
 * @param {string} dir
 */
function refuseImportMeta(dir) {
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(file, 'utf8').includes('import.meta')) {
      throw new Error(
        `${path.relative(ROOT, file)} uses import.meta: find the file with src/packageFiles.ts`,
      );
    }
  }
}

/** A dynamic import of a file of the split build (esbuild writes them so: a relative path in double quotes). */
const CHUNK_IMPORT = /\bimport\("(\.\.?\/[^"\\]+\.js)"\)/g;

/**
 * What each file of the split build loads its chunks with once it is CommonJS: Node's CommonJS loader, in a
 * promise as an `import()` would give them (the chunks' exports are live getters, as esbuild makes them).
 */
const CHUNK_LOADER = 'const __providerChunk = (id) => Promise.resolve().then(() => require(id));';

/**
 * Turns every file of the split build in `dir` into a CommonJS module, with esbuild's own ES module → CommonJS
 * transform: `import`/`export` become `require` and `module.exports` (exports as getters, so bindings stay live),
 * and every `import()` of a chunk of the build a `require` in a promise, so that a chunk is compiled by Node's
 * CommonJS loader, which is quicker to start than the ES module one. Any other `import()` stays
 * one (cosmiconfig's of an ES module configuration file, `provider.config.mjs`: a `require` of it would hand
 * back the module object, or fail on a top-level await). Strict mode, which an ES module has throughout, is kept
 * ("use strict"). `dir/package.json` marks the folder's .js files as CommonJS (the package's own is
 * `"type": "module"`).
 * @param {string} dir
 * @param {string} banner
 */
async function toCommonJs(dir, banner) {
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const name = path.relative(ROOT, file);
    const source = fs.readFileSync(file, 'utf8').replace(CHUNK_IMPORT, (_, /** @type {string} */ id) => {
      if (!fs.existsSync(path.resolve(path.dirname(file), id)))
        throw new Error(`${name}: import("${id}") names no file of the build`);
      return `__providerChunk("${id}")`;
    });
    const { code } = await esbuild.transform(source, {
      format: 'cjs',
      platform: 'node',
      target: 'node22.14',
      loader: 'js',
      legalComments: 'eof',
      charset: 'utf8',
      sourcefile: name,
      logLevel: 'warning',
      logOverride: { 'empty-import-meta': 'error' },
    });
    if (/\bimport\("\.\.?\//.test(code))
      throw new Error(`${name}: a relative import() is left after the transform`);
    fs.writeFileSync(file, `${banner}\n"use strict";\n${CHUNK_LOADER}\n${code}`);
  }
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "commonjs" }\n');
}

/**
 * web-tree-sitter and openpgp as their CommonJS builds: their ES modules find files through `import.meta.url`,
 * which is the chunk's own in a bundle; their CommonJS builds do not need to.
 * @returns {esbuild.Plugin}
 */
function commonJsBuilds() {
  return {
    name: 'commonjs-builds',
    setup(build) {
      build.onResolve({ filter: /^(web-tree-sitter|openpgp)$/ }, (args) => ({
        path: require.resolve(args.path),
      }));
    },
  };
}

/**
 * In the split build, `import('yauzl')` of a CommonJS package becomes a chunk whose only export is `default`
 * (esbuild's ES module output), where Node, and the CommonJS builds, give its named exports too
 * (`(await import('yauzl')).open`). This puts a module between the two that exports each name the package's
 * `module.exports` has (read by loading it here, at build time) and `default`.
 * @returns {esbuild.Plugin}
 */
function namedDynamicImports() {
  const NAME = /^[A-Za-z_$][\w$]*$/;
  return {
    name: 'named-dynamic-imports',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData === 'named-dynamic-imports') return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: 'named-dynamic-imports',
        });
        if (resolved.errors.length > 0 || resolved.external || !isCommonJs(resolved.path)) return undefined;
        // Relative to the repository (with /): the path names the module in the output, which must not hold the
        // folder the build ran in.
        const relative = path.relative(ROOT, resolved.path).split(path.sep).join('/');
        return { path: relative, namespace: 'named-dynamic-imports' };
      });
      build.onLoad({ filter: /.*/, namespace: 'named-dynamic-imports' }, (args) => {
        const file = path.join(ROOT, args.path);
        /** @type {unknown} */
        const loaded = require(file);
        const exported = typeof loaded === 'object' || typeof loaded === 'function' ? (loaded ?? {}) : {};
        const names = Object.keys(exported).filter((name) => NAME.test(name) && name !== 'default');
        return {
          loader: 'js',
          resolveDir: path.dirname(file),
          contents: [
            `// ${args.path}, its named exports (scripts/bundle.mjs, namedDynamicImports())`,
            `import * as all from ${JSON.stringify(file)};`,
            `export const { ${names.join(', ')} } = all;`,
            'export default all.default;',
            '',
          ].join('\n'),
        };
      });
    },
  };
}

/**
 * Whether a package file is CommonJS as Node reads it: `.cjs`, or `.js` under a package.json without
 * `"type": "module"`.
 * @param {string} file
 */
function isCommonJs(file) {
  if (file.endsWith('.cjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      return /** @type {{ type?: string }} */ (readJson(manifest)).type !== 'module';
    }
  }
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [target, flag, value] = process.argv.slice(2);
  if (target !== 'package' && target !== 'action' && target !== 'cli') {
    console.error('usage: node scripts/bundle.mjs package|action|cli [--out file]');
    process.exit(2);
  }
  const written = await bundle(target, flag === '--out' ? value : undefined);
  const size = fs.statSync(written).size;
  console.log(`${path.relative(process.cwd(), written)}: ${(size / 2 ** 20).toFixed(1)} MiB`);
}
