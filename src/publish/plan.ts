/**
 * The planner: local release + remote state → what to create, upload, skip, or refuse. Pure: no I/O, no
 * clock, so every case is a one-line test. A conflict means the registry already holds different content
 * under this version; the run stops before any write and names `provider delete` as the way out.
 */
import type { ProviderAddress } from '../registry/paths.js';
import type { PlatformResource, VersionResource } from '../terraform/api.js';
import type { UploadableRelease } from '../release/types.js';
import { sameTags } from '../registry/tags.js';
import { normalizeProtocols, platformName } from '../terraform/names.js';
import {
  type Conflict,
  type FilePlan,
  type PlanOptions,
  type PlatformPlan,
  type PublishPlan,
  type RemoteState,
  type TagPlan,
} from './types.js';

/** Plans the publishing of a verified release against what the registry holds. */
export function planPublish(
  release: UploadableRelease,
  remote: RemoteState,
  context: { address: ProviderAddress; options: PlanOptions },
): PublishPlan {
  const { options } = context;
  const keyId = release.signer.keyId;
  const conflicts: Conflict[] = [];
  const existing = remote.version;
  const versionConflicts = existing === undefined ? [] : versionDifferences(release, keyId, existing);
  conflicts.push(...versionConflicts.map((message) => ({ subject: `version ${release.version}`, message })));

  const files: FilePlan[] = [
    {
      kind: 'shasums',
      filename: release.shasums.filename,
      bytes: release.shasumsBytes.length,
      action: shasumsAction(release, remote, conflicts),
    },
    {
      kind: 'signature',
      filename: release.signature.filename,
      bytes: release.signatureBytes.length,
      action: signatureAction(release, remote, conflicts),
    },
  ];

  const remoteByName = new Map(remote.platforms.map((p) => [platformName(p.attributes), p]));
  const platforms = release.platforms.map((local): PlatformPlan => {
    const found = existing === undefined ? undefined : remoteByName.get(platformName(local));
    const differences = found === undefined ? [] : platformDifferences(local, found);
    const name = platformName(local);
    conflicts.push(...differences.map((message) => ({ subject: name, message, platform: name })));
    let action: PlatformPlan['action'] = 'create';
    if (found !== undefined) {
      if (differences.length > 0) action = 'conflict';
      else action = found.attributes['provider-binary-uploaded'] ? 'skip' : 'upload';
    }
    const { os, arch, filename, shasum, bytes, path } = local;
    return { os, arch, filename, shasum, bytes, path, action };
  });

  const local = new Set(release.platforms.map(platformName));
  const extraPlatforms = remote.platforms
    .filter((p) => !local.has(platformName(p.attributes)))
    .map((p) => ({ os: p.attributes.os, arch: p.attributes.arch, filename: p.attributes.filename }));

  return {
    address: context.address,
    provider: {
      action: remote.providerExists ? 'skip' : options.createProvider ? 'create' : 'missing',
    },
    key: { keyId, action: remote.keyRegistered ? 'skip' : options.registerKey ? 'create' : 'missing' },
    version: {
      version: release.version,
      keyId,
      protocols: release.protocols,
      action: existing === undefined ? 'create' : versionConflicts.length > 0 ? 'conflict' : 'skip',
    },
    files,
    platforms,
    extraPlatforms,
    conflicts,
    tags: planTags(options.tags ?? [], remote),
  };
}

/** The version's tags: replaced when `wanted` differs from what the existing version holds (read first). */
export function planTags(wanted: TagPlan['wanted'], remote: Pick<RemoteState, 'version' | 'tags'>): TagPlan {
  const current = remote.version === undefined ? null : (remote.tags ?? null);
  if (wanted.length === 0) return { wanted, current, action: 'none' };
  return { wanted, current, action: current !== null && sameTags(current, wanted) ? 'skip' : 'set' };
}

/** How an existing version differs from what the release declares (key id, protocols). */
export function versionDifferences(
  release: Pick<UploadableRelease, 'protocols'>,
  keyId: string,
  version: VersionResource,
): string[] {
  const out: string[] = [];
  const remoteKey = version.attributes['key-id'];
  if (remoteKey.toUpperCase() !== keyId.toUpperCase()) {
    out.push(`the registry's version has key-id ${remoteKey}; the release is signed by key ${keyId}`);
  }
  const remoteProtocols = normalizeProtocols(version.attributes.protocols ?? []);
  const localProtocols = normalizeProtocols(release.protocols);
  if (remoteProtocols.join(',') !== localProtocols.join(',')) {
    out.push(
      `the registry's version declares protocols ${remoteProtocols.join(', ') || '(none)'}; the release declares ${localProtocols.join(', ')}`,
    );
  }
  return out;
}

/** How an existing platform differs from the release's zip (file name, shasum). */
export function platformDifferences(
  local: { filename: string; shasum: string },
  remote: PlatformResource,
): string[] {
  const out: string[] = [];
  const { filename, shasum } = remote.attributes;
  if (filename !== local.filename) {
    out.push(`the registry's platform has filename ${filename}; the release has ${local.filename}`);
  }
  if (shasum.toLowerCase() !== local.shasum) {
    out.push(`the registry's platform has shasum ${shasum}; ${local.filename} hashes to ${local.shasum}`);
  }
  return out;
}

/** True when carrying out the plan writes nothing. */
export function isNoop(plan: PublishPlan): boolean {
  return (
    plan.provider.action !== 'create' &&
    plan.key.action !== 'create' &&
    plan.version.action !== 'create' &&
    plan.files.every((f) => f.action === 'skip') &&
    plan.platforms.every((p) => p.action === 'skip')
  );
}

function shasumsAction(
  release: UploadableRelease,
  remote: RemoteState,
  conflicts: Conflict[],
): FilePlan['action'] {
  if (remote.version === undefined || !remote.version.attributes['shasums-uploaded']) return 'upload';
  if (remote.shasumsBytes !== undefined && sameBytes(remote.shasumsBytes, release.shasumsBytes))
    return 'skip';
  conflicts.push({
    subject: release.shasums.filename,
    message:
      remote.shasumsBytes === undefined
        ? 'the registry says it holds SHA256SUMS, but it could not be read back to compare'
        : `the registry holds another SHA256SUMS (${remote.shasumsBytes.length} bytes) than the release's (${release.shasumsBytes.length} bytes)`,
  });
  return 'conflict';
}

function signatureAction(
  release: UploadableRelease,
  remote: RemoteState,
  conflicts: Conflict[],
): FilePlan['action'] {
  if (remote.version === undefined || !remote.version.attributes['shasums-sig-uploaded']) return 'upload';
  if (remote.signature?.verifies === true) return 'skip';
  conflicts.push({
    subject: release.signature.filename,
    message: `the registry's signature does not verify over the release's SHA256SUMS with key ${release.signer.keyId}${remote.signature?.reason ? ` (${remote.signature.reason})` : ''}`,
  });
  return 'conflict';
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
