/**
 * The policy at the mirror's door (src/lockfile/admission.ts decides): each version chosen is decided on before
 * anything of it is read but its listing and, where a cooldown needs it, the date its origin published it
 * (`published_at` of the registry's provider details); a version held (a cooldown, an approval wanting) or refused
 * (`versions`) stops there, and nothing of it is fetched or written. A version admitted is decided on again once its
 * signature is verified, with the key that made it and the SHA-256 of its SHA256SUMS, before anything of it is
 * written: a pinned key or an approval for other bytes refuses it (exit 3).
 *
 * A version mirrored into a private registry is known by two addresses, its origin's and the one it gets there
 * (`<host>/<organization>/<type>`): the rules naming either apply, and an approval recorded under either counts.
 */
import { VerificationError } from '../errors.js';
import { lockHost } from '../lockfile/address.js';
import {
  decide,
  provenBy,
  signedFacts,
  type Decision,
  type PolicyRule,
  type VersionFacts,
} from '../lockfile/admission.js';
import { matches, type ProviderRule } from '../lockfile/policyRules.js';
import type { Origin, OriginProvider } from './origin.js';
import type { SignedList } from './signed.js';

/** The policy of a mirror run. */
export interface MirrorPolicy {
  /** The policy file as shown. */
  file: string;
  rules: ProviderRule[];
}

/** What a version's report says of the policy's decision (`--json`: every decision, with its rule). */
export interface PolicyVerdict {
  outcome: Decision['outcome'];
  rule: PolicyRule | null;
  reason: string;
  /** For a cooldown: when the version becomes eligible (ISO 8601). */
  eligibleAt: string | null;
}

/** A version the policy refuses once its signature is verified: exit 3, as a version that does not verify. */
export class PolicyRefusal extends VerificationError {}

/** The addresses one version is decided for: its private registry's (when it goes there), and its origin's. */
export function policyAddresses(
  originHost: string,
  provider: OriginProvider,
  destination: string | undefined,
): Pick<VersionFacts, 'address' | 'also'> {
  // As a lock file and the policy's patterns write it: an internationalised host in Unicode.
  const origin = `${lockHost(originHost)}/${provider.namespace}/${provider.type}`.toLowerCase();
  return destination === undefined
    ? { address: origin }
    : { address: destination.toLowerCase(), also: [origin] };
}

/**
 * The decision before anything of the version is read but its date (when a rule that applies counts an age), and
 * the facts it was taken on.
 */
async function decideListed(
  policy: MirrorPolicy,
  origin: Origin,
  provider: OriginProvider,
  version: string,
  addresses: Pick<VersionFacts, 'address' | 'also'>,
  now: Date,
): Promise<{ decision: Decision; facts: VersionFacts }> {
  const dated = needsDate(policy.rules, [addresses.address, ...(addresses.also ?? [])]);
  const at = dated ? await origin.published(provider, version) : undefined;
  const facts: VersionFacts = {
    ...addresses,
    version,
    published: at === undefined ? undefined : { at, by: 'origin' },
  };
  return { decision: decide(policy.rules, facts, now), facts };
}

/** The decision once the signature is verified; throws a PolicyRefusal when it refuses. */
function admitSigned(
  policy: MirrorPolicy,
  listed: { facts: VersionFacts; label: string },
  signed: SignedList,
  now: Date,
): Decision {
  const facts = { ...listed.facts, ...signedFacts(provenBy(signed.signer), signed.shasumsBytes) };
  const decision = decide(policy.rules, facts, now);
  if (decision.outcome !== 'refused') return decision;
  throw new PolicyRefusal(
    `${listed.label} is refused by ${policy.file} (${decision.rule}): ${decision.reason}`,
    {
      hint: 'Nothing of it was written. A pinned key refuses a version even validly signed by another key: find out why the signer changed before changing the policy in a reviewed change.',
      details: { rule: decision.rule, policy: policy.file },
    },
  );
}

/** The policy at one version's door: its decision on the listing, and the check of its signed facts. */
export interface PolicyGate {
  listed: Decision;
  /** Decides again with what the verified signature proved; throws a PolicyRefusal when it refuses. */
  signed: (signed: SignedList) => PolicyVerdict;
}

/** Opens the gate of one version: decides on its listing (reading its date when a rule counts an age). */
export async function openGate(
  policy: MirrorPolicy,
  origin: Origin,
  provider: OriginProvider,
  version: string,
  addresses: Pick<VersionFacts, 'address' | 'also'>,
  now: () => Date,
): Promise<PolicyGate> {
  const label = `${provider.namespace}/${provider.type} ${version}`;
  const { decision, facts } = await decideListed(policy, origin, provider, version, addresses, now());
  return {
    listed: decision,
    signed: (signed) => verdictOf(admitSigned(policy, { facts, label }, signed, now())),
  };
}

/** A listed version the policy refuses (its `versions`): exit 3, nothing of it fetched. */
export function refusedListed(policy: MirrorPolicy, label: string, decision: Decision): PolicyRefusal {
  const rule = decision.outcome === 'admitted' ? null : decision.rule;
  return new PolicyRefusal(`${label} is refused by ${policy.file} (${rule}): ${decision.reason}`, {
    hint: 'Nothing of it was fetched or written. Choose versions the policy allows (--versions, or versions: in the manifest), or change the policy in a reviewed change.',
    details: { rule, policy: policy.file },
  });
}

/** The decision as a version's report holds it. */
export function verdictOf(decision: Decision): PolicyVerdict {
  return {
    outcome: decision.outcome,
    rule: decision.outcome === 'admitted' ? null : decision.rule,
    reason: decision.reason,
    eligibleAt:
      decision.outcome === 'held' && decision.eligibleAt !== undefined
        ? decision.eligibleAt.toISOString()
        : null,
  };
}

/** Whether a rule naming one of the addresses counts a version's age (its min-age, or an auto-approve's). */
function needsDate(rules: readonly ProviderRule[], addresses: readonly string[]): boolean {
  return rules
    .filter((rule) => addresses.some((address) => matches(rule.pattern, address)))
    .some((rule) => rule.minAgeMs !== undefined || rule.autoApprove.some((a) => a.minAgeMs !== undefined));
}
