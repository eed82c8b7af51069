/** `provider lock check [dir]`: flags → the run's session → `runLockCheck`. */
import type { LockCheckFlags } from '../commands/lockCheck/run.js';
import { collect, type CommandRun, type ProgramCommand } from './command.js';
import { local, onEmulator } from './help.js';
import { packageVersion } from '../packageFiles.js';

/** Registers `check` under `provider lock`. */
export function registerLockCheck(lock: ProgramCommand): void {
  lock
    .command('check')
    .description(
      "hold a configuration's .terraform.lock.hcl against what the private registry serves (exit 3 on any finding; GETs only)",
    )
    .argument('[dir]', "the configuration's root, holding .terraform.lock.hcl (default: .)")
    .option(
      '--platform <os_arch>',
      'a platform runs need an h1: for (repeatable; default linux_amd64, where HCP Terraform runs)',
      collect,
    )
    .option(
      '--allow <pattern>',
      'admit providers from elsewhere: host/namespace/type, * a wildcard (repeatable)',
      collect,
    )
    .option(
      '--policy <file>',
      'YAML policy: allow, platforms, and per provider versions, min-age, keys, approvals (docs/supply-chain.md)',
    )
    .option('--format <format>', 'print a report instead of text: sarif or junit')
    .option('--output <file>', 'write the --format report to this file (the text goes to stdout)')
    .runsWithSession(
      () => import('../commands/lockCheck/run.js').then((m) => m.runLockCheck),
      ({ flags, args }: CommandRun<LockCheckFlags>) => ({
        ...flags,
        dir: args[0] ?? '.',
        toolVersion: packageVersion(),
      }),
    )
    .examples(
      local({
        'a folder without a lock file: exit 3, a finding naming it':
          'lock check fixtures/release --organization example-org',
      }),
      onEmulator({
        'the fixture lock file against what the registry serves': 'lock check fixtures/lock',
        'the same as SARIF for code scanning and run task outcomes':
          'lock check fixtures/lock --format sarif',
      }),
    );
}
