/** `provider lock [release-dir]` (and `lock check`, ./lockCheck.ts): flags → the run's session (settings only: no token) → `runLock`. */
import type { LockFlags } from '../commands/lock.js';
import { collect, type CommandRun, type ProgramCommand } from './command.js';
import { local } from './help.js';
import { registerLockCheck } from './lockCheck.js';
import { registerLockUpgrade } from './lockUpgrade.js';

/** Registers the command, and `lock check` under it. */
export function registerLock(program: ProgramCommand): void {
  const lock = program
    .command('lock')
    .description(
      "write the provider's block in a .terraform.lock.hcl with every platform's hashes, from a local release or from what the registry serves",
    )
    .argument(
      '[release-dir]',
      'the release folder goreleaser wrote (default: ./dist; none with --registry; one named check: ./check)',
    )
    .option(
      '--lock-file <path>',
      'the lock file to write or update (created when missing)',
      '.terraform.lock.hcl',
    )
    .option(
      '--platform <os_arch>',
      'record h1: for this platform only (repeatable; default: every platform of the release)',
      collect,
    )
    .option('--constraints <expr>', 'set the block\'s constraints, e.g. "~> 1.2" (default: kept as they are)')
    .option('--dry-run', 'print the block (a diff when the file has one) and write nothing')
    .option(
      '--key <file>',
      'armored public key to check the signature with (env PROVIDER_GPG_KEY: the key itself)',
    )
    .option(
      '--version <version>',
      'the version to lock when the folder holds several (a leading v is dropped)',
    )
    .option(
      '--protocols <list>',
      'plugin protocol versions, e.g. 6.0 or 5.0,6.0 (default: from the manifest)',
    )
    .option('--dearmor-signature', 'accept an ASCII-armored .sig by converting it to binary in memory')
    .option(
      '--registry',
      'lock what the registry serves instead of a local release (needs --version and a token; downloads every zip)',
    )
    .runsWithSession(
      () => import('../commands/lock.js').then((m) => m.runLock),
      ({ flags, args }: CommandRun<LockFlags>) => ({
        ...flags,
        dir: args[0] ?? './dist',
        dirGiven: args[0] !== undefined,
      }),
    )
    .examples(
      local({
        'the block for every platform of the fixture release, shown and not written':
          'lock fixtures/release --key fixtures/keys/signer.pub.asc --organization example-org --dry-run',
        'h1: for the Linux CI and the Macs only (zh: for every file, as terraform does), as JSON':
          'lock fixtures/release --key fixtures/keys/signer.pub.asc --organization example-org --platform linux_amd64 --platform darwin_arm64 --dry-run --json',
        'with a key that did not sign it: exit 3, and the lock file is not touched':
          'lock fixtures/release --key fixtures/keys/other.pub.asc --organization example-org --dry-run',
      }),
    );
  // `lock check …`: the words after `check` are its own, so its --platform is not taken as lock's.
  lock.enablePositionalOptions();
  registerLockCheck(lock);
  registerLockUpgrade(lock);
}
