#!/usr/bin/env node
// Bundled builds of the program, with esbuild:
//
//   node scripts/bundle.mjs package [--out dir]   # what bin/provider.cjs runs: dist/bundle/ (npm run build)
//   node scripts/bundle.mjs action [--out file]   # the GitHub Action: action/main.cjs (committed; action.yml runs it)
//   node scripts/bundle.mjs cli [--out file]      # the whole CLI in one file: build/provider.cjs (the single
//                                                 # executable's script, scripts/build-binary.mjs)
//
// `package` is split at every dynamic `import()`: bin/provider.cjs requires the entry (commander and the command
// declarations), and each command's core, and the heavy libraries only some commands need (got, zod, openpgp,
// ora, the prompts…), are chunks loaded when that command runs. Start-up is then a few files instead of the
// hundreds of modules node_modules would take to resolve and compile one by one (README, "Performance").
// esbuild splits ES modules only; each file is then turned into CommonJS (`toCommonJs`), for two reasons measured
// on Node 20: a CommonJS file skips the ES module loader's per-file work (resolution, package scope lookups, the
// module graph's promises), and it can be compiled from V8's code cache (bin/compile-cache.cjs), which Node 20
// offers for scripts only. To the first request of `provider versions list`: 105 ms as ES modules, 79 ms as
// CommonJS from the cache (node -e 0: 49 ms, a busy 2-core machine).
// `action` and `cli` are one CommonJS file each (Node's single executable applications run a CommonJS script on
// Node 20; a CommonJS bundle inlines its dynamic imports), for the places that have no node_modules.
// All three target Node 20, are not minified (a reviewer can read the committed action bundle's diff; a stack
// trace names real functions), and carry everything they need: the package version (no package.json read at
// start-up), the SARIF schema and the two WebAssembly files of the HCL parser (src/lockfile/wasm.ts is replaced
// by a module holding their bytes). The output depends only on the sources, the lock file's packages and this
// script, so a fresh build equals the committed action bundle byte for byte (test/install/action.test.ts fails
// when they differ: run `npm run build:action` and commit).
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

/**
 * The targets: entry (relative to the root), default output (a file, or the folder of a split build) and
 * whether the output is ES modules split at dynamic imports.
 * @type {Record<'package' | 'action' | 'cli', { entry: string, out: string, split: boolean }>}
 */
