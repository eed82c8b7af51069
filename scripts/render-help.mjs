#!/usr/bin/env node
// Part of `npm run build`: writes dist/help.json, the help of every command exactly as `provider <command…>
// --help` prints it when stdout is not a terminal (commander then wraps at 80 columns, without colours): one
// text per command path ("" for the program itself, "verify", "versions list"…). bin/provider.cjs prints these
// texts for `--help` / `-h` after a command path, and for `help [command]`, instead of loading the program:
// commander alone takes about as long to load as the whole start-up budget (docs/performance.md).
// test/cli/program.test.ts checks every text against what the program itself prints.
import { writeFileSync } from 'node:fs';

// The built program, typed by its source (a URL, not a literal path, so the type check does not read dist/).
/** @type {(url: string) => Promise<unknown>} */
const load = (url) => import(url);
const { buildProgram } = /** @type {typeof import('../src/cli/main.js')} */ (
  await load(new URL('../dist/cli/main.js', import.meta.url).href)
);
const { CommanderError } = /** @type {typeof import('commander')} */ (await load('commander'));
const { commandWords } = /** @type {typeof import('../src/cli/help.js')} */ (
  await load(new URL('../dist/cli/help.js', import.meta.url).href)
);

/** @typedef {import('commander').Command} Command */

/**
 * A fresh program whose output lands in `sink`, every command of it answering as for a stdout that is not a
 * terminal, whatever this build's stdout is.
 * @param {{ write: (chunk: string) => boolean, isTTY: false }} sink
 */
function programInto(sink) {
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
  /** @param {Command} command */
  const plain = (command) => {
    command.configureOutput({
      // @ts-expect-error -- the typings say number, but undefined ("not a terminal") is what commander's own
      // default returns then (commander/lib/command.js), and what this asks for
      getOutHelpWidth: () => undefined,
      getOutHasColors: () => false,
    });
    command.commands.forEach(plain);
  };
  plain(program);
  return program;
}

/**
 * What `provider <words…> --help` prints, parsed by the program itself.
 * @param {string[]} words
 */
async function helpOf(words) {
  let text = '';
  const program = programInto({ write: (chunk) => ((text += chunk), true), isTTY: false });
  try {
    await program.parseAsync([...words, '--help'], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError) || error.code !== 'commander.helpDisplayed') throw error;
  }
  return text;
}

/** @type {Record<string, string>} */
const commands = {};
for (const words of commandWords(programInto({ write: () => true, isTTY: false }))) {
  commands[words.join(' ')] = await helpOf(words);
}
writeFileSync(new URL('../dist/help.json', import.meta.url), `${JSON.stringify({ commands })}\n`);
