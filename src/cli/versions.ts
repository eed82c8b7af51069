/** `provider versions list` and `versions show <version>`: flags → the run's session → the cores. */
import type { Command } from 'commander';
import type { ProgramHooks } from './main.js';
import { withExamples } from './help.js';

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
      hooks.action(async (context, flags) => {
        const [{ runVersionsList }, { openSession }] = await Promise.all([
          import('../commands/versions.js'),
          import('../commands/session.js'),
        ]);
        return runVersionsList(context, openSession(context, flags));
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
      hooks.action(async (context, flags, args) => {
        const [{ runVersionsShow }, { openSession }] = await Promise.all([
          import('../commands/versions.js'),
          import('../commands/session.js'),
        ]);
        return runVersionsShow(context, openSession(context, flags), { version: args[0] });
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
