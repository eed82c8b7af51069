/** `provider gpg-keys list` and `gpg-keys add <armored-public-key-file>`. */
import type { Command } from 'commander';
import type { ProgramHooks } from './main.js';
import { withExamples } from './help.js';

/** Registers the command group. */
export function registerGpgKeys(program: Command, hooks: ProgramHooks): void {
  const keys = program
    .command('gpg-keys')
    .description("the registry's signing keys for the namespace (--namespace, default: the organization)");
  withExamples(keys, [
    { emulator: true, what: 'the keys registered for the organization', args: ['gpg-keys', 'list'] },
    {
      emulator: true,
      what: 'register a public key',
      args: ['gpg-keys', 'add', 'fixtures/keys/other.pub.asc'],
    },
  ]);
  const list = keys
    .command('list')
    .description('the keys registered for the namespace: key id, created, id')
    .action(
      hooks.action(async (context, flags) => {
        const [{ runGpgKeysList }, { openSession }] = await Promise.all([
          import('../commands/gpgKeys.js'),
          import('../commands/session.js'),
        ]);
        return runGpgKeysList(context, openSession(context, flags));
      }),
    );
  withExamples(list, [
    { emulator: true, what: 'key id, created, id', args: ['gpg-keys', 'list'] },
    { emulator: true, what: 'the documents, for scripts', args: ['gpg-keys', 'list', '--json'] },
  ]);
  const add = keys
    .command('add')
    .description('register an RSA or DSA public key (gpg --armor --export <key id>) and print its key id')
    .argument('<armored-public-key-file>', 'the public key file; a secret key is refused and never sent')
    .action(
      hooks.action(async (context, flags, args) => {
        const [{ runGpgKeysAdd }, { openSession }] = await Promise.all([
          import('../commands/gpgKeys.js'),
          import('../commands/session.js'),
        ]);
        return runGpgKeysAdd(context, openSession(context, flags), { file: args[0] });
      }),
    );
  withExamples(add, [
    {
      emulator: true,
      what: 'register a key: prints its key id',
      args: ['gpg-keys', 'add', 'fixtures/keys/other.pub.asc'],
    },
    {
      emulator: true,
      what: 'a key already registered is a success, nothing is sent',
      args: ['gpg-keys', 'add', 'fixtures/keys/other.pub.asc'],
    },
    {
      emulator: true,
      what: 'an ECC key: the registry refuses it (exit 4, with its reason)',
      exit: 4,
      args: ['gpg-keys', 'add', 'fixtures/keys/ecc.pub.asc'],
    },
  ]);
}
