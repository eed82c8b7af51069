/**
 * The words of publishing: what the registry holds (`RemoteState`), what to do about it (`PublishPlan`), and
 * what was done (`PublishOutcome`). Plain data, so the planner is a pure function and `--dry-run`, the
 * summary and resume all come from the same plan.
 */
import type { ProviderAddress } from '../registry/paths.js';
import type { Tag } from '../registry/tags.js';
import type { PlatformResource, VersionResource } from '../terraform/api.js';

/** What the registry holds for the release, read before planning. */
export interface RemoteState {
  providerExists: boolean;
  /** True when a GPG key with the signer's primary key id is registered for the namespace. */
  keyRegistered: boolean;
  /** The version, when it exists. */
  version?: VersionResource | undefined;
  /** Every platform of the version (all pages); empty when the version does not exist. */
  platforms: PlatformResource[];
  /** The bytes of the uploaded SHA256SUMS, when the registry has it. */
  shasumsBytes?: Uint8Array | undefined;
  /** Whether the uploaded signature verifies over the LOCAL SHA256SUMS with the signer's key. */
  signature?: { verifies: boolean; reason?: string | undefined } | undefined;
  /** The version's tags, read only when the version exists and `--tag` was given. */
  tags?: Tag[] | undefined;
}

/** What to do with one item. */
export type PlanAction = 'create' | 'upload' | 'skip' | 'conflict';

/** Switches that change the plan. */
export interface PlanOptions {
  /** Create the provider when absent (`--no-create-provider` turns it off). */
  createProvider: boolean;
  /** Register the signing key when absent (`--no-register-key` turns it off). */
  registerKey: boolean;
  /** The version's tags (`--tag`), sorted and without repeats; empty: the tags are left as they are. */
  tags?: Tag[] | undefined;
}

/**
 * The version's tags: `set` replaces the version's whole tag set with `wanted` (one PATCH, as the platform
 * does), `skip` when it holds exactly those already, `none` when no `--tag` was given (left as they are).
 */
export interface TagPlan {
  wanted: Tag[];
  /** What the version holds now; null when it does not exist yet (or was not read: no --tag). */
  current: Tag[] | null;
  action: 'set' | 'skip' | 'none';
}

/** The provider and the key: created, already there, or absent and not to be created (`missing`). */
export type PrerequisiteAction = 'create' | 'skip' | 'missing';

/** SHA256SUMS or its signature. */
export interface FilePlan {
  kind: 'shasums' | 'signature';
  filename: string;
  bytes: number;
  action: 'upload' | 'skip' | 'conflict';
}

/** One platform of the release. */
export interface PlatformPlan {
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  bytes: number;
  /** Absolute path of the zip. */
  path: string;
  /** create = create and upload; upload = exists, file missing; skip = complete and identical. */
  action: PlanAction;
}

/** Why an item cannot be published as it is. */
export interface Conflict {
  /** `version 1.2.3`, `SHA256SUMS`, `linux_amd64`. */
  subject: string;
  message: string;
  /** The platform (`os_arch`) whose deletion alone resolves it; absent when the version must go. */
  platform?: string;
}

/** A remote platform the release does not have: reported, never deleted. */
export interface ExtraPlatform {
  os: string;
  arch: string;
  filename: string;
}

/** The whole plan. */
export interface PublishPlan {
  address: ProviderAddress;
  provider: { action: PrerequisiteAction };
  key: { keyId: string; action: PrerequisiteAction };
  version: { version: string; keyId: string; protocols: string[]; action: 'create' | 'skip' | 'conflict' };
  files: FilePlan[];
  platforms: PlatformPlan[];
  extraPlatforms: ExtraPlatform[];
  conflicts: Conflict[];
  tags: TagPlan;
}

/** What one platform's publishing did in this run. */
export interface PlatformOutcome {
  created: boolean;
  uploaded: boolean;
}

/** What a run did, item by item (things found already done count as not done by this run). */
export interface PublishOutcome {
  providerCreated: boolean;
  keyRegistered: boolean;
  versionCreated: boolean;
  /** By file kind: uploaded in this run. */
  files: Record<FilePlan['kind'], boolean>;
  /** By `os_arch`. */
  platforms: Map<string, PlatformOutcome>;
  /** The version's tags were replaced in this run. */
  tagsSet: boolean;
  /**
   * Found by reading after a create was refused as already taken (`createOrAdopt`): counted as created above, but
   * possibly another publisher's, so never removed by `undoRun`.
   */
  adopted: { provider: boolean; version: boolean };
}
