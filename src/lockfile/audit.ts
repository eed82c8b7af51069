/**
 * What `provider lock check` finds wrong with one provider block of a lock file, given what the private registry
 * serves for its version and the run's policy: the rules below, each finding naming the provider, the hash,
 * platform or version it is about, and what to do. For a version the private registry serves, the policy's
 * decision (./admission.ts, with the keys its signature proved, the SHA-256 of its SHA256SUMS and its
 * `created-at`) is a finding when it holds or refuses the version. Pure: the command reads the lock file and the
 * registry and hands the results here.
 */
import { decide, type PolicyRule } from './admission.js';
import { versionMeets } from './constraints.js';
import { matchesPattern, type LockPolicy } from './policy.js';

/** The kinds of findings, each a rule of the SARIF report (docs/supply-chain.md explains each). */
export const LOCK_RULES = {
  'lock-file-missing': 'The configuration has no .terraform.lock.hcl',
  'provider-not-allowed': 'A provider comes from elsewhere than the private registry',
  'version-not-served': 'The locked version is not served by the private registry',
  'version-refused': 'The private registry serves the locked version in a state terraform init refuses',
  'hash-not-served': 'A hash of the lock file is not one of a package the private registry serves',
  'platform-hash-missing': 'The lock file lacks the h1: of a platform runs need',
  'platform-not-served': 'The private registry serves no package for a platform runs need',
  'version-not-allowed': "The locked version does not meet the policy's constraints",
  'version-not-approved': 'The policy requires an approval of the locked version, and it has none',
  'version-in-cooldown': "The locked version is younger than the policy's min-age",
  'key-not-allowed': 'The locked version is signed by a key the policy does not allow',
  'approval-does-not-match':
    'The approval of the locked version is for other bytes or another key than the private registry serves',
} as const;

/** A rule's id. */
export type LockRule = keyof typeof LOCK_RULES;

/** One thing wrong with the lock file. */
export interface LockFinding {
  rule: LockRule;
  /** The provider's address as the lock file writes it (none for a missing lock file). */
  provider: string | null;
  version: string | null;
  /** What it is about: a hash, a platform, a version or the lock file. */
  subject: string;
  /** The line of the provider's block (none for a missing lock file). */
  line: number | null;
  message: string;
  hint: string;
}

/** One provider block as read. */
export interface LockEntry {
  address: string;
  version: string;
  hashes: string[];
  line: number;
}

/** What the private registry serves for a version, as hashes a lock file may hold. */
export interface ServedVersion {
  /** Each platform served (`linux_amd64`) and the `h1:` hashes of its package (computed from the downloaded zip). */
  platforms: { platform: string; h1: string[] }[];
  /** A `zh:` for every line of the signed SHA256SUMS. */
  zh: string[];
  /** Every hash the registry protocol's download responses serve in `packages` (checked against the zips). */
  packages: string[];
  /**
   * What its verified signature proved: the ids and fingerprints of the registered key and of the (sub)key that
   * made it (a policy's pin or approval names either).
   */
  keyIds: string[];
  /** The SHA-256 of its signed SHA256SUMS, lower-case hex (what an approval record is bound to). */
  sha256sums: string;
  /** Its `created-at` in the private registry, when read (a policy with a min-age): its age counts from it. */
  createdAt?: Date | undefined;
}

/** What became of reading the locked version from the registry. */
export type ServedAnswer =
  | { state: 'served'; served: ServedVersion }
  | { state: 'unknown'; why: string }
  | { state: 'refused'; why: string };

/**
 * How a finding's hints name the commands that rewrite the block and approve the version, where the lock file is,
 * and what the policy decides with.
 */
export interface AuditContext {
  /** The lock file as shown (`infra/.terraform.lock.hcl`). */
  lockFile: string;
  /** `provider lock --registry …` for this provider's block, as a user would type it. */
  rewrite: string;
  /** `provider approve <namespace>/<type> <version> --policy <file>` for the locked version (without `--reason`). */
  approve: string;
  /**
   * The provider's address as the policy reads it: `localterraform.com/<org>` made the registry's host
   * (src/lockfile/policy.ts `canonicalAddress`; the policy's patterns and records read with `withAlias`).
   */
  address: string;
  /** When the run decides (a cooldown ends at a date). */
  now: Date;
}

/** The `provider mirror` command that copies the provider at `address` (`host/namespace/type`) from its host. */
function mirrorCommand(address: string): string {
  const [host = '', namespace = '', type = ''] = address.split('/');
  const from = host === 'registry.terraform.io' ? '' : ` --from ${host}`;
  return `provider mirror ${namespace}/${type}${from}`;
}

/**
 * The findings of a provider from elsewhere than the private registry: none when the policy admits it. Nothing of it
 * is downloaded (no signature, no bytes, no date to decide with), but whether the policy requires an approval of the
 * version, and holds a record of it, needs none of them: that is decided (`approve`: the command's words).
 */