const TARGETS = {
  package: { entry: 'src/cli/main.ts', out: 'dist/bundle', split: true },
  action: { entry: 'src/cli/actionEntry.ts', out: 'action/main.cjs', split: false },
  cli: { entry: 'src/cli/bundleEntry.ts', out: 'build/provider.cjs', split: false },
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
 * Bundles one target; resolves to the output path (the entry's file for the split build).
 * @param {keyof typeof TARGETS} target
 * @param {string} [out] output file, or folder for the split build (default: the target's)
 */
export async function bundle(target, out) {
  const spec = TARGETS[target];
  const output = path.resolve(ROOT, out ?? spec.out);
  const pkg = /** @type {{ name: string, version: string }} */ (readJson(path.join(ROOT, 'package.json')));
  const banner = `// ${pkg.name} ${pkg.version}, bundled by scripts/bundle.mjs from src/ (${spec.entry}); do not edit.`;
  if (spec.split) fs.rmSync(output, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    ...(spec.split
      ? {
          entryPoints: { provider: spec.entry },
          outdir: output,
          format: 'esm',
          splitting: true,
          chunkNames: 'chunks/[name]-[hash]',
        }
      : { entryPoints: [spec.entry], outfile: output, format: 'cjs' }),
    bundle: true,
    platform: 'node',
    target: 'node20.19',
    minify: false,
    sourcemap: false,
    legalComments: 'eof',
    charset: 'utf8',
    logLevel: 'warning',
    // import.meta is empty in CommonJS: a module that still uses it (to find a file beside itself) would break
    // at run time, so the build fails instead; such modules are replaced or resolved to their CommonJS builds.
    logOverride: { 'empty-import-meta': 'error' },
    // cosmiconfig requires the TypeScript compiler only for .ts configuration files, which provider does not
    // search for (src/config/load.ts): leaving it out saves 10 MB.
    external: ['typescript'],
    // The split build's files become CommonJS after (`toCommonJs`), which gives the CommonJS packages bundled into
    // them the `require`, `__filename` and `__dirname` they use, and takes the banner off: it puts it back.
    ...(spec.split ? {} : { banner: { js: banner } }),
    plugins: [
      ...(spec.split ? [namedDynamicImports()] : []),
      embedded(pkg.version),
      deferred(),
      zodEnglishOnly(),
      lazyListFormat(),
      lazyAesTables(),
    ],
  });
  if (spec.split) {
    refuseImportMeta(output);
    await toCommonJs(output, banner);
  }
  return spec.split ? path.join(output, 'provider.js') : output;
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
      throw new Error(`${path.relative(ROOT, file)} uses import.meta: replace the module (see embedded())`);
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
 * CommonJS loader, whose compilation bin/compile-cache.cjs serves from V8's code cache. Any other `import()` stays
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
      target: 'node20.19',
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
 * What a bundle carries instead of reading it beside itself: src/cli/version.ts becomes the version it was built
 * with; src/runtask/formats/sarifSchema.ts the SARIF schema of assets/; src/lockfile/wasm.ts a module holding the HCL parser's WebAssembly (tree-sitter's runtime and the grammar
 * in assets/); and web-tree-sitter and openpgp their CommonJS builds.
 * @param {string} version
 * @returns {esbuild.Plugin}
 */
function embedded(version) {
  const wasmModule = path.join(ROOT, 'src', 'lockfile', 'wasm.ts');
  const versionModule = path.join(ROOT, 'src', 'cli', 'version.ts');
  return {
    name: 'embedded',
    setup(build) {
      // Their ES modules find files through import.meta.url; their CommonJS builds do not need to.
      build.onResolve({ filter: /^(web-tree-sitter|openpgp)$/ }, (args) => ({
        path: require.resolve(args.path),
      }));
      build.onLoad({ filter: /[\\/]src[\\/]cli[\\/]version\.ts$/ }, (args) => {
        if (path.resolve(args.path) !== versionModule) return undefined;
        return {
          loader: 'js',
          contents: `// src/cli/version.ts, bundled\nexport function packageVersion() {\n  return ${JSON.stringify(version)};\n}\n`,
        };
      });
      const schemaModule = path.join(ROOT, 'src', 'runtask', 'formats', 'sarifSchema.ts');
      build.onLoad({ filter: /[\\/]src[\\/]runtask[\\/]formats[\\/]sarifSchema\.ts$/ }, (args) => {
        if (path.resolve(args.path) !== schemaModule) return undefined;
        const schema = fs.readFileSync(path.join(ROOT, 'assets', 'sarif-schema-2.1.0.json'), 'utf8');
        return {
          loader: 'js',
          contents: `// src/runtask/formats/sarifSchema.ts, bundled: assets/sarif-schema-2.1.0.json\nexport function sarifSchema() {\n  return ${JSON.stringify(JSON.parse(schema))};\n}\n`,
        };
      });
      build.onLoad({ filter: /[\\/]src[\\/]lockfile[\\/]wasm\.ts$/ }, (args) => {
        if (path.resolve(args.path) !== wasmModule) return undefined;
        const runtime = fs.readFileSync(require.resolve('web-tree-sitter/web-tree-sitter.wasm'));
        const grammar = fs.readFileSync(path.join(ROOT, 'assets', 'tree-sitter-hcl.wasm'));
        const bytes = (/** @type {Buffer} */ data) =>
          `new Uint8Array(Buffer.from(${JSON.stringify(data.toString('base64'))}, 'base64'))`;
        return {
          loader: 'js',
          contents:
            '// src/lockfile/wasm.ts, bundled: the WebAssembly of web-tree-sitter and assets/tree-sitter-hcl.wasm\n' +
            `export async function hclWasm() {\n  return { runtime: ${bytes(runtime)}, grammar: ${bytes(grammar)} };\n}\n`,
        };
      });
    },
  };
}

/**
 * Modules a library imports at its top but uses only on a path provider never takes, replaced for that library
 * by an object that loads the real module on first use (each property a getter). Loading them costs every
 * start-up for nothing:
 *
 * - got imports http2-wrapper for its `http2` option (which provider does not set) and reads only its
 *   `globalAgent` and `auto`; http2-wrapper's js-stream-socket.js creates a TLS socket as it loads, which builds
 *   a TLS context with Node's CA store: 10–20 ms before the first request, even an http:// one.
 * - commander requires node:child_process for executable subcommands (`program.command(name, description)`
 *   with no action), which provider does not declare; only `spawn` is read.
 * @returns {esbuild.Plugin}
 */
function deferred() {
  /** @type {{ module: string, importer: RegExp, names: string[] }[]} */
  const rules = [
    { module: 'http2-wrapper', importer: /[\\/]node_modules[\\/]got[\\/]/, names: ['globalAgent', 'auto'] },
    {
      module: 'node:child_process',
      importer: /[\\/]node_modules[\\/]commander[\\/]/,
      names: ['spawn'],
    },
  ];
  return {
    name: 'deferred',
    setup(build) {
      /** @type {Map<string, string>} where each deferred module is resolved from: its importer's folder */
      const from = new Map();
      for (const rule of rules) {
        const filter = new RegExp(`^${rule.module.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')}$`);
        build.onResolve({ filter }, (args) => {
          if (args.namespace !== 'file' || !rule.importer.test(args.importer)) return undefined;
          from.set(rule.module, args.resolveDir);
          return { path: rule.module, namespace: 'deferred' };
        });
      }
      build.onLoad({ filter: /.*/, namespace: 'deferred' }, (args) => {
        const rule = rules.find((r) => r.module === args.path);
        if (rule === undefined) return undefined;
        const getters = rule.names.map((name) => `  get ${name}() {\n    return load().${name};\n  },`);
        return {
          loader: 'js',
          resolveDir: from.get(rule.module) ?? ROOT,
          contents: [
            `// ${rule.module}, loaded on first use (scripts/bundle.mjs, deferred())`,
            'let loaded;',
            `const load = () => (loaded ??= require(${JSON.stringify(rule.module)}));`,
            `module.exports = {\n${getters.join('\n')}\n};`,
            '',
          ].join('\n'),
        };
      });
    },
  };
}

/**
 * zod's `locales`, its error messages in some forty languages (290 KB, close to half of zod), reduced to English.
 * zod reaches them only through the `z.locales` namespace, which provider never reads; English, the default, is
 * imported by zod's schemas module on its own and stays. Without this, every command that reads the registry
 * would parse them at start-up.
 * @returns {esbuild.Plugin}
 */
function zodEnglishOnly() {
  return {
    name: 'zod-english-only',
    setup(build) {
      // The path relative to the repository (and with /): it names the module in the output, which must be the
      // same whatever folder the build runs in (the committed Action bundle is compared byte for byte).
      build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
        /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
          ? {
              path: path
                .relative(ROOT, path.join(args.resolveDir, '..', 'locales', 'index.js'))
                .split(path.sep)
                .join('/'),
              namespace: 'zod-locales',
            }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
        loader: 'js',
        resolveDir: path.dirname(path.join(ROOT, args.path)),
        contents:
          "// zod's locales, English only (scripts/bundle.mjs, zodEnglishOnly())\nexport { default as en } from './en.js';\n",
      }));
    },
  };
}

