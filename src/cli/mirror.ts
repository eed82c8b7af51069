/** `provider mirror <namespace>/<type>…`: flags → the cores (src/commands/mirror.ts). */
import type { MirrorOptions } from '../commands/mirror.js';
import type { CommandRun, ProgramCommand } from './command.js';
import { local } from './help.js';

/** Registers the command. */
export function registerMirror(program: ProgramCommand): void {
  program
    .command('mirror')
    .description(
      'copy providers from a public registry, verified (signature, sums, zips), into your organization or a folder',
    )
    .argument('[providers...]', 'providers on the origin, as <namespace>/<type> (e.g. hashicorp/random)')
    .option(
      '--manifest <file>',
      'a YAML file of providers, each with its versions (constraints, latest: N) and platforms, instead of arguments',
    )
    .option('--from <host-or-url>', 'the origin registry (default registry.terraform.io)')
    .option('--versions <constraints>', 'Terraform constraints, e.g. "~> 3.6" (default: the latest version)')
    .option('--platforms <os_arch,…>', 'only these platforms, e.g. linux_amd64,darwin_arm64 (default: all)')
    .option(
      '--to-dir <dir>',
      'write one verified folder per version here (no registry, no token); without it, publish each version into --organization',
    )
    .option(
      '--policy <file>',
      'the policy file: versions it does not admit are held (exit 7) or refused (exit 3), nothing of them written',
    )
    .option('--dry-run', 'name what would be mirrored; write nothing')
    .runsWithSession(
      () => import('../commands/mirror.js').then((m) => m.runMirror),
      async ({ context, flags, args }: CommandRun<MirrorOptions>): Promise<MirrorOptions> => {
        const { tuningFromEnv } = await import('../publish/tuning.js');
        return { ...flags, providers: args, tuning: tuningFromEnv(context.env) };
      },
      // Publishing into the private registry retries and times out as publish does.
      ({ tuning }) => ({ retry: tuning.retry, timeout: { response: tuning.requestTimeoutMs } }),
    )
    .examples(
      local({
        'the plan for the latest random, two platforms, without writing anything':
          'mirror hashicorp/random --platforms linux_amd64,darwin_arm64 --to-dir ./mirror --dry-run',
        'versions 3.6.x for an air-gapped registry: verified folders, then provider publish <folder>':
          "mirror hashicorp/random --versions '~> 3.6.0' --to-dir ./mirror",
        'straight into your organization, each provider of a manifest with its own versions and platforms':
          'mirror --manifest mirror.yaml --organization my-org',
      }),
    );
}
