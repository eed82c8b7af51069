/** `provider platforms list <version>` and `platforms show <version> <os>_<arch>`. */
import type { Command } from 'commander';
import type { ProgramHooks } from './main.js';
import { withExamples } from './help.js';

/** Registers the command group. */
export function registerPlatforms(program: Command, hooks: ProgramHooks): void {
  const platforms = program.command('platforms').description("read a version's platforms on the registry");
  withExamples(platforms, [
    {
      emulator: true,
      what: 'every platform of 1.2.3',
      args: ['platforms', 'list', '1.2.3', '--name', 'example'],
    },
    {
      emulator: true,
      what: 'one of them',
      args: ['platforms', 'show', '1.2.3', 'linux_amd64', '--name', 'example'],
    },
  ]);
  const list = platforms
    .command('list')
    .description('every platform of a version (all pages): filename, shasum, binary uploaded')
    .argument('<version>', 'the version, e.g. 1.2.3')
    .action(
      hooks.action(async (context, flags, args) => {
        const [{ runPlatformsList }, { openSession }] = await Promise.all([
          import('../commands/platforms.js'),
          import('../commands/session.js'),
        ]);
        return runPlatformsList(context, openSession(context, flags), { version: args[0] });
      }),
    );
  withExamples(list, [
    {
      emulator: true,
      what: 'filename, shasum and whether each binary is uploaded',
      args: ['platforms', 'list', '1.2.3', '--name', 'example'],
    },
    {
      emulator: true,
      what: 'the documents, for scripts',
      args: ['platforms', 'list', '1.2.3', '--name', 'example', '--json'],
    },
  ]);
  const show = platforms
    .command('show')
    .description('one platform of a version')
    .argument('<version>', 'the version, e.g. 1.2.3')
    .argument('<platform>', 'os_arch, e.g. linux_amd64 (os/arch also accepted)')
    .action(
      hooks.action(async (context, flags, args) => {
        const [{ runPlatformsShow }, { openSession }] = await Promise.all([
          import('../commands/platforms.js'),
          import('../commands/session.js'),
        ]);
        return runPlatformsShow(context, openSession(context, flags), {
          version: args[0],
          platform: args[1],
        });
      }),
    );
  withExamples(show, [
    {
      emulator: true,
      what: 'one platform',
      args: ['platforms', 'show', '1.2.3', 'linux_amd64', '--name', 'example'],
    },
    {
      emulator: true,
      what: 'os/arch works too',
      args: ['platforms', 'show', '1.2.3', 'darwin/arm64', '--name', 'example', '--json'],
    },
  ]);
}
