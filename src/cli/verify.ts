/** `provider verify [dir]`: flags → the run's session → `runVerify`. */
import type { VerifyFlags } from '../commands/verify.js';
import type { CommandRun, ProgramCommand } from './command.js';
import { local, onEmulator } from './help.js';

/** Registers the command. */
export function registerVerify(program: ProgramCommand): void {
  program
    .command('verify')
    .description('verify a release directory as Terraform and the registry will, without writing anything')
    .argument('[dir]', 'the release folder goreleaser wrote', './dist')
    .option(
      '--key <file>',
      'armored public key to check the signature with (env PROVIDER_GPG_KEY: the key itself)',
    )
    .option(
      '--offline',
      'never look up the keys registered on the registry (needs --key or PROVIDER_GPG_KEY)',
    )
    .option(
      '--version <version>',
      'the version to verify when the folder holds several (a leading v is dropped)',
    )
    .option(
      '--protocols <list>',
      'plugin protocol versions, e.g. 6.0 or 5.0,6.0 (default: from the manifest)',
    )
    .option('--dearmor-signature', 'accept an ASCII-armored .sig by converting it to binary in memory')
    .runsWithSession(
      () => import('../commands/verify.js').then((m) => m.runVerify),
      ({ flags, args }: CommandRun<VerifyFlags>) => ({ ...flags, dir: args[0] ?? './dist' }),
    )
    .examples(
      local({
        'the fixture release, with the key that signed it, without the network':
          'verify fixtures/release --key fixtures/keys/signer.pub.asc --offline',
        'with a key that did not sign it: exit 3, naming the file and what to do':
          'verify fixtures/release --key fixtures/keys/other.pub.asc --offline',
      }),
      onEmulator({
        'with the keys registered for the organization, as one JSON document':
          'verify fixtures/release --json',
      }),
    );
}
