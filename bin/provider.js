#!/usr/bin/env node
// Tiny shim: everything lives in the compiled program. The one exception is `provider --version` (or `-V`)
// on its own, answered here with exactly the line the program prints, without loading the program: start-up
// is all that command costs (bench/, "start-up").
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else {
  import('../dist/cli/main.js').then((m) => m.main());
}
