/**
 * Whether the policy admits a version of a provider (the policy file's `providers:` rules, ./policyRules.ts): the
 * one decision `mirror`, `publish`, `lock upgrade` and `lock check` take, each with what it knows of the version.
 * Every rule whose pattern matches the provider applies; a version is admitted when none refuses or holds it.
 *
 * For each rule, in this order:
 * 1. `versions`: a version that does not meet them is refused (`version-not-allowed`);
 * 2. `keys`: once the signature is verified, a version signed by another key is refused (`key-not-allowed`), even
 *    with a valid signature: the pin is what stops a compromised publisher account;
 * 3. an approval record of the version: admitted (an approval is a person's decision, and lifts the cooldown), but
 *    only for the bytes it was given for: once the SHA256SUMS is read, another digest, or another signing key, is
 *    refused (`approval-does-not-match`);
 * 4. `approval: required` without a record: admitted when one `auto-approve` rule holds (every condition of it),
 *    else held (`version-not-approved`), or held in a cooldown when a rule only waits for its `min-age`;
 * 5. `min-age`: held until the version is that old (`version-in-cooldown`, with the date it becomes eligible).
 *
 * Ages count from when the version's origin published it (`published_at` of the registry's provider details),
 * else from its `created-at` in the private registry. A version whose date is unknown is held by a cooldown (fail
 * closed). Refused outranks held, held outranks admitted. Pure: the doors read the facts and hand them here.
 */
import { createHash } from 'node:crypto';
import { parse } from 'semver';
import type { SignerInfo } from '../release/types.js';
import { versionMeets } from './constraints.js';
import { keyMatches, matches, type ApprovalRecord, type ProviderRule } from './policyRules.js';

/** What a door knows of a version when it decides (the signed facts only once it has verified them). */
export interface VersionFacts {
  /** `host/namespace/type`, as a lock file writes it. */
  address: string;
  /**
   * Other addresses the same signed bytes are known by (a mirrored version: its origin's address besides the one it
   * has in the private registry): the rules naming any of them apply, and their approval records count.
   */
  also?: readonly string[];
  version: string;
  /** When it was published: by its origin where that says, else created in the private registry. */
  published: { at: Date; by: 'origin' | 'registry' } | undefined;
  /**
   * Once the signature is verified: the ids and fingerprints of the registered key and of the (sub)key that made
   * it (a pin names either by id or by fingerprint).
   */
  keyIds?: string[];
  /** Once SHA256SUMS is read: its SHA-256, lower-case hex. */
  sha256sums?: string;
}

/** What a verified signature proved: the registered key's id, the id of the (sub)key that signed, fingerprints. */
export interface ProvenSignature {
  keyId: string;
  signingKeyId: string;
  fingerprints: string[];
}

/** The ids and fingerprints a pin or an approval record may name, each once. */
export function keyIdsOf(signature: ProvenSignature): string[] {
  return [...new Set([signature.keyId, signature.signingKeyId, ...signature.fingerprints])];
}

/** What the release signer check proved, as a consumer check reports it. */
export function provenBy(signer: SignerInfo): ProvenSignature {
  const { keyId, signingKeyId, fingerprint, signingFingerprint } = signer;
  return { keyId, signingKeyId, fingerprints: [...new Set([fingerprint, signingFingerprint])] };
}

/** The signed facts of a version whose SHA256SUMS (`shasums`, its bytes) a verified signature covers. */
export function signedFacts(
  signature: ProvenSignature,
  shasums: Uint8Array,
): Required<Pick<VersionFacts, 'keyIds' | 'sha256sums'>> {
  return { keyIds: keyIdsOf(signature), sha256sums: createHash('sha256').update(shasums).digest('hex') };
}

/** Why a version is held or refused: a rule of the policy, as findings and `--json` name it. */
export type PolicyRule =
  | 'version-not-allowed'
  | 'key-not-allowed'
  | 'approval-does-not-match'
  | 'version-not-approved'
  | 'version-in-cooldown';

/** The policy's decision about one version. */
export type Decision =
  | { outcome: 'admitted'; reason: string; approval?: ApprovalRecord }
  | {
      outcome: 'held';
      rule: 'version-not-approved' | 'version-in-cooldown';
      reason: string;
      eligibleAt?: Date;
    }
  | {
      outcome: 'refused';
      rule: 'version-not-allowed' | 'key-not-allowed' | 'approval-does-not-match';
      reason: string;
    };

const RANK = { admitted: 0, held: 1, refused: 2 } as const;

/** Decides about one version at `now` (see above); admitted with "no policy rule" when no rule matches. */
export function decide(rules: readonly ProviderRule[], facts: VersionFacts, now: Date): Decision {
  const addresses = [facts.address, ...(facts.also ?? [])].map((a) => a.toLowerCase());
  const matching = rules.filter((rule) => addresses.some((address) => matches(rule.pattern, address)));
  // The provider's approval records, wherever the policy keeps them: every matching entry's rules see them all.
  const records = matching.flatMap((rule) =>
    rule.approvals.filter((r) => addresses.includes(r.provider ?? rule.pattern)),
  );
  const decisions = matching.map((rule) => decideRule(rule, records, facts, now));
  if (decisions.length === 0) return { outcome: 'admitted', reason: 'no policy rule names it' };
  return decisions.reduce((worst, next) => (RANK[next.outcome] > RANK[worst.outcome] ? next : worst));
}