export function auditOther(
  entry: LockEntry,
  policy: LockPolicy,
  registry: string,
  context: { now: Date; approve: string },
): LockFinding[] {
  const found = versionFindings(entry, policy);
  // An approval is asked for only where it would settle the matter: an allowed provider, its version allowed.
  if (policy.allow.some((p) => matchesPattern(p, entry.address)))
    return found.length > 0 ? found : approvalFindings(entry, policy, context);
  return [
    {
      ...about(entry, entry.address),
      rule: 'provider-not-allowed',
      message: `${entry.address} is not a provider of the private registry (${registry}), and no --allow pattern admits it`,
      hint: `Publish it to the private registry (${mirrorCommand(entry.address)} copies it, verified) and change its source in required_providers, or admit it with --allow ${entry.address} (or allow: in the policy file).`,
    },
    ...found,
  ];
}

/** The findings of a provider of the private registry, against what it serves for the locked version. */
export function auditServed(
  entry: LockEntry,
  answer: ServedAnswer,
  policy: LockPolicy,
  context: AuditContext,
): LockFinding[] {
  const found = versionFindings(entry, policy, context.address);
  const label = `${entry.address} ${entry.version}`;
  if (answer.state === 'unknown') {
    return [
      {
        ...about(entry, entry.version),
        rule: 'version-not-served',
        message: `${label} is not served by the private registry: ${answer.why}`,
        hint: `Lock a version the registry serves (provider versions list --name ${typeOf(entry)}; terraform init -upgrade picks one), or publish ${entry.version}; then ${context.rewrite}.`,
      },
      ...found,
    ];
  }
  if (answer.state === 'refused') {
    return [
      {
        ...about(entry, entry.version),
        rule: 'version-refused',
        message: `${label}: terraform init would refuse what the private registry serves: ${answer.why}`,
        hint: `Run provider check ${entry.version} --name ${typeOf(entry)} --download for the details; publish the version again (provider delete ${entry.version}, then provider publish).`,
      },
      ...found,
    ];
  }
  return [
    ...hashFindings(entry, answer.served, context),
    ...platformFindings(entry, answer.served, policy, context),
    ...found,
    ...policyFindings(entry, answer.served, policy, context),
  ];
}

/** A missing lock file as a finding. */
export function missingLockFile(lockFile: string): LockFinding {
  return {
    rule: 'lock-file-missing',
    provider: null,
    version: null,
    subject: lockFile,
    line: null,
    message: `${lockFile} does not exist: nothing pins the providers' versions and hashes`,
    hint: `Run terraform init in the configuration and commit ${lockFile}; then provider lock --registry --version <version> --name <type> --lock-file ${lockFile} for each private provider, so that every platform's h1: is recorded.`,
  };
}

// Every hash of the block must be one the registry serves: a zh: a line of SHA256SUMS, an h1: a served package's.
function hashFindings(entry: LockEntry, served: ServedVersion, context: AuditContext): LockFinding[] {
  const known = new Set([...served.zh, ...served.platforms.flatMap((p) => p.h1), ...served.packages]);
  return entry.hashes
    .filter((hash) => !known.has(hash))
    .map((hash) => ({
      ...about(entry, hash),
      rule: 'hash-not-served',
      message: `${entry.address} ${entry.version}: ${hash} is not ${hash.startsWith('zh:') ? 'a line of the SHA256SUMS' : 'the hash of any package'} the private registry serves`,
      hint: `Delete that hash from ${context.lockFile} (provider lock keeps the hashes already recorded for the same version), then rewrite the block from what the registry serves: ${context.rewrite}.`,
    }));
}

// Every platform runs need must be served, and its h1: in the block.
function platformFindings(
  entry: LockEntry,
  served: ServedVersion,
  policy: LockPolicy,
  context: AuditContext,
): LockFinding[] {
  const found: LockFinding[] = [];
  for (const platform of policy.platforms) {
    const served_ = served.platforms.find((p) => p.platform === platform);
    if (served_ === undefined) {
      found.push({
        ...about(entry, platform),
        rule: 'platform-not-served',
        message: `${entry.address} ${entry.version}: the private registry serves no ${platform} package, so runs on ${platform} cannot install it`,
        hint: `Build and publish the version for ${platform} (add it to the goreleaser targets), or lock a version that has it.`,
      });
    } else if (!served_.h1.some((hash) => entry.hashes.includes(hash))) {
      found.push({
        ...about(entry, platform),
        rule: 'platform-hash-missing',
        message: `${entry.address} ${entry.version}: the lock file has no h1: for ${platform}${served_.h1.length > 0 ? ` (${served_.h1[0]})` : ''}, which runs on ${platform} need (terraform init records only its own platform's)`,
        hint: `Add every platform's h1: from what the registry serves: ${context.rewrite}.`,
      });
    }
  }
  return found;
}