/**
 * @sindresorhus/is (got's argument checks) makes two `Intl.ListFormat`s when it loads, for the wording of its
 * "expected values which are `a` or `b`" messages: the first `Intl.ListFormat` of a process pages in ICU's data
 * for it, some 7 MB of resident memory (file-backed pages, counted in RSS) in every command that loads got,
 * for messages provider never shows (its got calls pass valid options). Here each is made on first use instead,
 * by an object with the same methods; the messages, when one is built, are the same. The build fails when the
 * module no longer has them (the transform is then to be removed, or adapted to the new code).
 * @returns {esbuild.Plugin}
 */
export function lazyListFormat() {
  const DECLARATION = /^(const|let|var) (\w+) = new Intl\.ListFormat\(([^;]*)\);$/gm;
  return {
    name: 'lazy-list-format',
    setup(build) {
      build.onLoad(
        { filter: /[\\/]node_modules[\\/]@sindresorhus[\\/]is[\\/]distribution[\\/]index\.js$/ },
        (args) => {
          const source = fs.readFileSync(args.path, 'utf8');
          let count = 0;
          const lazy = source.replace(DECLARATION, (_, kind, name, options) => {
            count++;
            return `${kind} ${name} = lazyListFormat(() => new Intl.ListFormat(${options}));`;
          });
          if (count === 0) {
            throw new Error(
              `${path.relative(ROOT, args.path)} makes no Intl.ListFormat when it loads any more: remove or adapt lazyListFormat() in scripts/bundle.mjs`,
            );
          }
          return {
            loader: 'js',
            contents: [
              `// Each Intl.ListFormat below is made on first use (scripts/bundle.mjs, lazyListFormat())`,
              'function lazyListFormat(make) {',
              '  let made;',
              '  const formatter = () => (made ??= make());',
              '  return {',
              '    format: (list) => formatter().format(list),',
              '    formatToParts: (list) => formatter().formatToParts(list),',
              '    resolvedOptions: () => formatter().resolvedOptions(),',
              '  };',
              '}',
              lazy,
            ].join('\n'),
          };
        },
      );
    },
  };
}

