/** `provider lock upgrade [path…]`: flags → the run's session → `runLockUpgrade`. */
import type { LockUpgradeFlags } from '../commands/lockUpgrade/run.js';
import { collect, type CommandRun, type ProgramCommand } from './command.js';
import { onEmulator } from './help.js';

/** Registers `upgrade` under `provider lock`. */
export function registerLockUpgrade(lock: ProgramCommand): void {
  lock
    .command('upgrade')
    .description(
      'move lock files to the newest version the private registry serves that their constraints admit, every hash verified',
    )
    .argument('[paths...]', 'lock files, or folders holding .terraform.lock.hcl (default: .)')
    .option(
      '--recursive',
      'every .terraform.lock.hcl under the folders (not .terraform/, .git/, node_modules/)',
    )
    .option(
      '--only <pattern>',
      'only these providers: host/namespace/type, * a wildcard (repeatable)',
      collect,
    )
    .option('--to <constraints>', 'also meet these constraints (Terraform syntax: ~> 1.4, < 2.0)')
    .option('--min-age <age>', 'only versions created in the registry at least this long ago (7d, 36h)')
    .option('--version <version>', 'move to exactly this version')
    .option(
      '--platform <os_arch>',
      'record h1: for these platforms only (repeatable or comma-separated)',
      collect,
    )
    .option('--dry-run', "show each file's diff; write nothing")
    .option(
      '--cache-dir <dir>',
      "where the zips' hashes are kept across runs (default: the user's cache folder)",
    )
    .option('--no-cache', 'neither read nor keep hashes across runs')
    .option(
      '--policy <file>',
      'move only to versions the policy admits (cooldowns, pinned keys, approvals: docs/supply-chain.md)',
    )
    .runsWithSession(
      () => import('../commands/lockUpgrade/run.js').then((m) => m.runLockUpgrade),
      ({ flags, args }: CommandRun<LockUpgradeFlags>) => ({
        ...flags,
        paths: args,
      }),
    )
    .examples(
      onEmulator({
        'the fixture lock file, to the newest 1.x the registry served a week ago':
          "lock upgrade fixtures/lock --to '~> 1.2' --min-age 7d --dry-run",
        'exactly 1.2.3 (the block already is: nothing to download), as one JSON document':
          'lock upgrade fixtures/lock --version 1.2.3 --json',
      }),
    );
}
