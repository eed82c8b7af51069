#!/usr/bin/env node
// Part of `npm run build`: writes dist/help.txt, the program's top-level help exactly as `provider --help`
// prints it when stdout is not a terminal (commander then wraps at 80 columns). bin/provider.js prints this
// file for `provider --help` on its own instead of loading the program: commander alone takes longer to load
// than the whole start-up budget (README, "Performance"). test/cli/program.test.ts checks the two agree.
import { writeFileSync } from 'node:fs';

const { buildProgram } = await import('../dist/cli/main.js');
let text = '';
const sink = { write: (chunk) => ((text += chunk), true), isTTY: false };
const io = {
  argv: [],
  env: {},
  cwd: process.cwd(),
  homeDir: '/nonexistent',
  stdout: sink,
  stderr: sink,
  stdinIsTTY: false,
  signal: new AbortController().signal,
  confirm: async () => false,
};
const program = buildProgram(io, { exitCode: 0 });
// As for a stdout that is not a terminal, whatever this build's stdout is.
program.configureOutput({ getOutHelpWidth: () => undefined, getOutHasColors: () => false });
program.outputHelp();
writeFileSync(new URL('../dist/help.txt', import.meta.url), text);
