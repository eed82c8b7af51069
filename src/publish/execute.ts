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
import { runUploadTasks, startAhead } from './pool.js';
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

/**
 * Executes a plan without conflicts; returns what this run did, which `outcome` (the caller's, when it gives one)
 * holds as it goes: what a failed run created, for `undoRun`.
 */
export async function executePlan(
  input: ExecuteInput,
  outcome: PublishOutcome = emptyOutcome(),
): Promise<PublishOutcome> {
  // The provider and the signing key do not depend on each other: both are created at once.
  await settleAll([createProviderStep(input, outcome), registerKeyStep(input, outcome)]);
  const version = await createVersionStep(input, outcome);
  await transferAll(input, version, outcome);
  return outcome;
}

/** What every create shares: the retry policy, the interruption, the progress's notes. */
function createCommon({ tuning, signal, progress }: ExecuteInput) {
  return { retry: tuning.retry, signal, note: (text: string): void => progress.note(text) };
}

/** Creates the provider, when the plan says so. */
async function createProviderStep(input: ExecuteInput, outcome: PublishOutcome): Promise<void> {
  const { client, address, plan, progress } = input;
  if (plan.provider.action !== 'create') return;
  const where = `${address.namespace}/${address.name}`;
  const step = progress.step(`Creating provider ${where}`);
  const { adopted } = await createOrAdopt({
    ...createCommon(input),
    label: `provider ${where}`,
    create: () => createProvider(client, address),
    read: () => getProvider(client, address),
  });
  outcome.providerCreated = true;
  outcome.adopted.provider = adopted;
  step.succeed(`Created provider ${where}`);
}

/** Registers the signing key, when the plan says so. */
async function registerKeyStep(input: ExecuteInput, outcome: PublishOutcome): Promise<void> {
  const { client, address, plan, progress, release } = input;
  if (plan.key.action !== 'create') return;
  const step = progress.step(`Registering signing key ${plan.key.keyId} for ${address.namespace}`);
  const { resource } = await createOrAdopt({
    ...createCommon(input),
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
}

/** Creates the version when the plan says so; resolves to the version to publish into. */
async function createVersionStep(input: ExecuteInput, outcome: PublishOutcome): Promise<VersionResource> {
  const { client, address, plan, progress, release } = input;
  let version = input.remote.version;
  if (plan.version.action === 'create') {
    const step = progress.step(`Creating version ${release.version}`);
    const result = await createOrAdopt({
      ...createCommon(input),
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
    outcome.adopted.version = result.adopted;
    step.succeed(
      `Created version ${release.version} (key ${plan.version.keyId}, protocols ${release.protocols.join(', ')})`,
    );
  }
  if (version === undefined) throw new Error('executePlan: no version to publish into');
  return version;
}

/** How many uploads run at once: a fixed number, or `auto`'s width that follows their throughput. */
function uploadWidth(input: ExecuteInput): AdaptiveWidth | undefined {
  if (input.concurrency !== 'auto') return undefined;
  // `--verbose` shows each step.
  return new AdaptiveWidth(new AdaptiveConcurrency(), (d) => {
    if (d.action === 'ignore') return;
    const rate = d.rate === undefined ? '' : ` at ${(d.rate / 1e6).toFixed(1)} MB/s`;
    input.output.debug(`concurrency: ${d.action}${rate}, now at most ${d.limit} uploads at once`);
  });
}

/**
 * Every platform (created ahead, then its zip uploaded), then SHA256SUMS and its signature, at most the
 * concurrency's width at once, under one progress step.
 */
async function transferAll(
  input: ExecuteInput,
  version: VersionResource,
  outcome: PublishOutcome,
): Promise<void> {
  const { plan, release, progress } = input;
  const existing = new Map(input.remote.platforms.map((p) => [platformName(p.attributes), p]));
  // Largest first, so that one big file does not start last and keep a connection busy alone at the end.
  const items = plan.platforms
    .filter((p) => p.action === 'create' || p.action === 'upload')
    .sort((a, b) => b.bytes - a.bytes);
  const width = uploadWidth(input);
  const limit = input.concurrency === 'auto' ? width! : input.concurrency;
  // Platform creates run ahead of the transfers (at most `concurrency` API calls at once, `AUTO.creates` with
  // auto): an upload then starts as soon as a connection is free, instead of waiting for its platform's create
  // round trip.
  const lane = startAhead(
    items.map((item) => async () => {
      const prepared = await preparePlatform(input, item, existing.get(platformName(item)));
      outcome.platforms.set(platformName(item), { created: prepared.created, uploaded: false });
      return prepared;
    }),
    typeof limit === 'number' ? limit : AUTO.creates,
  );
  const transfers = { ...input, flow: width };
  const tasks: (() => Promise<void>)[] = items.map((item, i) => async () => {
    const prepared = await lane.results[i]!;
    const uploaded = await uploadPlatform(transfers, item, prepared.resource);
    outcome.platforms.set(platformName(item), { created: prepared.created, uploaded });
  });
  // SHA256SUMS and its signature last: a few kilobytes, they fill connections left idle by the last zips.
  const files = plan.files.filter((f) => f.action === 'upload');
  const dataOf = (kind: 'shasums' | 'signature'): Uint8Array =>
    kind === 'shasums' ? release.shasumsBytes : release.signatureBytes;
  for (const file of files) {
    tasks.push(async () => {
      outcome.files[file.kind] = await uploadVersionFile(
        transfers,
        file,
        { data: dataOf(file.kind) },
        version,
      );
    });
  }
  if (tasks.length === 0) return;
  const bytes =
    items.reduce((sum, item) => sum + item.bytes, 0) +
    files.reduce((sum, f) => sum + dataOf(f.kind).length, 0);
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
    await runUploadTasks(tasks, limit);
  } catch (error) {
    lane.stop(error);
    // Creates already under way end first, so that what they created is in `outcome` for `undoRun`.
    await Promise.allSettled(lane.results);
    step.fail();
    throw error;
  } finally {
    width?.stop();
  }
  step.succeed();
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
    adopted: { provider: false, version: false },
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
