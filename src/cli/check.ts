/** `provider check <version>`: what terraform init checks, against what the registry serves. */
import type { Command } from 'commander';
import type { CheckFlags } from '../commands/check.js';
import type { ProgramHooks } from './main.js';
import { withExamples } from './help.js';

/** Registers the command. */
export function registerCheck(program: Command, hooks: ProgramHooks): void {
  const check = program
    .command('check')
    .description(
      'check a published version as terraform init will: signature, SHA256SUMS against every platform, optionally the zips',
    )
    .argument('<version>', 'the version, e.g. 1.2.3')
    .option('--download', 'also download every stored zip and hash it (streamed)')
    .action(
      hooks.action<CheckFlags>(async (context, flags, args) => {
        const [{ runCheck }, { openSession }] = await Promise.all([
          import('../commands/check.js'),
          import('../commands/session.js'),
        ]);
        return runCheck(context, openSession(context, flags), { ...flags, version: args[0] });
      }),
    );
  withExamples(check, [
    {
      emulator: true,
      what: 'the signature and SHA256SUMS, as terraform init checks them',
      args: ['check', '1.2.3', '--name', 'example'],
    },
    {
      emulator: true,
      what: 'also download and hash every zip',
      args: ['check', '1.2.3', '--name', 'example', '--download'],
    },
  ]);
}
