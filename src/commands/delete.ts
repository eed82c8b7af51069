/**
 * `provider delete <version> [--platform <os>_<arch> ...]`: read what is there, show exactly what will go,
 * ask on a terminal (default no) or require `--yes`, then delete. A 404 to a DELETE whose read just
 * succeeded means the token may read but not write: that is said plainly, with the permission to ask for.
 * Each outcome is one line on stdout, printed once as it happens (a failure part-way still shows what went).
 */
import { ApiError, UsageError } from '../errors.js';
import { deletePlatform, getPlatform } from '../registry/providerPlatforms.js';
import { deleteVersion, getVersion } from '../registry/versions.js';
import { successMark } from '../ui/glyphs.js';
import type { Output } from '../ui/output.js';
import {
  isNotFound,
  openVersion,
  parsePlatformArgument,
  type ProviderSession,
  type VersionArgument,
} from './manage/context.js';
import { planDelete, printPlan, type DeletePlan, type DeleteTarget } from './manage/deletePlan.js';
import { providerView, respond } from './manage/views.js';
import type { PlatformKey } from '../terraform/names.js';
import type { SessionCore } from './session.js';

/** Flags of `provider delete`. */
export interface DeleteFlags {
  platform?: string[];
  yes?: boolean;
  dryRun?: boolean;
  ignoreMissing?: boolean;
}

/** What `provider delete` is asked to do: the flags and the `<version>` argument. */
export interface DeleteOptions extends DeleteFlags, VersionArgument {}

/** What happened to one target. */
type Outcome = 'deleted' | 'would-delete' | 'missing' | 'already-gone';

const PERMISSION_HINT =
  'Deleting needs a token of the owners team, or of a team with the "Manage Private Registry" permission; a member token may only read. Use such a token (TF_TOKEN_<host> or TFE_TOKEN) and run the same command again.';

/** Runs the command; asks `context.confirm`, which is absent when nobody can be asked (no terminal). */
export const runDelete: SessionCore<DeleteOptions> = async (context, session, options) => {
  const { output } = context;
  const wanted = () => parsePlatforms(options.platform ?? []);
  const { provider, version, more: platforms } = await openVersion(context, session, options.version, wanted);
  const plan = await planDelete(provider, version, platforms, options.ignoreMissing === true);
  const present = plan.targets.filter((t) => t.state === 'present');
  const dryRun = options.dryRun === true;
  printPlan(output, provider, plan, dryRun);
  const outcomes = new Map<DeleteTarget, Outcome>(
    plan.targets.map((t) => [t, t.state === 'missing' ? 'missing' : 'would-delete']),
  );
  const refused = present.filter((t) => t.canDelete === false);
  if (refused.length > 0 && !dryRun)
    throw permissionError(provider, plan, 'the registry reports can-delete: false for this token');
  if (refused.length > 0)
    output.warn(`this token may not delete ${describe(provider, plan)}: ${PERMISSION_HINT}`);

  if (present.length > 0 && !dryRun && options.yes !== true) {
    if (context.confirm === undefined) {
      throw new UsageError(
        `Refusing to delete ${describe(provider, plan)} without confirmation: there is no terminal to ask on`,
        {
          hint: 'Pass --yes to delete without asking (CI and scripts), or --dry-run to only see what would be deleted.',
          details: { version, targets: present.map((t) => t.platform ?? t.version) },
        },
      );
    }
    const ok = await context.confirm(`Delete ${describe(provider, plan)}? This cannot be undone.`, {
      default: false,
      signal: context.signal,
    });
    if (!ok) {
      output.info('Nothing was deleted.');
      return render(output, provider, plan, outcomes, { dryRun, declined: true });
    }
  }
  if (!dryRun) {
    for (const target of plan.targets) {
      if (target.state === 'present') outcomes.set(target, await deleteTarget(provider, plan, target));
      outcomeLine(output, provider, plan, target, outcomes.get(target));
    }
  }
  return render(output, provider, plan, outcomes, { dryRun, declined: false });
};

