/** `provider platforms list <version>` and `platforms show <version> <os>_<arch>`. */
import { withVersion, type ProgramCommand } from './command.js';
import { onEmulator } from './help.js';

/** Registers the command group. */
export function registerPlatforms(program: ProgramCommand): void {
  const platforms = program
    .command('platforms')
    .description("read a version's platforms on the registry")
    .examples(
      onEmulator({
        'every platform of 1.2.3': 'platforms list 1.2.3 --name example',
        'one of them': 'platforms show 1.2.3 linux_amd64 --name example',
      }),
    );
  platforms
    .command('list')
    .description('every platform of a version (all pages): filename, shasum, binary uploaded')
    .argument('<version>', 'the version, e.g. 1.2.3')
    .runsWithSession(() => import('../commands/platforms.js').then((m) => m.runPlatformsList), withVersion)
    .examples(
      onEmulator({
        'filename, shasum and whether each binary is uploaded': 'platforms list 1.2.3 --name example',
        'the documents, for scripts': 'platforms list 1.2.3 --name example --json',
      }),
    );
  platforms
    .command('show')
    .description('one platform of a version')
    .argument('<version>', 'the version, e.g. 1.2.3')
    .argument('<platform>', 'os_arch, e.g. linux_amd64 (os/arch also accepted)')
    .runsWithSession(
      () => import('../commands/platforms.js').then((m) => m.runPlatformsShow),
      ({ args }) => ({ version: args[0], platform: args[1] }),
    )
    .examples(
      onEmulator({
        'one platform': 'platforms show 1.2.3 linux_amd64 --name example',
        'os/arch works too': 'platforms show 1.2.3 darwin/arm64 --name example --json',
      }),
    );
}
