/** `provider versions list` and `versions show <version>`: flags → the run's session → the cores. */
import type { VersionsListOptions } from '../commands/versions.js';
import { collect, flagsOnly, withVersion, type ProgramCommand } from './command.js';
import { onEmulator } from './help.js';

/** Registers the command group. */
export function registerVersions(program: ProgramCommand): void {
  const versions = program
    .command('versions')
    .description('read the provider versions on the registry, with the state of their files')
    .examples(
      onEmulator({
        'every version, newest first': 'versions list --name example',
        'one version and its files': 'versions show 1.2.3 --name example',
      }),
    );
  versions
    .command('list')
    .description('every version (all pages): protocols, key id, files uploaded, platforms, tags, created')
    .option(
      '--tag <key=value>',
      'only the versions tagged so (HCP Terraform); --tag key for any value; repeat for any of several',
      collect,
    )
    .runsWithSession(
      () => import('../commands/versions.js').then((m) => m.runVersionsList),
      flagsOnly<VersionsListOptions>,
    )
    .examples(
      onEmulator({
        'a table on a terminal, tab-separated rows in a pipe': 'versions list --name example',
        'the documents, for scripts': 'versions list --name example --json',
        'the versions tagged environment=prod': 'versions list --name example --tag environment=prod',
      }),
    );
  versions
    .command('show')
    .description(
      'one version: its attributes and whether SHA256SUMS, its signature and each binary are uploaded',
    )
    .argument('<version>', 'the version, e.g. 1.2.3')
    .runsWithSession(() => import('../commands/versions.js').then((m) => m.runVersionsShow), withVersion)
    .examples(
      onEmulator({
        'which files are uploaded, and what to do if some are not': 'versions show 1.2.3 --name example',
        'the same as JSON (never a link)': 'versions show 1.2.3 --name example --json',
      }),
    );
}
