/** `provider delete <version> [--platform <os>_<arch> ...]`. */
import type { DeleteFlags } from '../commands/delete.js';
import { collect, withVersion, type ProgramCommand } from './command.js';
import { onEmulator } from './help.js';

/** Registers the command. */
export function registerDelete(program: ProgramCommand): void {
  program
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
    // The context has a `confirm` only on a terminal: otherwise --yes is required.
    .runsWithSession(() => import('../commands/delete.js').then((m) => m.runDelete), withVersion<DeleteFlags>)
    .examples(
      onEmulator({
        'show what would go, and stop': 'delete 1.2.3 --name example --dry-run',
        'one platform only, without asking': 'delete 1.2.3 --name example --platform linux_amd64 --yes',
        'the whole version, in a cleanup script': 'delete 1.2.3 --name example --yes --ignore-missing',
      }),
    );
}
