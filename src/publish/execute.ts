/**
 * Carrying out a plan, in the registry's order: the provider and the signing key (together), the version; then
 * every platform (create + upload), SHA256SUMS and its signature, with at most `concurrency` transfers at once.
 * Items the plan marks `skip` are not touched; creates reconcile lost answers by reading (see reconcile.ts).
 */
import { ConflictError, InterruptedError } from '../errors.js';
import { addGpgKey, getGpgKey } from '../registry/gpgKeys.js';
import { createProvider, getProvider } from '../registry/providers.js';
import type { VersionResource } from '../terraform/api.js';
import { createVersion, getVersion } from '../registry/versions.js';
import type { UploadableRelease } from '../release/types.js';
import { versionDifferences } from './plan.js';
import { AUTO, AdaptiveConcurrency, AdaptiveWidth } from './adaptive.js';
import { runPool, startAhead } from './pool.js';
import { createOrAdopt } from './reconcile.js';
import { preparePlatform, uploadPlatform, uploadVersionFile, type TransferContext } from './transfers.js';
import { platformName } from '../terraform/names.js';
import type { PublishOutcome, PublishPlan, RemoteState } from './types.js';

/** What the executor needs beyond the transfer context. */
export interface ExecuteInput extends TransferContext {
  release: UploadableRelease;
  remote: RemoteState;
  plan: PublishPlan;
  /** Uploads at once: a fixed number, or `auto` (adaptive.ts: grows while the throughput grows). */
  concurrency: number | 'auto';
}

