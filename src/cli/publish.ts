/** `provider publish [dir]`: flags → tuning and the run's session → `runPublish`. */
import type { PublishFlags } from '../commands/publish.js';
import { collect, type CommandRun, type ProgramCommand } from './command.js';
import { onEmulator } from './help.js';

/** Registers the command. */
export function registerPublish(program: ProgramCommand): void {
  program
    .command('publish')
    .description('verify a release directory, then create and upload everything the registry is missing')
    .argument('[dir]', 'the release folder goreleaser wrote', './dist')
    .option('--key <file>', 'armored public key of the signer (env PROVIDER_GPG_KEY: the key itself)')
    .option(
      '--version <version>',
      'the version to publish when the folder holds several (a leading v is dropped)',
    )
    .option(
      '--protocols <list>',
      'plugin protocol versions, e.g. 6.0 or 5.0,6.0 (default: from the manifest)',
    )
    .option('--dearmor-signature', 'accept an ASCII-armored .sig by converting it to binary before upload')
    .option(
      '--concurrency <n>',
      'uploads in flight at once, 1 to 32, or auto: more while the uploads go faster for it (env PROVIDER_CONCURRENCY; default auto)',
    )
    .option('--dry-run', 'print the plan and stop: nothing is written (every zip is read and checked)')
    .option(
      '--verify-first',
      'read and check every zip before the first write, instead of in the read that uploads it',
    )
    .option(
      '--policy <file>',
      'the policy file: a version outside its versions, or signed by a key it does not pin, is refused (exit 3)',
    )
    .option('--no-wait', 'do not wait for the registry to report the files uploaded')
    .option(
      '--wait-timeout <duration>',
      'how long to wait for that, e.g. 90s or 10m (env PROVIDER_WAIT_TIMEOUT; default 5m)',
    )
    .option('--no-check', 'skip the final check of what terraform init will get')
    .option('--no-create-provider', 'fail instead of creating the provider when it does not exist')
    .option('--no-register-key', 'fail instead of registering the signing key when it is not registered')
    .option(
      '--tag <key=value>',
      'tag the version (HCP Terraform; repeatable): its tags become exactly these, none given leaves them as they are',
      collect,
    )
    .runsWithSession(
      () => import('../commands/publish.js').then((m) => m.runPublish),
      async ({ context, flags, args }: CommandRun<PublishFlags>) => {
        const dir = args[0] ?? './dist';
        const { tuningFromEnv } = await import('../publish/tuning.js');
        return { ...flags, dir, tuning: tuningFromEnv(context.env) };
      },
      // The run's one client retries and times out as publish's tuning says, the key lookup's too.
      ({ tuning }) => ({ retry: tuning.retry, timeout: { response: tuning.requestTimeoutMs } }),
    )
    .examples(
      onEmulator({
        'the plan only: what would be created and uploaded':
          'publish fixtures/release --key fixtures/keys/signer.pub.asc --dry-run',
        'verify, register the key, create and upload what is missing, wait, check':
          'publish fixtures/release --key fixtures/keys/signer.pub.asc',
        'again, as CI would: writes nothing, one JSON document': 'publish fixtures/release --json',
      }),
    );
}
