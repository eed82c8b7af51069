#!/usr/bin/env node
// Part of `npm run build`: writes dist/help.txt, the program's top-level help exactly as `provider --help`
// prints it when stdout is not a terminal (commander then wraps at 80 columns). bin/provider.js prints this
// file for `provider --help` on its own instead of loading the program: commander alone takes longer to load
// than the whole start-up budget (README, "Performance"). test/cli/program.test.ts checks the two agree.
import { writeFileSync } from 'node:fs';

// The built program, typed by its source (a URL, not a literal path, so the type check does not read dist/).
/** @type {(url: string) => Promise<unknown>} */
const load = (url) => import(url);
const { buildProgram } = /** @type {typeof import('../src/cli/main.js')} */ (
  await load(new URL('../dist/cli/main.js', import.meta.url).href)
);
let text = '';
const sink = { write: (/** @type {string} */ chunk) => ((text += chunk), true), isTTY: false };
const io = {
  argv: [],
  env: {},
  cwd: process.cwd(),
  homeDir: '/nonexistent',
  stdout: sink,
  stderr: sink,
  stdinIsTTY: false,
  signal: new AbortController().signal,
  confirm: () => Promise.resolve(false),
};
const program = buildProgram(io, { exitCode: 0 });
// As for a stdout that is not a terminal, whatever this build's stdout is.
program.configureOutput({
  // @ts-expect-error -- the typings say number, but undefined ("not a terminal") is what commander's own default
  // returns then (commander/lib/command.js), and what this asks for
  getOutHelpWidth: () => undefined,
  getOutHasColors: () => false,
});
program.outputHelp();
writeFileSync(new URL('../dist/help.txt', import.meta.url), text);
