/**
 * The one-file CLI's entry (scripts/bundle.mjs cli → build/provider.cjs, the single executable's script).
 *
 * A single executable is its own Node.js: `process.execPath` is the executable, and it runs this script whatever
 * its arguments. `runtask serve` starts its handler runner as `process.execPath -e <source>` (the runner's
 * function source, src/runtask/server/handler/spawnHelper.ts), so inside a single executable `-e <source>` is
 * evaluated here as node would, at the top level. Outside one, `node build/provider.cjs -e …` stays an unknown
 * option, as with the package.
 */
import type * as nodeSea from 'node:sea';
import { main } from './main.js';

const sea = process.getBuiltinModule('node:sea') as typeof nodeSea | undefined;
const [flag, source] = process.argv.slice(2);
if (sea?.isSea() === true && flag === '-e' && source !== undefined) {
  // Indirect eval: global scope, like `node -e`.
  (0, eval)(source);
} else {
  void main();
}
