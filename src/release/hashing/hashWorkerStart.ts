/**
 * How a hashing worker starts: from the worker's module file beside this one, of this module's own kind
 * (`hashWorker.ts` under vitest, which Node runs by stripping its types: on by default from Node 22.18, asked
 * for here for the older 22 releases the package supports; `hashWorker.js` in tsc's dist/). The bundles
 * replace this module (scripts/bundle.mjs): the package's starts the bundled worker file written next to its
 * entry, the one-file builds (the Action, the single executable) the bundled worker's source, held as a string
 * and evaluated, as a single executable cannot load a file from beside itself.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** A new hashing worker, running src/release/hashing/hashWorker.ts. */
export function startHashWorker(): Worker {
  const here = import.meta.url;
  const kind = extname(fileURLToPath(here));
  const file = new URL(`./hashWorker${kind}`, here);
  return kind === '.ts'
    ? new Worker(file, { execArgv: [...process.execArgv, '--experimental-strip-types'] })
    : new Worker(file);
}
