/**
 * What the policy file says about the versions of the providers a pattern matches (./policy.ts reads the file):
 *
 *     providers:
 *       "registry.terraform.io/hashicorp/*":
 *         versions: ">= 5.0"              # constraints, as in required_providers
 *         min-age: 7d                      # a cooldown, counted from when the origin published the version
 *         keys: [34365D9472D7468F]         # the only signing keys allowed (key ids, or fingerprints)
 *         approval: required               # only versions with an approval record pass…
 *         auto-approve:                    # …or those one of these rules admits (every condition of a rule)
 *           - { patch-of-approved: true, min-age: 3d }
 *         approvals:                       # written by provider approve: bound to the version's signed bytes
 *           - provider: registry.terraform.io/hashicorp/aws   # needed under a pattern with *
 *             version: 5.80.0
 *             sha256sums: 9f2c…                # the SHA-256 of its SHA256SUMS
 *             key: 34365D9472D7468F             # the key that signed it
 *             by: alice
 *             at: "2026-11-28T10:00:00Z"
 *             reason: reviewed the changelog
 *
 * Every field and every rule is checked: an unknown one is an error (fail closed), and so is a rule that would
 * admit anything (an empty auto-approve rule) or a field that would do nothing (auto-approve without approval:
 * required). Each error names its line.
 */
import { valid } from 'semver';
import * as z from 'zod';
import { parseAge } from '../config/duration.js';
import { canonicalConstraints } from './constraints.js';

/** A GPG key id (16 hex digits, as the registry records it) or a whole fingerprint (40). */
const KEY_ID = /^(?:[0-9A-Fa-f]{16}|[0-9A-Fa-f]{40})$/;
const SHA256 = /^[0-9a-f]{64}$/;
const KEY_MESSAGE = 'a GPG key id (16 hex digits) or fingerprint (40)';

/** A text field: a number or a date written bare is YAML for something else, and is refused with how to write it. */
const text = (what: string) =>
  z.string({ error: (issue) => `${what} must be text${issue.input === undefined ? '' : ' (quote it)'}` });

const approvalSchema = z.strictObject({
  provider: text('provider').optional(),
  version: text('version'),
  sha256sums: text('sha256sums').regex(SHA256, "the SHA-256 of the version's SHA256SUMS: 64 hex digits"),
  key: text('key').regex(KEY_ID, KEY_MESSAGE),
  by: text('by').trim().min(1),
  at: text('at'),
  reason: text('reason').trim().min(1),
});

const autoRuleSchema = z.strictObject({
  'patch-of-approved': z.literal(true).optional(),
  'min-age': text('min-age').optional(),
  versions: text('versions').optional(),
});

/** One entry of `providers:` as the file may write it. */
export const providerRuleSchema = z.strictObject({
  versions: text('versions').optional(),
  'min-age': text('min-age').optional(),
  keys: z.array(text('a key').regex(KEY_ID, KEY_MESSAGE)).min(1).optional(),
  approval: z.enum(['required', 'none']).optional(),
  'auto-approve': z.array(autoRuleSchema).min(1).optional(),
  approvals: z.array(approvalSchema).optional(),
});

/** An approval record: one version of one provider, bound to its signed bytes and the key that signed them. */
export interface ApprovalRecord {
  /** The provider's address (`host/namespace/type`), lower case. */
  provider: string | undefined;
  version: string;
  /** The SHA-256 of the version's SHA256SUMS, lower-case hex. */
  sha256sums: string;
  /** The signing key's id (or fingerprint), upper case. */
  key: string;
  by: string;
  at: string;
  reason: string;
  line: number;
}

/** A rule under which a version is admitted without an approval record: all of its conditions hold. */
export interface AutoApproveRule {
  /** The version is a newer patch of a minor release that has an approval record. */
  patchOfApproved: boolean;
  minAgeMs: number | undefined;
  versions: string | undefined;
  line: number;
}

/** What the policy says about the versions of the providers a pattern matches. */
export interface ProviderRule {
  pattern: string;
  /** Canonical constraints the version must meet. */
  versions: string | undefined;
  /** The cooldown, in ms. */
  minAgeMs: number | undefined;
  /** The signing keys allowed (ids or fingerprints, upper case); undefined: any registered key. */
  keys: string[] | undefined;
  approval: 'required' | 'none';
  autoApprove: AutoApproveRule[];
  approvals: ApprovalRecord[];
  /** The line of the pattern in the file. */
  line: number;
}

/** Where a field is, for errors: its dotted name and line (with `key`, the line of that key in the map at `path`). */
export type Locate = (path: readonly PropertyKey[], key?: string) => { name: string; line: number };

