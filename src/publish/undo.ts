/**
 * Undoing a run that stopped on bytes that do not verify (a zip that is not its signed line, an entry whose
 * content is damaged, a file changed during the run): what this run created is removed, newest first, so that a
 * failed run leaves the registry as it found it. The version when this run created it (its platforms and files go
 * with it), else each platform this run created; then the provider and the signing key when this run created
 * them. Files uploaded into a version that was there before stay (they are the release's verified SHA256SUMS, its
 * signature, or zips proven before their last byte went): a version cannot take a file back.
 */
import { deleteGpgKey } from '../registry/gpgKeys.js';
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import { deletePlatform } from '../registry/providerPlatforms.js';
import { deleteProvider } from '../registry/providers.js';
import { deleteVersion } from '../registry/versions.js';
import type { Output } from '../ui/output.js';
import type { PublishOutcome } from './types.js';

/** What undoing needs: where, what this run did, and the signing key's id. */
export interface UndoInput {
  client: RegistryClient;
  address: ProviderAddress;
  version: string;
  keyId: string;
  outcome: PublishOutcome;
  output: Output;
}

/**
 * Removes what the run created; says each removal on the output. A removal that fails is warned about with the
 * command that finishes it, and the others still go: the run's own error is the one reported.
 */
export async function undoRun({
  client,
  address,
  version,
  keyId,
  outcome,
  output,
}: UndoInput): Promise<void> {
  const where = `${address.namespace}/${address.name}`;
  const steps: { what: string; run: () => Promise<void>; by: string }[] = [];
  if (outcome.versionCreated) {
    steps.push({
      what: `version ${version}`,
      run: () => deleteVersion(client, address, version),
      by: `remove it with: provider delete ${version}`,
    });
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
  if (outcome.providerCreated) {
    steps.push({
      what: `provider ${where}`,
      run: () => deleteProvider(client, address),
      by: 'remove it in the registry (Registry → Providers)',
    });
  }
  if (outcome.keyRegistered) {
    steps.push({
      what: `signing key ${keyId}`,
      run: () => deleteGpgKey(client, address.namespace, keyId),
      by: 'remove it in the registry (Settings → GPG Keys)',
    });
  }
  for (const step of steps) {
    try {
      await step.run();
      output.info(`Removed ${step.what}, which this run created`);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      output.warn(`${step.what} was created by this run and could not be removed (${why}); ${step.by}`);
    }
  }
}
