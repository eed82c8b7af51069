/**
 * Finding and reading the configuration file with cosmiconfig. The search goes from the working folder up
 * to the project root; `--config <file>` names the file instead.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as nodeSea from 'node:sea';
import type { CosmiconfigResult, PublicExplorer } from 'cosmiconfig';
import { UsageError } from '../errors.js';
import type { FileConfig } from './schema.js';

/** The file names looked for in each folder, in order. */
export const SEARCH_PLACES = [
  'package.json',
  '.providerrc',
  '.providerrc.json',
  '.providerrc.yaml',
  '.providerrc.yml',
  'provider.config.js',
  'provider.config.mjs',
] as const;

/** A folder holding one of these is a project root: the search stops there. */
export const PROJECT_ROOT_MARKERS = ['.git', 'go.mod', 'package.json'] as const;

// Extensions cosmiconfig can load without optional dependencies (`.ts` would need the TypeScript compiler).
const LOADABLE_EXTENSIONS = ['', '.json', '.yaml', '.yml', '.js', '.mjs', '.cjs'];

/**
 * The loaders of JavaScript files inside the single executable: none. Whether Node's single executable could
 * load one depends on the Node version it was built with (Node 20's could not; Node 24's reaches the file through
 * cosmiconfig's `require` fallback), so it refuses them on every version: one behaviour, the one documented.
 */
const JS_REFUSED = Object.fromEntries(
  ['.js', '.mjs', '.cjs'].map((extension) => [
    extension,
    (filepath: string): never => {
      throw Object.assign(new Error('a JavaScript configuration file in the single executable'), {
        filepath,
      });
    },
  ]),
);

/** The configuration file's validated contents, where it was found, and warnings about it. */
export interface LoadedConfig {
  config: FileConfig;
  filepath?: string;
  warnings: string[];
}

/** Loads `--config <file>` when given, else searches from `cwd` up to the project root; no file is `{}`. */
export async function loadConfigFile(input: { cwd: string; explicitPath?: string }): Promise<LoadedConfig> {
  // searchStrategy 'none' checks one folder per call and we walk the parents ourselves: cosmiconfig 9.0.0's
  // 'project' does not stop at package.json (cosmiconfig PR #361), and 'global' stops only at the home
  // folder and then reads the OS config folder, so results would depend on the machine.
  // cosmiconfig (about 200 KB with its YAML parser) is loaded only for a folder holding one of the names: most
  // runs have no configuration file, and start-up time matters.
  let explorer: Promise<PublicExplorer> | undefined;
  const explore = () =>
    (explorer ??= import('cosmiconfig').then(({ cosmiconfig }) =>
      cosmiconfig('provider', {
        searchPlaces: [...SEARCH_PLACES],
        searchStrategy: 'none',
        cache: false,
        ...(singleExecutable() ? { loaders: JS_REFUSED } : {}),
      }),
    ));
  const result =
    input.explicitPath === undefined
      ? await searchUp(async (dir) => (await explore()).search(dir), path.resolve(input.cwd))
      : await loadExplicit(
          async (file) => (await explore()).load(file),
          path.resolve(input.cwd, input.explicitPath),
          input.explicitPath,
        );
  if (result === null) return { config: {}, warnings: [] };
  // zod is loaded only now: most runs have no configuration file, and start-up time matters.
  const { validateConfig } = await import('./schema.js');
  const { config, warnings } = validateConfig(
    result.isEmpty === true ? undefined : result.config,
    result.filepath,
  );
  return { config, filepath: result.filepath, warnings };
}

type Search = (dir: string) => Promise<CosmiconfigResult>;
type Load = (file: string) => Promise<CosmiconfigResult>;

/**
 * Tries `start` and each parent; stops after the project root (Terraform providers are Go repos, hence go.mod).
 * cosmiconfig is asked about a folder only when one of the names is there (it decides whether it is a
 * configuration: a package.json without a "provider" key is not).
 */
async function searchUp(search: Search, start: string): Promise<CosmiconfigResult> {
  for (let dir = start; ;) {
    if (SEARCH_PLACES.some((name) => fs.existsSync(path.join(dir, name)))) {
      const found = await wrapErrors(() => search(dir), undefined);
      if (found !== null) return found;
    }
    if (PROJECT_ROOT_MARKERS.some((marker) => fs.existsSync(path.join(dir, marker)))) return null;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

async function loadExplicit(load: Load, file: string, given: string): Promise<CosmiconfigResult> {
  const extension = path.extname(file);
  if (!LOADABLE_EXTENSIONS.includes(extension)) {
    throw new UsageError(`--config ${given}: files ending in "${extension}" are not supported`, {
      hint: 'Use a JSON, YAML (.yaml/.yml or no extension), .js or .mjs file, or package.json.',
    });
  }
  const result = await wrapErrors(() => load(file), file);
  // A package.json without a "provider" key is an empty configuration, not an error.
  return result ?? { config: undefined, filepath: file, isEmpty: true };
}

/** Turns cosmiconfig's and the loaders' errors into UsageErrors naming the file. */
async function wrapErrors<T>(action: () => Promise<T>, explicitFile: string | undefined): Promise<T> {
  try {
    return await action();
  } catch (error) {
    const err = error as NodeJS.ErrnoException & { filepath?: string };
    const file = err.filepath ?? explicitFile ?? 'the configuration file';
    if (explicitFile !== undefined && (err.code === 'ENOENT' || err.code === 'ENOTDIR')) {
      throw new UsageError(`Configuration file not found: ${explicitFile}`, {
        hint: 'Check the path given to --config; a relative path is taken from the current folder.',
      });
    }
    if (err.code === 'EISDIR') {
      throw new UsageError(`Configuration file ${file} is a folder`, { hint: 'Give --config a file.' });
    }
    if (/\.[cm]?js$/.test(file) && singleExecutable()) {
      throw new UsageError(
        `Cannot read configuration file ${file}: the single executable reads JSON and YAML only`,
        {
          hint:
            'Put the same settings in .providerrc.json or .providerrc.yaml, or run provider from its npm package ' +
            '(npx provider-registry-cli …), which also reads JavaScript configuration files.',
        },
      );
    }
    throw new UsageError(`Cannot read configuration file ${file}: ${loaderReason(err)}`, {
      // No `cause`: a parser's error may quote the file, and the file is the user's, not ours to print.
      hint: `Fix the syntax of ${file}.`,
    });
  }
}

/**
 * True inside Node's single executable (build/provider-<platform>-<arch>), which cannot import a JavaScript file
 * from disk (Node's documentation: "Single executable applications", module loading).
 */
function singleExecutable(): boolean {
  // Not `import('node:sea')`: a single executable's script cannot import() at all, not even a built-in module.
  const sea = process.getBuiltinModule('node:sea') as typeof nodeSea | undefined;
  return sea?.isSea() === true;
}

/** The loader's reason without quoted content: JSON and YAML parsers echo the file back, tokens and all. */
function loaderReason(error: Error): string {
  const [first = '', second = ''] = String(error.message).split('\n');
  if (first.startsWith('JSON Error in ')) {
    const position = /at position (\d+)/.exec(second)?.[1];
    return `it is not valid JSON${position === undefined ? '' : ` (at character ${position})`}`;
  }
  // js-yaml's first line is the reason with (line:column); the code frame follows on later lines.
  if (first.startsWith('YAML Error in ')) return `it is not valid YAML: ${second.trim()}`;
  return first.trim() === '' ? 'unknown error' : first.trim();
}