/**
 * A key as compared: a key id (16 hex digits) or a whole fingerprint (40), upper case. A fingerprint is never cut
 * to its id: a pin by fingerprint holds against a key whose 64-bit id collides.
 */
export function keyIdOf(key: string): string {
  return key.toUpperCase();
}

/** Whether a pinned key (an id or a fingerprint) names one of the keys a signature proved (ids and fingerprints). */
export function keyMatches(pin: string, proved: readonly string[]): boolean {
  return proved.some((k) => k.toUpperCase() === pin.toUpperCase());
}

/** The rule of one `providers:` entry, its values checked (`fail` makes the error naming the field's line). */
export function providerRule(
  pattern: string,
  raw: z.infer<typeof providerRuleSchema>,
  base: readonly PropertyKey[],
  locate: Locate,
  fail: (why: string, line: number) => Error,
): ProviderRule {
  const field = (path: readonly PropertyKey[], check: (where: string) => unknown): void => {
    const { name, line } = locate([...base, ...path]);
    try {
      check(name);
    } catch (error) {
      throw fail((error as Error).message, line);
    }
  };
  const approval = raw.approval ?? 'none';
  if (raw['auto-approve'] !== undefined && approval !== 'required') {
    const { name, line } = locate(base, 'auto-approve');
    throw fail(
      `${name}: auto-approve admits versions without a record, so it needs approval: required`,
      line,
    );
  }
  const constraints = (value: string | undefined, path: PropertyKey[]): string | undefined => {
    let out: string | undefined;
    if (value !== undefined) field(path, (where) => (out = canonicalConstraints(value, where)));
    return out;
  };
  const age = (value: string | undefined, path: PropertyKey[]): number | undefined => {
    let out: number | undefined;
    if (value !== undefined) field(path, (where) => (out = parseAge(value, where)));
    return out;
  };
  return {
    pattern,
    versions: constraints(raw.versions, ['versions']),
    minAgeMs: age(raw['min-age'], ['min-age']),
    keys: raw.keys?.map(keyIdOf),
    approval,
    autoApprove: (raw['auto-approve'] ?? []).map((rule, i) => {
      const { name, line } = locate([...base, 'auto-approve', i]);
      if (Object.keys(rule).length === 0)
        throw fail(`${name}: an auto-approve rule with no condition would admit every version`, line);
      return {
        patchOfApproved: rule['patch-of-approved'] === true,
        minAgeMs: age(rule['min-age'], ['auto-approve', i, 'min-age']),
        versions: constraints(rule.versions, ['auto-approve', i, 'versions']),
        line,
      };
    }),
    approvals: (raw.approvals ?? []).map((record, i) =>
      approvalRecord(pattern, record, [...base, 'approvals', i], locate, fail),
    ),
    // The line of the pattern itself (its rules may start below it).
    line: locate(base.slice(0, -1), String(base.at(-1))).line,
  };
}

/** One approval record, checked: a version, a date, and a provider the pattern matches (needed under `*`). */
function approvalRecord(
  pattern: string,
  record: z.infer<typeof approvalSchema>,
  path: readonly PropertyKey[],
  locate: Locate,
  fail: (why: string, line: number) => Error,
): ApprovalRecord {
  const at = (field: string) => locate([...path, field]);
  if (valid(record.version) !== record.version) {
    const { name, line } = at('version');
    throw fail(`${name}: "${record.version}" is not a version (write it as 1.2.3)`, line);
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(record.at) || Number.isNaN(Date.parse(record.at))) {
    const { name, line } = at('at');
    throw fail(`${name}: "${record.at}" is not a date and time (write it as 2026-11-28T10:00:00Z)`, line);
  }
  const provider = record.provider?.trim().toLowerCase();
  if (pattern.includes('*') && provider === undefined) {
    const { name, line } = locate(path);
    throw fail(
      `${name}: a record under a pattern with * must name its provider (provider: host/namespace/type)`,
      line,
    );
  }
  if (provider !== undefined && !matches(pattern, provider)) {
    const { name, line } = at('provider');
    throw fail(`${name}: ${provider} is not a provider the pattern ${pattern} matches`, line);
  }
  return {
    provider: provider ?? (pattern.includes('*') ? undefined : pattern),
    version: record.version,
    sha256sums: record.sha256sums,
    key: keyIdOf(record.key),
    by: record.by,
    at: record.at,
    reason: record.reason,
    line: locate(path).line,
  };
}

/** Whether an address matches a pattern (`*` never crosses a `/`); ./policy.ts exports it as matchesPattern. */
export function matches(pattern: string, address: string): boolean {
  const source = pattern
    .split('*')
    .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`^${source}$`).test(address.toLowerCase());
}
