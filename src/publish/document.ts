/**
 * The result of `provider publish` as one document: what `--json` prints, and what the table, the dry-run
 * plan and the GitHub step summary are rendered from. Documented in docs/publish.md ("The JSON document").
 */
import type {
  Conflict,
  ExtraPlatform,
  PlanAction,
  PrerequisiteAction,
  PublishOutcome,
  PublishPlan,
} from './types.js';
import { lockHashes } from '../terraform/hashes.js';
import type { PlatformJson } from '../release/report.js';
import type { VerifiedRelease } from '../release/types.js';
import type { Tag } from '../registry/tags.js';
import { platformName } from '../terraform/names.js';

/** Whether the consumer check ran, and how it ended. */
export type CheckReport =
  | { status: 'passed'; keyId: string; signingKeyId: string; platforms: number }
  | { status: 'skipped'; reason: string };

/** The `--json` document of a publish run (or of a dry run, where created/uploaded mean "would be"). */
export interface PublishDocument {
  ok: boolean;
  dryRun: boolean;
  provider: {
    hostname: string;
    organization: string;
    namespace: string;
    name: string;
    action: PrerequisiteAction;
    created: boolean;
  };
  key: { keyId: string; action: PrerequisiteAction; registered: boolean };
  version: {
    version: string;
    keyId: string;
    protocols: string[];
    action: 'create' | 'skip' | 'conflict';
    created: boolean;
  };
  files: {
    kind: 'shasums' | 'signature';
    filename: string;
    bytes: number;
    action: string;
    uploaded: boolean;
  }[];
  platforms: (PlatformJson & { action: PlanAction; created: boolean; uploaded: boolean })[];
  /** Platforms the registry holds that the release does not (kept, never deleted). */
  extraPlatforms: ExtraPlatform[];
  conflicts: Conflict[];
  /**
   * The version's tags, when `--tag` was given (null otherwise: they were left as they are, and not read).
   * `tags` is the whole set the version carries after the run; `previous` what it carried before (null when
   * the version did not exist); `action` set (replaced, or would be) or skip (already so); `set` whether this
   * run sent the PATCH.
   */
  tags: { action: 'set' | 'skip'; tags: Tag[]; previous: Tag[] | null; set: boolean } | null;
  /**
   * The provider's entry of a `.terraform.lock.hcl` for every platform of the version, as `provider lock` writes
   * it: the address consumers use, the version, and the sorted `h1:`/`zh:` hashes (the GitHub Action renders
   * its `lock-block` output from it).
   */
  lock: { address: string; version: string; hashes: string[] };
  /** True when the run polled the uploaded flags (false with --no-wait, a dry run, or nothing to wait for). */
  waited: boolean;
  check: CheckReport;
  durationMs: number;
}

/** Builds the document; without an outcome it describes the plan (dry run). */
export function publishDocument(input: {
  plan: PublishPlan;
  /** The release the plan is of, its `h1:` hashes computed: the platforms' lock hashes. */
  release: Pick<VerifiedRelease, 'platforms'>;
  outcome?: PublishOutcome | undefined;
  hostname: string;
  lock: PublishDocument['lock'];
  waited: boolean;
  check: CheckReport;
  durationMs: number;
}): PublishDocument {
  const { plan, outcome } = input;
  const dryRun = outcome === undefined;
  const h1 = new Map(input.release.platforms.map((p) => [p.filename, p.h1]));
  return {
    ok: plan.conflicts.length === 0 && plan.provider.action !== 'missing' && plan.key.action !== 'missing',
    dryRun,
    provider: {
      hostname: input.hostname,
      organization: plan.address.organization,
      namespace: plan.address.namespace,
      name: plan.address.name,
      action: plan.provider.action,
      created: outcome ? outcome.providerCreated : plan.provider.action === 'create',
    },
    key: {
      keyId: plan.key.keyId,
      action: plan.key.action,
      registered: outcome ? outcome.keyRegistered : plan.key.action === 'create',
    },
    version: {
      version: plan.version.version,
      keyId: plan.version.keyId,
      protocols: plan.version.protocols,
      action: plan.version.action,
      created: outcome ? outcome.versionCreated : plan.version.action === 'create',
    },
    files: plan.files.map((f) => ({
      kind: f.kind,
      filename: f.filename,
      bytes: f.bytes,
      action: f.action,
      uploaded: outcome ? outcome.files[f.kind] : f.action === 'upload',
    })),
    platforms: plan.platforms.map((p) => {
      const done = outcome?.platforms.get(platformName(p));
      return {
        os: p.os,
        arch: p.arch,
        filename: p.filename,
        shasum: p.shasum,
        bytes: p.bytes,
        hashes: lockHashes({ h1: h1.get(p.filename)!, shasum: p.shasum }),
        action: p.action,
        created: outcome ? done?.created === true : p.action === 'create',
        uploaded: outcome ? done?.uploaded === true : p.action === 'create' || p.action === 'upload',
      };
    }),
    extraPlatforms: plan.extraPlatforms,
    conflicts: plan.conflicts,
    tags:
      plan.tags.action === 'none'
        ? null
        : {
            action: plan.tags.action,
            tags: plan.tags.wanted,
            previous: plan.tags.current,
            set: outcome ? outcome.tagsSet : plan.tags.action === 'set',
          },
    lock: input.lock,
    waited: input.waited,
    check: input.check,
    durationMs: input.durationMs,
  };
}
