/** `provider gpg-keys list` and `gpg-keys add <armored-public-key-file>`. */
import { flagsOnly, type ProgramCommand } from './command.js';
import { onEmulator } from './help.js';

/** Registers the command group. */
export function registerGpgKeys(program: ProgramCommand): void {
  const keys = program
    .command('gpg-keys')
    .description("the registry's signing keys for the namespace (--namespace, default: the organization)")
    .examples(
      onEmulator({
        'the keys registered for the organization': 'gpg-keys list',
        'register a public key': 'gpg-keys add fixtures/keys/other.pub.asc',
      }),
    );
  keys
    .command('list')
    .description('the keys registered for the namespace: key id, created, id')
    .runsWithSession(() => import('../commands/gpgKeys.js').then((m) => m.runGpgKeysList), flagsOnly)
    .examples(
      onEmulator({
        'key id, created, id': 'gpg-keys list',
        'the documents, for scripts': 'gpg-keys list --json',
      }),
    );
  keys
    .command('add')
    .description('register an RSA or DSA public key (gpg --armor --export <key id>) and print its key id')
    .argument('<armored-public-key-file>', 'the public key file; a secret key is refused and never sent')
    .runsWithSession(
      () => import('../commands/gpgKeys.js').then((m) => m.runGpgKeysAdd),
      ({ args }) => ({ file: args[0] }),
    )
    .examples(
      onEmulator({
        'register a key: prints its key id': 'gpg-keys add fixtures/keys/other.pub.asc',
        'a key already registered is a success, nothing is sent': 'gpg-keys add fixtures/keys/other.pub.asc',
        'an ECC key: the registry refuses it (exit 4, with its reason)':
          'gpg-keys add fixtures/keys/ecc.pub.asc',
      }),
    );
}