// The policy's version rules the block's version must meet (`address`: as the policy reads it).
function versionFindings(entry: LockEntry, policy: LockPolicy, address = entry.address): LockFinding[] {
  return policy.providers
    .filter((rule) => matchesPattern(rule.pattern, address))
    .flatMap((rule) => (rule.versions === undefined ? [] : [{ ...rule, versions: rule.versions }]))
    .filter((rule) => !versionMeets(entry.version, rule.versions, `the policy's versions of ${rule.pattern}`))
    .map((rule) => ({
      ...about(entry, entry.version),
      rule: 'version-not-allowed',
      message: `${entry.address} ${entry.version} does not meet the policy's versions "${rule.versions}" (${rule.pattern})`,
      hint: `Constrain the provider's version in required_providers to "${rule.versions}" and run terraform init -upgrade, or change the policy.`,
    }));
}

/**
 * The policy's decision about a version the private registry serves, with what its signature proved, as a finding
 * when it holds or refuses it. Each entry's `versions` is versionFindings' (a finding per entry the version
 * misses), so the decision is taken without them: a pinned key, an approval for other bytes or a hold is found
 * beside a version-not-allowed, never hidden by it.
 */
function policyFindings(
  entry: LockEntry,
  served: ServedVersion,
  policy: LockPolicy,
  context: AuditContext,
): LockFinding[] {
  if (policy.providers.length === 0) return [];
  const rules = policy.providers.map((rule) => ({ ...rule, versions: undefined }));
  const facts = {
    address: context.address,
    version: entry.version,
    published: served.createdAt === undefined ? undefined : { at: served.createdAt, by: 'registry' as const },
    keyIds: served.keyIds,
    sha256sums: served.sha256sums,
  };
  const decision = decide(rules, facts, context.now);
  if (decision.outcome === 'admitted' || decision.rule === 'version-not-allowed') return [];
  // The decision's reason starts with the version.
  const reason = decision.reason.startsWith(`${entry.version} `)
    ? decision.reason
    : `${entry.version}: ${decision.reason}`;
  const eligibleAt = decision.outcome === 'held' ? decision.eligibleAt : undefined;
  return [
    {
      ...about(entry, entry.version),
      rule: decision.rule,
      message: `${entry.address} ${reason}`,
      hint: policyHint(decision.rule, eligibleAt, entry, context),
    },
  ];
}

// A version from elsewhere that approval is required of, without a record (or an auto-approve rule admitting it).
// Its cooldown and keys are checked where its bytes are: at the mirror and for the private registry's providers.
function approvalFindings(
  entry: LockEntry,
  policy: LockPolicy,
  context: { now: Date; approve: string },
): LockFinding[] {
  // No age is known here: every min-age is left out (an auto-approve rule's too), as the keys are.
  const rules = policy.providers.map((rule) => ({
    ...rule,
    ...{ versions: undefined, keys: undefined, minAgeMs: undefined },
    autoApprove: rule.autoApprove.map((auto) => ({ ...auto, minAgeMs: undefined })),
  }));
  const facts = { address: entry.address, version: entry.version, published: undefined };
  const decision = decide(rules, facts, context.now);
  if (decision.outcome !== 'held') return [];
  const approve = `${context.approve} --reason "…"`;
  return [
    {
      ...about(entry, entry.version),
      rule: 'version-not-approved',
      message: `${entry.address} ${decision.reason}`,
      hint: `Review ${entry.version}, then record its approval in a reviewed change: ${approve}; or lock a version the policy admits.`,
    },
  ];
}

// What to do about a version the policy holds or refuses.
function policyHint(
  rule: Exclude<PolicyRule, 'version-not-allowed'>,
  eligibleAt: Date | undefined,
  entry: LockEntry,
  context: AuditContext,
): string {
  const approve = `${context.approve} --reason "…"`;
  switch (rule) {
    case 'version-not-approved':
      return `Review ${entry.version} (its changelog, its source), then record its approval in the policy file in a reviewed change: ${approve}; or lock a version the policy admits.`;
    case 'version-in-cooldown':
      return eligibleAt === undefined
        ? `The registry gives no date to count its cooldown from: approve it after a review (${approve}), or lock another version.`
        : `Wait until ${eligibleAt.toISOString()}, when it becomes eligible, and run the check again; or approve it now after a review (an approval lifts the cooldown): ${approve}; or lock an older version the policy admits.`;
    case 'key-not-allowed':
      return `Do not lock this version: it is signed by a key the policy does not pin, as a compromised publisher account's would be. Find out who registered and used that key (provider gpg-keys list) before anything installs it, and lock a version signed by a pinned key; if the key was rotated on purpose, add it to the policy's keys in a reviewed change.`;
    case 'approval-does-not-match':
      return `The registry serves other bytes (or another signing key) for ${entry.version} than were approved: find out why before anything uses it (was it deleted and published again?). If what it serves now is right, remove the old record in a reviewed change and approve it again: ${approve}; else lock another version.`;
  }
}

function about(
  entry: LockEntry,
  subject: string,
): Pick<LockFinding, 'provider' | 'version' | 'subject' | 'line'> {
  return { provider: entry.address, version: entry.version, subject, line: entry.line };
}

// The provider type: the last part of the address.
function typeOf(entry: LockEntry): string {
  return entry.address.split('/').pop() ?? entry.address;
}
