/**
 * A run of one top-level command declares that command alone (src/cli/main.ts): every help text of it and of
 * its subcommands, and every option each knows, must be what the whole program has; the other commands are
 * absent; and a first word that names no command (an alias, an option, `help`, a typo) declares them all.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { commandWords } from '../../src/cli/help.js';
import { runCli, quietProgram } from '../helpers/cli.js';

/** The command reached by `words` from `program`. */
function find(program: Command, words: string[]): Command {
  let command = program;
  for (const word of words) {
    const next = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (next === undefined) throw new Error(`no command ${words.join(' ')}`);
    command = next;
  }
  return command;
}

const whole = quietProgram();
const names = whole.commands.map((c) => c.name());

describe('a run of one top-level command declares it alone', () => {
  it('every top-level command is declared on its own', () => {
    expect(names).toHaveLength(12);
  });

  it.each(names)(
    '%s: each help text and option as the whole program has them, and no other command',
    (name) => {
      const lean = quietProgram(process.cwd(), name);
      expect(lean.commands.map((c) => c.name())).toEqual([name]);
      const paths = commandWords(find(whole, [name])).map((words) => [name, ...words]);
      expect(paths.length).toBeGreaterThan(0);
      for (const words of paths) {
        const [a, b] = [find(whole, words), find(lean, words)];
        expect(b.helpInformation(), words.join(' ')).toBe(a.helpInformation());
        expect(b.options.map((o) => o.flags)).toEqual(a.options.map((o) => o.flags));
      }
    },
  );

  it('a typo of a command is still answered with the command it meant', async () => {
    const result = await runCli(['versionz', 'list']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/unknown command 'versionz'/);
    expect(result.stderr).toMatch(/versions/);
  });
});