/** Deletes one target; a 404 is re-read to tell "already gone" from "not allowed". */
async function deleteTarget(
  provider: ProviderSession,
  plan: DeletePlan,
  target: DeleteTarget,
): Promise<Outcome> {
  const { client, address } = provider;
  const key = target.platform === undefined ? undefined : parsePlatformArgument(target.platform);
  try {
    if (key === undefined) await deleteVersion(client, address, target.version);
    else await deletePlatform(client, address, target.version, key.os, key.arch);
    return 'deleted';
  } catch (error) {
    if (!isNotFound(error)) throw error;
    const still =
      key === undefined
        ? await getVersion(client, address, target.version)
        : await getPlatform(client, address, target.version, key.os, key.arch);
    if (still === undefined) return 'already-gone';
    throw permissionError(
      provider,
      plan,
      'the registry answered 404 to the DELETE right after showing it to this token',
      error,
    );
  }
}

function permissionError(
  provider: ProviderSession,
  plan: DeletePlan,
  why: string,
  cause?: unknown,
): ApiError {
  return new ApiError(
    `The token may not delete ${describe(provider, plan)}: ${why}, which most likely means it lacks the permission; nothing more was deleted`,
    {
      status: cause instanceof ApiError ? cause.status : 403,
      hint: PERMISSION_HINT,
      details: { version: plan.version, reason: why },
      cause,
    },
  );
}

function render(
  output: Output,
  provider: ProviderSession,
  plan: DeletePlan,
  outcomes: Map<DeleteTarget, Outcome>,
  how: { dryRun: boolean; declined: boolean },
): number {
  const targets = plan.targets.map((t) => ({
    kind: t.kind,
    version: t.version,
    ...(t.platform
      ? { platform: t.platform, filename: t.filename ?? null }
      : { platforms: plan.cascade.map((p) => p.platform) }),
    outcome: how.declined && outcomes.get(t) === 'would-delete' ? 'kept' : outcomes.get(t),
  }));
  const { dryRun, declined } = how;
  const facts = { dryRun, declined, provider: providerView(provider), version: plan.version, targets };
  // A real run has already printed each outcome as it happened.
  return respond(output, facts, () => {
    if (dryRun) output.result('Dry run: nothing was deleted.');
  });
}

/** The one line of an outcome, on stdout: it is the command's result. */
function outcomeLine(
  output: Output,
  provider: ProviderSession,
  plan: DeletePlan,
  t: DeleteTarget,
  outcome: Outcome | undefined,
): void {
  const what =
    t.kind === 'version'
      ? `version ${t.version} of ${provider.source}`
      : `platform ${t.platform ?? ''} of ${provider.source} ${t.version}`;
  const n = plan.cascade.length;
  if (outcome === 'deleted')
    output.result(
      `${successMark(output.color)} Deleted ${what}${t.kind === 'version' && n > 0 ? ` and its ${n} platform${n === 1 ? '' : 's'}` : ''}`,
    );
  if (outcome === 'already-gone') output.result(`Already gone: ${what} (deleted meanwhile by someone else)`);
  if (outcome === 'missing') output.result(`Not there (ignored): ${what}`);
}

function describe(provider: ProviderSession, plan: DeletePlan): string {
  const present = plan.targets.filter((t) => t.state === 'present');
  if (present.some((t) => t.kind === 'version')) {
    const n = plan.cascade.length;
    return `version ${plan.version} of ${provider.source}${n > 0 ? ` with its ${n} platform${n === 1 ? '' : 's'}` : ''}`;
  }
  return `platform ${present.map((t) => t.platform).join(', ')} of ${provider.source} ${plan.version}`;
}

function parsePlatforms(values: string[]): PlatformKey[] {
  const keys = values
    .flatMap((v) => v.split(','))
    .filter((v) => v.trim() !== '')
    .map((v) => parsePlatformArgument(v, '--platform'));
  return keys.filter((k, i) => keys.findIndex((o) => o.os === k.os && o.arch === k.arch) === i);
}
