/** `provider approve <namespace>/<type> <version>`: a version verified, its approval written to the policy file. */
import type { ApproveFlags } from '../commands/approve.js';
import type { CommandRun, ProgramCommand } from './command.js';
import { onEmulator } from './help.js';

/** Registers the command. */
export function registerApprove(program: ProgramCommand): void {
  program
    .command('approve')
    .description(
      'verify a version the private registry serves and record its approval in the policy file, bound to its signed bytes',
    )
    .argument('<provider>', 'the provider as <namespace>/<type>, e.g. my-org/example')
    .argument('<version>', 'the version, e.g. 1.2.3')
    .option('--policy <file>', 'the policy file the approval is written to (created when missing)')
    .option('--reason <text>', 'why it is approved (kept in the record, for reviewers)')
    .option(
      '--from <host-or-url>',
      'verify the version at its origin (as provider mirror does), to approve it before it is mirrored',
    )
    .option(
      '--platforms <os_arch,…>',
      'with --from: the platforms to download and check (default: every one the origin lists)',
    )
    .option('--by <name>', "who approves (default: the CI's user, else the system's)")
    .option('--dry-run', "verify, then show the policy file's diff; write nothing")
    .runsWithSession(
      () => import('../commands/approve.js').then((m) => m.runApprove),
      ({ flags, args }: CommandRun<ApproveFlags>) => ({
        ...flags,
        provider: args[0] ?? '',
        version: args[1] ?? '',
      }),
    )
    .examples(
      onEmulator({
        'verify 1.2.3 and show the record it would add to a new policy file':
          'approve example-org/example 1.2.3 --policy approved.yaml --reason reviewed --dry-run',
        'the same, as one JSON document':
          'approve example-org/example 1.2.3 --policy approved.yaml --reason reviewed --dry-run --json',
      }),
    );
}
