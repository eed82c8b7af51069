/**
 * Which version a provider block of a lock file moves to (`provider lock upgrade`): the newest version the private
 * registry serves that meets the block's recorded `constraints` (Terraform writes there the union of every
 * module's constraints), `--to` when given, and whose `created-at` in the registry is at least `--min-age` old (a
 * cooldown); `--version` pins one. A pre-release is chosen only when a constraint names it exactly, as Terraform
 * selects (src/lockfile/constraints.ts `versionMeets`). A block never moves down (but to `--version`): when no
 * newer version is admitted it stays. Pure: the command reads the registry and hands the list here. Every newer
 * version passed over is said, with why.
 */
import { compare, prerelease, valid } from 'semver';
import type { Decision, PolicyRule } from '../../lockfile/admission.js';
import { versionMeets } from '../../lockfile/constraints.js';

const CONSTRAINTS = 'excluded by the lock file’s constraints';

/** A version the registry serves, and when it was created there. */
export interface ServedVersionDate {
  version: string;
  /** Undefined when the registry did not say (a version read for `--min-age` always has it). */
  createdAt: Date | undefined;
  /** False when its SHA256SUMS or their signature is not uploaded (a publish under way); undefined: not known. */
  complete?: boolean | undefined;
}

/** What the choice obeys besides the block's constraints. */
export interface ChoiceRules {
  /** `--to`: constraints in Terraform's syntax. */
  to?: string | undefined;
  /** `--min-age` in ms. */
  minAgeMs?: number | undefined;
  /** `--version`: exactly this one (it must be served). */
  pin?: string | undefined;
  now: Date;
  /** `--policy`: its decision about a candidate, with what is known before verification. */
  admit?: ((candidate: ServedVersionDate) => Decision) | undefined;
}

/** A newer version than the one chosen that was passed over, and why. */
export interface HeldVersion {
  version: string;
  reason: string;
  /** When the policy held or refused it: its rule, and for a cooldown the date it becomes eligible. */
  rule?: PolicyRule;
  eligibleAt?: string;
}

/** The choice for one block: the version to move to (its own when it stays), or none, and the newer ones held. */
export interface VersionChoice {
  version: string | undefined;
  held: HeldVersion[];
  /** Why no version was chosen. */
  none?: string | undefined;
}

/** Chooses the version for a block locked at `locked` with `constraints` (undefined: the block records none). */
export function chooseVersion(
  served: readonly ServedVersionDate[],
  locked: string,
  constraints: string | undefined,
  rules: ChoiceRules,
): VersionChoice {
  const newestFirst = served
    .filter((s) => valid(s.version) !== null)
    .sort((a, b) => compare(b.version, a.version));
  const held: HeldVersion[] = [];
  for (const candidate of newestFirst) {
    // Never down from the version locked, unless --version asks for it: the block stays where it is.
    if (rules.pin === undefined && compare(candidate.version, locked) <= 0) break;
    const refused = refusal(candidate, constraints, rules);
    if (refused === undefined) {
      return { version: candidate.version, held: held.filter((h) => compare(h.version, locked) > 0) };
    }
    // A pre-release no constraint names is no candidate at all, as for Terraform: not said.
    const named = rules.pin === candidate.version || prerelease(candidate.version) === null;
    if (named || refused.reason !== CONSTRAINTS) held.push({ version: candidate.version, ...refused });
  }
  if (rules.pin === undefined) return { version: locked, held };
  const pinned = held.find((h) => h.version === rules.pin);
  const none = pinned?.reason ?? `the registry does not serve ${rules.pin}`;
  return { version: undefined, held: [], none: `--version ${rules.pin}: ${none}` };
}

/** Why `candidate` cannot be chosen (the policy's rule too, when it is the policy's), or undefined when it can. */
function refusal(
  candidate: ServedVersionDate,
  constraints: string | undefined,
  rules: ChoiceRules,
): Omit<HeldVersion, 'version'> | undefined {
  const reason = ruleRefusal(candidate, constraints, rules);
  if (reason !== undefined) return { reason };
  const decision = rules.admit?.(candidate);
  if (decision === undefined || decision.outcome === 'admitted') return undefined;
  return {
    reason: `${decision.outcome} by the policy (${decision.rule}): ${decision.reason}`,
    rule: decision.rule,
    ...(decision.outcome === 'held' && decision.eligibleAt !== undefined
      ? { eligibleAt: decision.eligibleAt.toISOString() }
      : {}),
  };
}

/** Why the flags and the block's constraints pass `candidate` over, or undefined. */
function ruleRefusal(
  candidate: ServedVersionDate,
  constraints: string | undefined,
  rules: ChoiceRules,
): string | undefined {
  const { version } = candidate;
  if (rules.pin !== undefined && version !== rules.pin) return 'not the --version asked for';
  if (candidate.complete === false)
    return 'not complete in the registry (its SHA256SUMS or their signature is not uploaded)';
  // With no constraint, a pre-release is never chosen (Terraform selects one only when named exactly).
  if (!versionMeets(version, constraints ?? '>= 0.0.0', 'the lock file'))
    return 'excluded by the lock file’s constraints';
  if (rules.to !== undefined && !versionMeets(version, rules.to, '--to')) return 'excluded by --to';
  if (rules.minAgeMs !== undefined) {
    if (candidate.createdAt === undefined || Number.isNaN(candidate.createdAt.getTime()))
      return 'held by --min-age: the registry gives no date for it';
    const eligible = new Date(candidate.createdAt.getTime() + rules.minAgeMs);
    if (Number.isNaN(eligible.getTime())) return 'held by --min-age: past any date';
    if (eligible > rules.now) return `held by --min-age until ${eligible.toISOString()}`;
  }
  return undefined;
}
