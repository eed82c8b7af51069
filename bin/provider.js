#!/usr/bin/env node
// The shim: the program is dist/bundle/provider.js, built by `npm run build` (scripts/bundle.mjs package): one
// file holding commander and the command declarations, which loads each command's core and the libraries it
// needs from dist/bundle/chunks/ when that command runs (README, "Performance").
//
// Two exceptions, answered here without loading even that, because start-up is all they cost: `provider
// --version` (or `-V`) on its own prints the version line, and `provider --help` (or `-h`) on its own, when
// stdout is not a terminal or is 80 columns wide, prints dist/help.txt, the program's own help rendered by the
// build (scripts/render-help.mjs). Loading the bundle's first file costs some 15 ms more than these reads.
import { readFileSync } from 'node:fs';
import module from 'node:module';

const args = process.argv.slice(2);
const alone = (...flags) => args.length === 1 && flags.includes(args[0]);
let help;
if (alone('--help', '-h') && (!process.stdout.isTTY || process.stdout.columns === 80)) {
  try {
    help = readFileSync(new URL('../dist/help.txt', import.meta.url), 'utf8');
  } catch {
    // not built with it: the program prints its help
  }
}
if (alone('--version', '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else if (help !== undefined) {
  process.stdout.write(help);
} else {
  // From Node 22.1, V8's compile cache (in the temporary folder) spares later runs the parsing of the chunks
  // they load; it is turned on before the program is imported, or its files would be compiled already. Node 20
  // has no such cache: the program runs without it.
  /** @type {{ enableCompileCache?: () => unknown }} */ (module).enableCompileCache?.();
  const { main } = await import('../dist/bundle/provider.js');
  void main();
}