/** The decision of one rule. */
function decideRule(rule: ProviderRule, records: ApprovalRecord[], facts: VersionFacts, now: Date): Decision {
  const { version } = facts;
  const where = `policy ${rule.pattern}`;
  if (rule.versions !== undefined && !versionMeets(version, rule.versions, `${where} versions`))
    return {
      outcome: 'refused',
      rule: 'version-not-allowed',
      reason: `${version} does not meet the policy's versions "${rule.versions}" (${rule.pattern})`,
    };
  const keys = facts.keyIds;
  if (rule.keys !== undefined && keys !== undefined && !rule.keys.some((pin) => keyMatches(pin, keys)))
    return {
      outcome: 'refused',
      rule: 'key-not-allowed',
      reason: `${version} is signed by key ${keys.join(' / ')}, which the policy does not allow (keys: ${rule.keys.join(', ')}; ${rule.pattern})`,
    };
  // Every record of the version must be for the bytes and key now known: one for other bytes refuses the version
  // wherever it sits in the file (never the first one found deciding).
  const ofVersion = records.filter((r) => r.version === version);
  const decisions = ofVersion.map((r) => approved(r, facts));
  const record = decisions.find((d) => d.outcome === 'refused') ?? decisions[0];
  if (record !== undefined) return record;
  if (rule.approval === 'required') {
    const auto = autoApproved(rule, records, facts, now);
    if (auto !== undefined) return auto;
  }
  return (
    cooldown(rule.minAgeMs, rule.pattern, facts, now) ?? { outcome: 'admitted', reason: admittedBy(rule) }
  );
}

/** Admitted by its record, when the record is for the bytes and key now known. */
function approved(record: ApprovalRecord, facts: VersionFacts): Decision {
  if (facts.sha256sums !== undefined && facts.sha256sums !== record.sha256sums)
    return {
      outcome: 'refused',
      rule: 'approval-does-not-match',
      reason: `${facts.version} was approved for a SHA256SUMS of SHA-256 ${record.sha256sums} (line ${record.line}), and the one served now is ${facts.sha256sums}`,
    };
  const keys = facts.keyIds;
  if (keys !== undefined && !keyMatches(record.key, keys))
    return {
      outcome: 'refused',
      rule: 'approval-does-not-match',
      reason: `${facts.version} was approved as signed by ${record.key} (line ${record.line}), and it is signed by ${keys.join(', ')} now`,
    };
  return {
    outcome: 'admitted',
    reason: `approved by ${record.by} on ${record.at.slice(0, 10)}: ${record.reason}`,
    approval: record,
  };
}

/**
 * Admitted by an auto-approve rule; or held in a cooldown when the rules that would admit it only wait for their
 * age (the earliest date one admits it); undefined when none applies: held for want of a record.
 */
function autoApproved(
  rule: ProviderRule,
  records: ApprovalRecord[],
  facts: VersionFacts,
  now: Date,
): Decision | undefined {
  let waiting: Decision | undefined;
  for (const auto of rule.autoApprove) {
    if (auto.versions !== undefined && !versionMeets(facts.version, auto.versions, 'auto-approve versions'))
      continue;
    if (auto.patchOfApproved && !isPatchOfApproved(records, facts.version)) continue;
    const wait = cooldown(auto.minAgeMs, rule.pattern, facts, now);
    if (wait === undefined)
      return { outcome: 'admitted', reason: `admitted without a record by auto-approve (line ${auto.line})` };
    if (
      waiting === undefined ||
      (wait.outcome === 'held' &&
        waiting.outcome === 'held' &&
        (wait.eligibleAt?.getTime() ?? Infinity) < (waiting.eligibleAt?.getTime() ?? Infinity))
    )
      waiting = wait;
  }
  return (
    waiting ?? {
      outcome: 'held',
      rule: 'version-not-approved',
      reason: `${facts.version} has no approval record, and approval is required (${rule.pattern}): provider approve adds one`,
    }
  );
}

/** A newer patch release of a minor release that has an approval record. */
function isPatchOfApproved(records: ApprovalRecord[], given: string): boolean {
  const version = parse(given);
  if (version === null || version.prerelease.length > 0) return false;
  return records.some((r) => {
    const base = parse(r.version);
    return (
      base !== null &&
      base.prerelease.length === 0 &&
      base.major === version.major &&
      base.minor === version.minor &&
      version.patch > base.patch
    );
  });
}

/** Held until the version is `minAgeMs` old; undefined when it is (or there is no cooldown). */
function cooldown(
  minAgeMs: number | undefined,
  pattern: string,
  facts: VersionFacts,
  now: Date,
): Decision | undefined {
  if (minAgeMs === undefined) return undefined;
  if (facts.published === undefined || Number.isNaN(facts.published.at.getTime()))
    return {
      outcome: 'held',
      rule: 'version-in-cooldown',
      reason: `${facts.version} has no valid publication date to count a cooldown from (${pattern})`,
    };
  const eligibleAt = new Date(facts.published.at.getTime() + minAgeMs);
  if (Number.isNaN(eligibleAt.getTime()))
    return {
      outcome: 'held',
      rule: 'version-in-cooldown',
      reason: `${facts.version}: its cooldown ends past any date (${pattern})`,
    };
  if (eligibleAt <= now) return undefined;
  const by = facts.published.by === 'origin' ? 'published by its origin' : 'created in the registry';
  return {
    outcome: 'held',
    rule: 'version-in-cooldown',
    reason: `${facts.version} was ${by} on ${facts.published.at.toISOString()}: held by the policy's min-age until ${eligibleAt.toISOString()} (${pattern})`,
    eligibleAt,
  };
}

/** Why a rule admits a version that needs no record. */
function admittedBy(rule: ProviderRule): string {
  return rule.minAgeMs === undefined
    ? `the policy admits it (${rule.pattern})`
    : `older than the policy's min-age (${rule.pattern})`;
}
