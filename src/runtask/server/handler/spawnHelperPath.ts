/**
 * How the integrator starts its handler runner (spawnHelper.ts) with `process.execPath`: the arguments that make
 * Node run it.
 *
 * Here, in the sources and in the compiled dist/, the runner is the module file beside this one: `spawnHelper.js`
 * after tsc, or `spawnHelper.ts` when the sources run as they are (the tests), which Node runs by stripping its
 * types. The bundles (scripts/bundle.mjs: the package's dist/bundle/, the Action and the single executable's
 * script) replace this module with one that hands Node the runner's source instead, compiled from spawnHelper.ts
 * when the bundle is built, as `-e <source>`: a single executable can only run code it carries (its entry,
 * src/cli/bundleEntry.ts, evaluates `-e <source>` as node would), and one way for every bundle keeps the package
 * free of a second file to find beside its chunks.
 */
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Node's arguments that run the handler runner. */
export function helperArgs(): string[] {
  const here = fileURLToPath(import.meta.url);
  const extension = extname(here);
  const helper = join(dirname(here), `spawnHelper${extension}`);
  // Warnings would reach the integrator's stderr, which the runner shares.
  return extension === '.ts'
    ? ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', helper]
    : [helper];
}
