/** `provider versions list` and `versions show <version>`: flags → options → the cores in src/manage. */
import type { Command } from 'commander';
import type { ProgramHooks } from './main.js';
import { worldOf } from './world.js';

/** Registers the command group. */
export function registerVersions(program: Command, hooks: ProgramHooks): void {
  const versions = program
    .command('versions')
    .description('read the provider versions on the registry, with the state of their files');
  versions
    .command('list')
    .description('every version (all pages): protocols, key id, files uploaded, platforms, created')
    .action(
      hooks.action(async (output, flags) => {
        const { runVersionsList } = await import('../manage/versions.js');
        return runVersionsList({ output, flags, world: worldOf(hooks.io) });
      }),
    );
  versions
    .command('show')
    .description(
      'one version: its attributes and whether SHA256SUMS, its signature and each binary are uploaded',
    )
    .argument('<version>', 'the version, e.g. 1.2.3')
    .action(
      hooks.action(async (output, flags, args) => {
        const { runVersionsShow } = await import('../manage/versions.js');
        return runVersionsShow({ output, flags, world: worldOf(hooks.io), version: args[0] });
      }),
    );
}
