#!/usr/bin/env node
// One-file builds of the program, with esbuild, for the places that have no node_modules:
//
//   node scripts/bundle.mjs action [--out file]   # the GitHub Action: action/main.cjs (committed; action.yml runs it)
//   node scripts/bundle.mjs cli [--out file]      # the whole CLI in one file: build/provider.cjs (the single
//                                                 # executable's script, scripts/build-binary.mjs)
//
// Both are CommonJS (Node's single executable applications run a CommonJS script on Node 20), target Node 20,
// not minified (a reviewer can read the committed action bundle's diff), and carry everything they need: the
// package version (no package.json beside them) and the two WebAssembly files of the HCL parser (src/lockfile/
// wasm.ts is replaced by a module holding their bytes). The output depends only on the sources, the lock file's
// packages and this script, so a fresh build equals the committed bundle byte for byte
// (test/install/action.test.ts fails when they differ: run `npm run build:action` and commit).
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

/** The two targets: entry (relative to the root, or inline source) and default output. */
const TARGETS = {
  action: { entry: 'src/cli/actionEntry.ts', out: 'action/main.cjs' },
  cli: { entry: 'src/cli/bundleEntry.ts', out: 'build/provider.cjs' },
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
 * Bundles one target; resolves to the output path.
 * @param {keyof typeof TARGETS} target
 * @param {string} [out] output file (default: the target's)
 */
export async function bundle(target, out) {
  const spec = TARGETS[target];
  const outfile = path.resolve(ROOT, out ?? spec.out);
  const pkg = /** @type {{ name: string, version: string }} */ (readJson(path.join(ROOT, 'package.json')));
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [spec.entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20.19',
    format: 'cjs',
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
    banner: {
      js: `// ${pkg.name} ${pkg.version}, bundled by scripts/bundle.mjs from src/ (${spec.entry}); do not edit.`,
    },
    plugins: [embedded(pkg.version)],
  });
  return outfile;
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

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [target, flag, value] = process.argv.slice(2);
  if (target !== 'action' && target !== 'cli') {
    console.error('usage: node scripts/bundle.mjs action|cli [--out file]');
    process.exit(2);
  }
  const written = await bundle(target, flag === '--out' ? value : undefined);
  const size = fs.statSync(written).size;
  console.log(`${path.relative(process.cwd(), written)}: ${(size / 2 ** 20).toFixed(1)} MiB`);
}