/** Executes a plan without conflicts; returns what this run did. */
export async function executePlan(input: ExecuteInput): Promise<PublishOutcome> {
  const { client, address, release, plan, progress, tuning, signal } = input;
  const outcome = emptyOutcome();
  const note = (text: string): void => progress.note(text);
  const common = { retry: tuning.retry, signal, note };
  const where = `${address.namespace}/${address.name}`;

  // The provider and the signing key do not depend on each other: both are created at once.
  const creatingProvider = async (): Promise<void> => {
    if (plan.provider.action !== 'create') return;
    const step = progress.step(`Creating provider ${where}`);
    await createOrAdopt({
      ...common,
      label: `provider ${where}`,
      create: () => createProvider(client, address),
      read: () => getProvider(client, address),
    });
    outcome.providerCreated = true;
    step.succeed(`Created provider ${where}`);
  };
  const registeringKey = async (): Promise<void> => {
    if (plan.key.action !== 'create') return;
    const step = progress.step(`Registering signing key ${plan.key.keyId} for ${address.namespace}`);
    const { resource } = await createOrAdopt({
      ...common,
      label: `GPG key ${plan.key.keyId}`,
      create: () => addGpgKey(client, address.namespace, release.signer.armoredKey),
      read: () => getGpgKey(client, address.namespace, plan.key.keyId),
    });
    outcome.keyRegistered = true;
    const registered = resource.attributes['key-id'];
    if (registered.toUpperCase() !== plan.key.keyId) {
      input.output.warn(`the registry registered the key as ${registered}, not ${plan.key.keyId}`);
    }
    step.succeed(`Registered signing key ${plan.key.keyId}`);
  };
  await settleAll([creatingProvider(), registeringKey()]);

  let version = input.remote.version;
  if (plan.version.action === 'create') {
    const step = progress.step(`Creating version ${release.version}`);
    const result = await createOrAdopt({
      ...common,
      label: `version ${release.version}`,
      create: () =>
        createVersion(client, address, {
          version: release.version,
          keyId: plan.version.keyId,
          protocols: release.protocols,
        }),
      read: () => getVersion(client, address, release.version),
    });
    version = result.resource;
    if (result.adopted) checkAdoptedVersion(release, plan.version.keyId, version);
    outcome.versionCreated = true;
    step.succeed(
      `Created version ${release.version} (key ${plan.version.keyId}, protocols ${release.protocols.join(', ')})`,
    );
  }
  if (version === undefined) throw new Error('executePlan: no version to publish into');

  const existing = new Map(input.remote.platforms.map((p) => [platformName(p.attributes), p]));
  // Largest first, so that one big file does not start last and keep a connection busy alone at the end.
  const items = plan.platforms
    .filter((p) => p.action === 'create' || p.action === 'upload')
    .sort((a, b) => b.bytes - a.bytes);
  // `auto`: the number of uploads at once follows their throughput (adaptive.ts); `--verbose` shows each step.
  const width =
    input.concurrency === 'auto'
      ? new AdaptiveWidth(new AdaptiveConcurrency(), (d) => {
          if (d.action === 'ignore') return;
          const rate = d.rate === undefined ? '' : ` at ${(d.rate / 1e6).toFixed(1)} MB/s`;
          input.output.debug(`concurrency: ${d.action}${rate}, now at most ${d.limit} uploads at once`);
        })
      : undefined;
  const limit = input.concurrency === 'auto' ? width! : input.concurrency;
  // Platform creates run ahead of the transfers (at most `concurrency` API calls at once, `AUTO.creates` with
  // auto): an upload then starts as soon as a connection is free, instead of waiting for its platform's create
  // round trip.
  const lane = startAhead(
    items.map((item) => () => preparePlatform(input, item, existing.get(platformName(item)))),
    typeof limit === 'number' ? limit : AUTO.creates,
  );
  const transfers = { ...input, flow: width };
  const tasks: (() => Promise<void>)[] = items.map((item, i) => async () => {
    const prepared = await lane.results[i]!;
    const uploaded = await uploadPlatform(transfers, item, prepared.resource);
    outcome.platforms.set(platformName(item), { created: prepared.created, uploaded });
  });
  // SHA256SUMS and its signature last: a few kilobytes, they fill connections left idle by the last zips.
  for (const file of plan.files.filter((f) => f.action === 'upload')) {
    const data = file.kind === 'shasums' ? release.shasumsBytes : release.signatureBytes;
    const target = version;
    tasks.push(async () => {
      outcome.files[file.kind] = await uploadVersionFile(transfers, file, { data }, target);
    });
  }
  if (tasks.length > 0) {
    const bytes =
      items.reduce((sum, item) => sum + item.bytes, 0) +
      plan.files
        .filter((f) => f.action === 'upload')
        .reduce(
          (sum, f) => sum + (f.kind === 'shasums' ? release.shasumsBytes : release.signatureBytes).length,
          0,
        );
    // One step for every transfer: the overall line and the total count all of them together.
    const atOnce =
      width === undefined
        ? `at most ${input.concurrency} at once`
        : tasks.length <= width.current
          ? 'all at once'
          : `${width.current} at once to begin with, up to ${AUTO.cap} while that goes faster`;
    const step = progress.uploads(
      `Uploading ${tasks.length} file${tasks.length === 1 ? '' : 's'} (${atOnce})`,
      tasks.length,
      bytes,
    );
    try {
      await runPool(tasks, limit);
    } catch (error) {
      lane.stop(error);
      step.fail();
      throw error;
    } finally {
      width?.stop();
    }
    step.succeed();
  }
  return outcome;
}

/** Waits for every promise, then throws the first failure (an interruption first): nothing is left running. */
async function settleAll(promises: Promise<void>[]): Promise<void> {
  const failures = (await Promise.allSettled(promises)).flatMap((r) =>
    r.status === 'rejected' ? [r.reason as unknown] : [],
  );
  if (failures.length > 0) throw failures.find((e) => e instanceof InterruptedError) ?? failures[0];
}

/** The outcome of a run that wrote nothing. */
export function emptyOutcome(): PublishOutcome {
  return {
    providerCreated: false,
    keyRegistered: false,
    versionCreated: false,
    files: { shasums: false, signature: false },
    platforms: new Map(),
    tagsSet: false,
  };
}

/** A version found after a lost create must be the one we meant to create. */
function checkAdoptedVersion(release: UploadableRelease, keyId: string, version: VersionResource): void {
  const differences = versionDifferences(release, keyId, version);
  if (differences.length === 0) return;
  throw new ConflictError(
    `Version ${release.version} appeared meanwhile with other content: ${differences.join('; ')}`,
    {
      hint: `Another publisher is at work. Delete it (provider delete ${release.version}) and run again.`,
      details: { differences },
    },
  );
}
