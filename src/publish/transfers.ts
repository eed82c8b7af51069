/**
 * The per-file work of a run: upload SHA256SUMS and its signature to the version's links, and create each
 * platform and upload its zip. An upload link that is refused is replaced by reading the resource again
 * (which also tells whether the file arrived after all): the upload's `refreshLink` hook, run by the one retry
 * policy (src/net/retry.ts).
 */
import { ApiError, ConflictError } from '../errors.js';
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import { createPlatform, getPlatform } from '../registry/providerPlatforms.js';
import type { PlatformResource, VersionResource } from '../terraform/api.js';
import { uploadFile, type TransferBody } from '../registry/uploads.js';
import { getVersion } from '../registry/versions.js';
import type { Output } from '../ui/output.js';
import type { VerifiedFileSource } from '../verifiedFiles.js';
import type { Progress } from '../ui/progress.js';
import { platformDifferences } from './plan.js';
import { createOrAdopt } from './reconcile.js';
import type { PublishTuning } from './tuning.js';
import { platformName } from '../terraform/names.js';
import type { FilePlan, PlatformPlan } from './types.js';

/** What the file tasks share. */
export interface TransferContext {
  client: RegistryClient;
  address: ProviderAddress;
  version: string;
  output: Output;
  progress: Progress;
  tuning: PublishTuning;
  signal?: AbortSignal | undefined;
  /** Told of the bytes every upload sends and of every retry: the adaptive concurrency's samples (adaptive.ts). */
  flow?: UploadFlow | undefined;
  /** Where the release's zips are read from for upload: the hashing session that verified them. */
  files: VerifiedFileSource;
}

/** What the uploads report to the concurrency policy. */
export interface UploadFlow {
  sent(bytes: number): void;
  retried(): void;
}

/** A file's state as the registry reports it: uploaded already, or the link to upload it to. */
interface LinkState {
  uploaded: boolean;
  link: string | undefined;
}

/** Uploads SHA256SUMS or its signature; returns false when the registry turned out to have it already. */
export async function uploadVersionFile(
  ctx: TransferContext,
  file: FilePlan,
  body: TransferBody,
  version: VersionResource,
): Promise<boolean> {
  const [flag, upload] =
    file.kind === 'shasums'
      ? (['shasums-uploaded', 'shasums-upload'] as const)
      : (['shasums-sig-uploaded', 'shasums-sig-upload'] as const);
  const stateOf = (v: VersionResource): LinkState => ({
    uploaded: v.attributes[flag],
    link: v.links[upload],
  });
  return uploadWithRefresh(ctx, file.filename, body, stateOf(version), async () => {
    const fresh = await getVersion(ctx.client, ctx.address, ctx.version);
    if (fresh === undefined) throw vanished(`version ${ctx.version}`);
    return stateOf(fresh);
  });
}

/** A platform ready for its upload: the registry's resource, and whether this run created it. */
export interface PreparedPlatform {
  resource: PlatformResource;
  created: boolean;
}

/**
 * Creates a platform when the plan says so (reconciling a lost answer, refusing other content); an existing
 * one is used as it is. Separate from the upload so that creates can run ahead of the transfers.
 */
export async function preparePlatform(
  ctx: TransferContext,
  item: PlatformPlan,
  existing: PlatformResource | undefined,
): Promise<PreparedPlatform> {
  const name = platformName(item);
  const read = () => getPlatform(ctx.client, ctx.address, ctx.version, item.os, item.arch);
  let resource = existing;
  let created = false;
  if (item.action === 'create') {
    const result = await createOrAdopt({
      label: `platform ${name}`,
      create: () =>
        createPlatform(ctx.client, ctx.address, ctx.version, {
          os: item.os,
          arch: item.arch,
          shasum: item.shasum,
          filename: item.filename,
        }),
      read,
      retry: ctx.tuning.retry,
      signal: ctx.signal,
      note: (text) => ctx.progress.note(text),
    });
    resource = result.resource;
    created = true;
    ctx.progress.note(`Created platform ${name}`);
    const differences = platformDifferences(item, resource);
    if (differences.length > 0) {
      throw new ConflictError(
        `Platform ${name} of ${ctx.version} appeared meanwhile with other content: ${differences.join('; ')}`,
        {
          hint: `Another publisher is at work. Delete it (provider delete ${ctx.version} --platform ${name}) and run again.`,
          details: { platform: name, differences },
        },
      );
    }
  }
  if (resource === undefined) throw vanished(`platform ${name}`);
  return { resource, created };
}

