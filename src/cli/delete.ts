/** `provider delete <version> [--platform <os>_<arch> ...]`. */
import type { Command } from 'commander';
import type { DeleteFlags } from '../commands/delete.js';
import type { ProgramHooks } from './main.js';
import { withExamples } from './help.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** Registers the command. */
export function registerDelete(program: Command, hooks: ProgramHooks): void {
  const remove = program
    .command('delete')
    .description('delete a version (its platforms and files go with it) or single platforms of it')
    .argument('<version>', 'the version, e.g. 1.2.3')
    .option(
      '--platform <os_arch>',
      'delete only this platform (repeatable; os/arch also accepted)',
      collect,
      [],
    )
    .option('-y, --yes', 'delete without asking (required when there is no terminal)')
    .option('--dry-run', 'show what would be deleted and stop')
    .option('--ignore-missing', 'an absent version or platform counts as deleted (cleanup scripts)')
    .action(
      hooks.action<DeleteFlags>(async (context, flags, args) => {
        const [{ runDelete }, { openSession }] = await Promise.all([
          import('../commands/delete.js'),
          import('../commands/session.js'),
        ]);
        // The context has a `confirm` only on a terminal: otherwise --yes is required.
        return runDelete(context, openSession(context, flags), { ...flags, version: args[0] });
      }),
    );
  withExamples(remove, [
    {
      emulator: true,
      what: 'show what would go, and stop',
      args: ['delete', '1.2.3', '--name', 'example', '--dry-run'],
    },
    {
      emulator: true,
      what: 'one platform only, without asking',
      args: ['delete', '1.2.3', '--name', 'example', '--platform', 'linux_amd64', '--yes'],
    },
    {
      emulator: true,
      what: 'the whole version, in a cleanup script',
      args: ['delete', '1.2.3', '--name', 'example', '--yes', '--ignore-missing'],
    },
  ]);
}
