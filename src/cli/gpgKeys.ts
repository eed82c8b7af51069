/** `provider gpg-keys list` and `gpg-keys add <armored-public-key-file>`. */
import type { Command } from 'commander';
import type { ProgramHooks } from './main.js';
import { worldOf } from './world.js';

/** Registers the command group. */
export function registerGpgKeys(program: Command, hooks: ProgramHooks): void {
  const keys = program
    .command('gpg-keys')
    .description("the registry's signing keys for the namespace (--namespace, default: the organization)");
  keys
    .command('list')
    .description('the keys registered for the namespace: key id, created, id')
    .action(
      hooks.action(async (output, flags) => {
        const { runGpgKeysList } = await import('../manage/gpgKeys.js');
        return runGpgKeysList({ output, flags, world: worldOf(hooks.io) });
      }),
    );
  keys
    .command('add')
    .description('register an RSA or DSA public key (gpg --armor --export <key id>) and print its key id')
    .argument('<armored-public-key-file>', 'the public key file; a secret key is refused and never sent')
    .action(
      hooks.action(async (output, flags, args) => {
        const { runGpgKeysAdd } = await import('../manage/gpgKeys.js');
        return runGpgKeysAdd({ output, flags, world: worldOf(hooks.io), file: args[0] });
      }),
    );
}
