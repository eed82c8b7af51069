#!/usr/bin/env node
// Tiny shim: everything lives in the compiled program. Two exceptions, answered here without loading it,
// because start-up is all they cost (README, "Performance"): `provider --version` (or `-V`) on its own prints
// the version line, and `provider --help` (or `-h`) on its own, when stdout is not a terminal or is 80 columns
// wide, prints dist/help.txt, the program's own help rendered by the build (scripts/render-help.mjs).
import { readFileSync } from 'node:fs';

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
  import('../dist/cli/main.js').then((m) => m.main());
}
