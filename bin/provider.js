#!/usr/bin/env node
// The shim: the program is dist/bundle/provider.js, built by `npm run build` (scripts/bundle.mjs package): one
// file holding commander and the command declarations, which loads each command's core and the libraries it
// needs from dist/bundle/chunks/ when that command runs (README, "Performance").
import module from 'node:module';

// From Node 22.1, V8's compile cache (in the temporary folder) spares later runs the parsing of the chunks they
// load; it is turned on before the program is imported, or its files would be compiled already. Node 20 has no
// such cache: the program runs without it.
/** @type {{ enableCompileCache?: () => unknown }} */ (module).enableCompileCache?.();
const { main } = await import('../dist/bundle/provider.js');
void main();
