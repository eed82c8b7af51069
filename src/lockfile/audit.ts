/**
 * What `provider lock check` finds wrong with one provider block of a lock file, given what the private registry
 * serves for its version and the run's policy: the rules below, each finding naming the provider, the hash,
 * platform or version it is about, and what to do. Pure: the command reads the lock file and the registry and
 * hands the results here.
 */
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
}

/** What became of reading the locked version from the registry. */
export type ServedAnswer =
  | { state: 'served'; served: ServedVersion }
  | { state: 'unknown'; why: string }
  | { state: 'refused'; why: string };

/** How a finding's hint names the command that rewrites the block, and where the lock file is. */
export interface AuditContext {
  /** The lock file as shown (`infra/.terraform.lock.hcl`). */
  lockFile: string;
  /** `provider lock --registry …` for this provider's block, as a user would type it. */
  rewrite: string;
}

/** The `provider mirror` command that copies the provider at `address` (`host/namespace/type`) from its host. */
function mirrorCommand(address: string): string {
  const [host = '', namespace = '', type = ''] = address.split('/');
  const from = host === 'registry.terraform.io' ? '' : ` --from ${host}`;
  return `provider mirror ${namespace}/${type}${from}`;
}

/** The findings of a provider from elsewhere than the private registry: none when the policy admits it. */
export function auditOther(entry: LockEntry, policy: LockPolicy, registry: string): LockFinding[] {
  const found = versionFindings(entry, policy);
  if (policy.allow.some((p) => matchesPattern(p, entry.address))) return found;
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
  const found = versionFindings(entry, policy);
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

// The policy's version rules the block's version must meet.
function versionFindings(entry: LockEntry, policy: LockPolicy): LockFinding[] {
  return policy.providers
    .filter((rule) => matchesPattern(rule.pattern, entry.address))
    .flatMap((rule) => (rule.versions === undefined ? [] : [{ ...rule, versions: rule.versions }]))
    .filter((rule) => !versionMeets(entry.version, rule.versions, `the policy's versions of ${rule.pattern}`))
    .map((rule) => ({
      ...about(entry, entry.version),
      rule: 'version-not-allowed',
      message: `${entry.address} ${entry.version} does not meet the policy's versions "${rule.versions}" (${rule.pattern})`,
      hint: `Constrain the provider's version in required_providers to "${rule.versions}" and run terraform init -upgrade, or change the policy.`,
    }));
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