/** Uploads a platform's zip to its resource's link, unless the registry has it; true when it was sent. */
export async function uploadPlatform(
  ctx: TransferContext,
  item: PlatformPlan,
  resource: PlatformResource,
): Promise<boolean> {
  const name = platformName(item);
  const read = () => getPlatform(ctx.client, ctx.address, ctx.version, item.os, item.arch);
  const stateOf = (p: PlatformResource): LinkState => ({
    uploaded: p.attributes['provider-binary-uploaded'],
    link: p.links['provider-binary-upload'],
  });
  return uploadWithRefresh(
    ctx,
    item.filename,
    // The size and hash it was verified with: the upload proves it sends those bytes, or aborts.
    { path: item.path, bytes: item.bytes, sha256: item.shasum, source: ctx.files },
    stateOf(resource),
    async () => {
      const fresh = await read();
      if (fresh === undefined) throw vanished(`platform ${name}`);
      return stateOf(fresh);
    },
  );
}

/** Uploads to the given link; a refused link is replaced by reading the resource again. */
async function uploadWithRefresh(
  ctx: TransferContext,
  filename: string,
  body: TransferBody,
  initial: LinkState,
  reread: () => Promise<LinkState>,
): Promise<boolean> {
  const link = linkOf(initial, filename);
  if (link === undefined) return false;
  const total = 'data' in body ? body.data.length : body.bytes;
  const transfer = ctx.progress.transfer(filename, total);
  let present = false;
  // Bytes sent so far by the current attempt: each attempt (a retry, a fresh link) counts from 0 again.
  let sent = 0;
  try {
    await uploadFile({
      url: link,
      filename,
      body,
      output: ctx.output,
      signal: ctx.signal,
      retry: ctx.tuning.retry,
      timeoutMs: ctx.tuning.requestTimeoutMs,
      onProgress: (p) => {
        transfer.update(p.transferred);
        ctx.flow?.sent(Math.max(0, p.transferred - sent));
        sent = p.transferred;
      },
      onRetry: (attempt, reason) => {
        sent = 0;
        ctx.flow?.retried();
        ctx.progress.note(`retrying ${filename} (${reason}, retry ${attempt})`);
      },
      refreshLink: async (refused) => {
        ctx.progress.note(
          `the upload link of ${filename} was refused (${refused.status}); reading a fresh one`,
        );
        transfer.update(0);
        sent = 0;
        const fresh = linkOf(await reread(), filename);
        present = fresh === undefined;
        return fresh;
      },
    });
    if (present) transfer.fail();
    else transfer.done();
    return !present;
  } catch (error) {
    transfer.fail();
    throw error;
  }
}

/** The link to upload to; undefined when the registry has the file already (nothing to send). */
function linkOf(state: LinkState, filename: string): string | undefined {
  if (state.uploaded) return undefined;
  if (state.link === undefined) {
    throw new ApiError(`The registry gave no upload link for ${filename}`, {
      status: 403,
      hint: 'The token may read but not upload: use a token of the owners team or of a team with "Manage Private Registry".',
      details: { file: filename },
    });
  }
  return state.link;
}

function vanished(what: string): ApiError {
  return new ApiError(`${what} disappeared from the registry while publishing`, {
    status: 404,
    hint: 'Someone deleted it meanwhile; run the same command again to publish it anew.',
  });
}
