/** `provider check <version>`: what terraform init checks, against what the registry serves. */
import type { CheckFlags } from '../commands/check.js';
import { withVersion, type ProgramCommand } from './command.js';
import { onEmulator } from './help.js';

/** Registers the command. */
export function registerCheck(program: ProgramCommand): void {
  program
    .command('check')
    .description(
      'check a published version as terraform init will: signature, SHA256SUMS against every platform, optionally the zips',
    )
    .argument('<version>', 'the version, e.g. 1.2.3')
    .option('--download', 'also download every stored zip and hash it (streamed)')
    .runsWithSession(() => import('../commands/check.js').then((m) => m.runCheck), withVersion<CheckFlags>)
    .examples(
      onEmulator({
        'the signature and SHA256SUMS, as terraform init checks them': 'check 1.2.3 --name example',
        'also download and hash every zip': 'check 1.2.3 --name example --download',
      }),
    );
}
