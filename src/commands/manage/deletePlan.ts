/**
 * What `provider delete` will remove, read before anything is deleted: the version with every platform that
 * goes with it, or just the named platforms. Absent targets are errors unless `--ignore-missing`.
 */
import { ApiError } from '../../errors.js';
import { listPlatforms } from '../../registry/providerPlatforms.js';
import { getVersion } from '../../registry/versions.js';
import type { PlatformResource, VersionResource } from '../../terraform/api.js';
import { fileStates } from '../../registry/fileStates.js';
import type { Output } from '../../ui/output.js';
import { platformName, type PlatformKey } from '../../terraform/names.js';
import type { ProviderSession } from './context.js';
import { sortPlatforms } from './views.js';

/** One thing to delete. */
export interface DeleteTarget {
  kind: 'version' | 'platform';
  version: string;
  /** `os_arch` for a platform. */
  platform?: string;
  filename?: string;
  /** What the registry holds now: `present`, or `missing` (only kept with `--ignore-missing`). */
  state: 'present' | 'missing';
  /** The registry's `permissions.can-delete` for this token, when it said. */
  canDelete: boolean | undefined;
}

/** The plan: targets, plus what a version's deletion takes with it. */
export interface DeletePlan {
  version: string;
  targets: DeleteTarget[];
  /** The platforms that go with a deleted version (`os_arch` and filename). */
  cascade: { platform: string; filename: string }[];
  /** `2/2 + 5/5` of the version, when it exists. */
  files: string | undefined;
  keyId: string | undefined;
}

/** Reads the registry and builds the plan; throws ApiError 404 for an absent target unless `ignoreMissing`. */
export async function planDelete(
  context: ProviderSession,
  version: string,
  platforms: PlatformKey[],
  ignoreMissing: boolean,
): Promise<DeletePlan> {
  const found = await getVersion(context.client, context.address, version);
  const remote: PlatformResource[] = found
    ? sortPlatforms(await listPlatforms(context.client, context.address, version))
    : [];
  const plan: DeletePlan = {
    version,
    targets: [],
    cascade: [],
    files: found ? fileStates(found, remote).summary : undefined,
    keyId: found?.attributes['key-id'],
  };
  if (platforms.length === 0) {
    plan.targets.push(versionTarget(version, found));
    plan.cascade = remote.map((p) => ({ platform: nameOf(p), filename: p.attributes.filename }));
  } else {
    for (const wanted of platforms) {
      const match = remote.find((p) => p.attributes.os === wanted.os && p.attributes.arch === wanted.arch);
      plan.targets.push({
        kind: 'platform',
        version,
        platform: platformName(wanted),
        ...(match ? { filename: match.attributes.filename } : {}),
        state: match ? 'present' : 'missing',
        canDelete: match?.attributes.permissions?.['can-delete'],
      });
    }
  }
  const missing = plan.targets.filter((t) => t.state === 'missing');
  if (missing.length > 0 && !ignoreMissing) throw missingError(context, plan, found, remote);
  return plan;
}

/** Prints the plan, on stdout for `--dry-run` (it is the result) and on stderr before deleting. */
export function printPlan(output: Output, context: ProviderSession, plan: DeletePlan, dryRun: boolean): void {
  const line = (text: string): void => (dryRun ? output.result(text) : output.info(text));
  const present = plan.targets.filter((t) => t.state === 'present');
  const verb = dryRun ? 'Would delete' : 'Will delete';
  if (present.length === 0) {
    line(`Nothing to delete: ${describeMissing(plan)} not on ${context.hostname}.`);
    return;
  }
  const version = plan.targets.find((t) => t.kind === 'version');
  if (version) {
    line(`${verb} from ${context.source}:`);
    line(`  version ${plan.version} (key id ${plan.keyId ?? '?'}, files ${plan.files ?? '?'})`);
    if (plan.cascade.length > 0) {
      line(
        `  and with it ${plan.cascade.length} platform${plan.cascade.length === 1 ? '' : 's'} and their files:`,
      );
      const width = Math.max(...plan.cascade.map((p) => p.platform.length));
      for (const p of plan.cascade) line(`    platform ${p.platform.padEnd(width)}  ${p.filename}`);
    }
  } else {
    line(`${verb} from ${context.source} ${plan.version}:`);
    const width = Math.max(...present.map((t) => (t.platform ?? '').length));
    for (const t of present) line(`  platform ${(t.platform ?? '').padEnd(width)}  ${t.filename ?? ''}`);
  }
  for (const t of plan.targets.filter((x) => x.state === 'missing')) {
    line(
      `  (${t.kind === 'version' ? `version ${t.version}` : `platform ${t.platform ?? ''}`} is not there: skipped)`,
    );
  }
}

function versionTarget(version: string, found: VersionResource | undefined): DeleteTarget {
  return {
    kind: 'version',
    version,
    state: found ? 'present' : 'missing',
    canDelete: found?.attributes.permissions?.['can-delete'],
  };
}

function describeMissing(plan: DeletePlan): string {
  const names = plan.targets.map((t) =>
    t.kind === 'version' ? `version ${t.version}` : `platform ${t.platform ?? ''}`,
  );
  return `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'}`;
}

function missingError(
  context: ProviderSession,
  plan: DeletePlan,
  found: VersionResource | undefined,
  remote: PlatformResource[],
): ApiError {
  const { address, hostname } = context;
  const missing = plan.targets.filter((t) => t.state === 'missing');
  const what =
    found === undefined
      ? `Version ${plan.version} of ${address.namespace}/${address.name}`
      : `Platform ${missing.map((t) => t.platform).join(', ')} of ${address.name} ${plan.version}`;
  const there =
    found === undefined
      ? ''
      : ` Version ${plan.version} has ${remote.map(nameOf).join(', ') || 'no platforms'}.`;
  return new ApiError(
    `${what} ${missing.length > 1 && found ? 'are' : 'is'} not on ${hostname}; nothing was deleted`,
    {
      status: 404,
      hint: `Pass --ignore-missing to treat an absent target as already deleted (cleanup scripts).${there}`,
      details: { version: plan.version, missing: missing.map((t) => t.platform ?? t.version) },
    },
  );
}

function nameOf(p: PlatformResource): string {
  return platformName(p.attributes);
}