/**
 * openpgp bundles noble-ciphers' AES, whose module builds its lookup tables when it loads: two calls of a table
 * maker, each filling two 65,536-entry Uint32Arrays and a 65,536-entry Uint16Array (some 1.3 MB, 5 to 10 ms
 * of CPU at every load of openpgp). provider only checks signatures, which never use them (Node's own crypto does the
 * rest). Here the table maker returns an object whose tables are built on first use instead; what they hold, when
 * used, is the same. The build fails when openpgp no longer has that maker (the transform is then to be removed,
 * or adapted to the new code).
 * @returns {esbuild.Plugin}
 */
export function lazyAesTables() {
  const MAKER = /function (\w+)\((\w+),(\w+)\)\{if\(256!==\2\.length\)throw Error\("Wrong sbox length"\)/;
  const TABLES = ['sbox', 'sbox2', 'T0', 'T1', 'T2', 'T3', 'T01', 'T23'];
  return {
    name: 'lazy-aes-tables',
    setup(build) {
      build.onLoad(
        { filter: /[\\/]node_modules[\\/]openpgp[\\/]dist[\\/]node[\\/]openpgp\.min\.cjs$/ },
        (args) => {
          const source = fs.readFileSync(args.path, 'utf8');
          const found = MAKER.exec(source);
          // The object it returns, with the minified names of its locals: the tables the getters below stand for.
          const returned = 'return{sbox:e,sbox2:c,T0:r,T1:n,T2:i,T3:s,T01:a,T23:o}';
          if (!found || !source.slice(found.index, found.index + 1000).includes(returned)) {
            throw new Error(
              `${path.relative(ROOT, args.path)} no longer builds noble-ciphers' AES tables as lazyAesTables() expects: remove or adapt it in scripts/bundle.mjs`,
            );
          }
          const name = found[1];
          const getters = TABLES.map((table) => `get ${table}(){return made().${table}}`).join(',');
          const lazy =
            `/* lookup tables built on first use (scripts/bundle.mjs, lazyAesTables()) */` +
            `function ${name}(e,t){let tables;const made=()=>tables??=${name}$now(e,t);return{${getters}}}` +
            `function ${name}$now(`;
          return {
            loader: 'js',
            contents:
              source.slice(0, found.index) + lazy + source.slice(found.index + `function ${name}(`.length),
          };
        },
      );
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
