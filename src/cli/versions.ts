/** `provider versions list` and `versions show <version>`: flags → options → the cores in src/manage. */
import type { Command } from 'commander';
import type { ProgramHooks } from './main.js';
import { withExamples } from './help.js';
import { worldOf } from './world.js';

/** Registers the command group. */
export function registerVersions(program: Command, hooks: ProgramHooks): void {
  const versions = program
    .command('versions')
    .description('read the provider versions on the registry, with the state of their files');
  withExamples(versions, [
    { emulator: true, what: 'every version, newest first', args: ['versions', 'list', '--name', 'example'] },
    {
      emulator: true,
      what: 'one version and its files',
      args: ['versions', 'show', '1.2.3', '--name', 'example'],
    },
  ]);
  const list = versions
    .command('list')
    .description('every version (all pages): protocols, key id, files uploaded, platforms, created')
    .action(
      hooks.action(async (output, flags) => {
        const { runVersionsList } = await import('../commands/versions.js');
        return runVersionsList({ output, flags, world: worldOf(hooks.io) });
      }),
    );
  withExamples(list, [
    {
      emulator: true,
      what: 'a table on a terminal, tab-separated rows in a pipe',
      args: ['versions', 'list', '--name', 'example'],
    },
    {
      emulator: true,
      what: 'the documents, for scripts',
      args: ['versions', 'list', '--name', 'example', '--json'],
    },
  ]);
  const show = versions
    .command('show')
    .description(
      'one version: its attributes and whether SHA256SUMS, its signature and each binary are uploaded',
    )
    .argument('<version>', 'the version, e.g. 1.2.3')
    .action(
      hooks.action(async (output, flags, args) => {
        const { runVersionsShow } = await import('../commands/versions.js');
        return runVersionsShow({ output, flags, world: worldOf(hooks.io), version: args[0] });
      }),
    );
  withExamples(show, [
    {
      emulator: true,
      what: 'which files are uploaded, and what to do if some are not',
      args: ['versions', 'show', '1.2.3', '--name', 'example'],
    },
    {
      emulator: true,
      what: 'the same as JSON (never a link)',
      args: ['versions', 'show', '1.2.3', '--name', 'example', '--json'],
    },
  ]);
}
