/**
 * Undoing a run that stopped on bytes that do not verify (a zip that is not its signed line, an entry whose
 * content is damaged, a file changed during the run): what this run created is removed, newest first, so that a
 * failed run leaves the registry as it found it. The version when this run created it (its platforms and files go
 * with it), else each platform this run created; then the provider when this run created it and it holds no
 * other version. Never removed: what a create found already there (`adopted`: perhaps another publisher's), the
 * signing key (a public key, not release content, which other versions of the namespace may be signed with), and
 * files uploaded into a version that was there before (the release's verified SHA256SUMS and signature, or zips
 * proven before their last byte went): a version cannot take a file back.
 */
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import { deletePlatform } from '../registry/providerPlatforms.js';
import { deleteProvider } from '../registry/providers.js';
import { deleteVersion, listVersions } from '../registry/versions.js';
import type { Output } from '../ui/output.js';
import type { PublishOutcome } from './types.js';

/** What undoing needs: where, and what this run did. */
export interface UndoInput {
  client: RegistryClient;
  address: ProviderAddress;
  version: string;
  outcome: PublishOutcome;
  output: Output;
}

/** One removal: what it removes, how, and what finishes it by hand when it fails. */
interface Removal {
  what: string;
  run: () => Promise<void>;
  by: string;
}

/**
 * Removes what the run created; says each removal on the output. A removal that fails is warned about with what
 * finishes it, and the others still go: the run's own error is the one reported.
 */
export async function undoRun(input: UndoInput): Promise<void> {
  for (const step of removals(input)) {
    try {
      await step.run();
      input.output.info(`Removed ${step.what}, which this run created`);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      input.output.warn(`${step.what} was created by this run and could not be removed (${why}); ${step.by}`);
    }
  }
}

/** The removals, newest first. */
function removals({ client, address, version, outcome }: UndoInput): Removal[] {
  const steps: Removal[] = [];
  if (outcome.versionCreated) {
    if (!outcome.adopted.version) {
      steps.push({
        what: `version ${version}`,
        run: () => deleteVersion(client, address, version),
        by: `remove it with: provider delete ${version}`,
      });
    }
  } else {
    for (const [name, platform] of outcome.platforms) {
      if (!platform.created) continue;
      const [os = '', arch = ''] = name.split('_');
      steps.push({
        what: `platform ${name} of ${version}`,
        run: () => deletePlatform(client, address, version, os, arch),
        by: `remove it with: provider delete ${version} --platform ${name}`,
      });
    }
  }
  const ownVersion = outcome.versionCreated && !outcome.adopted.version;
  if (outcome.providerCreated && !outcome.adopted.provider && ownVersion) {
    const where = `${address.namespace}/${address.name}`;
    steps.push({
      what: `provider ${where}`,
      run: async () => {
        // Another publisher may have put a version in it meanwhile: then it stays.
        if ((await listVersions(client, address)).length === 0) await deleteProvider(client, address);
      },
      by: 'remove it in the registry (Registry → Providers)',
    });
  }
  return steps;
}
