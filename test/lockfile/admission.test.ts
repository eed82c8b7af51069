/**
 * The policy's decision about one version (src/lockfile/admission.ts), from a policy file as a platform team
 * writes it: constraints refuse, a pinned key refuses another valid key, an approval admits exactly the bytes and
 * key it was given for (and lifts the cooldown), `approval: required` holds what has no record unless an
 * auto-approve rule holds, and a cooldown holds until the date it names, counted from the origin's publication
 * where known. Refused outranks held, held outranks admitted, across every rule that matches.
 */
import { describe, expect, it } from 'vitest';
import { decide, type VersionFacts } from '../../src/lockfile/admission.js';
import { parsePolicy } from '../../src/lockfile/policy.js';

const DAY = 86_400_000;
const NOW = new Date('2026-11-28T12:00:00Z');
const AWS = 'registry.terraform.io/hashicorp/aws';
const SUMS = 'a'.repeat(64);
const KEY = '34365D9472D7468F';
const OTHER_KEY = 'B7F05A4C6E0A8E0C';

/** The providers rules of a policy file holding `lines` under `providers:`. */
function rules(...lines: string[]) {
  return parsePolicy(['providers:', ...lines].join('\n'), 'policy.yaml').providers;
}

/** The facts of `version` of aws, published `ageDays` ago by its origin, before verification unless given. */
function facts(version: string, ageDays: number, signed: Partial<VersionFacts> = {}): VersionFacts {
  return {
    address: AWS,
    version,
    published: { at: new Date(NOW.getTime() - ageDays * DAY), by: 'origin' },
    ...signed,
  };
}

const RECORD = [
  '      - provider: registry.terraform.io/hashicorp/aws',
  '        version: 5.80.0',
  `        sha256sums: "${SUMS}"`,
  `        key: ${KEY}`,
  '        by: alice',
  '        at: "2026-11-27T09:00:00Z"',
  '        reason: reviewed the changelog',
];

describe('the policy decides', () => {
  it('admits what no rule names', () => {
    expect(decide(rules('  "a/b/c": { min-age: 7d }'), facts('5.80.0', 0), NOW)).toEqual({
      outcome: 'admitted',
      reason: 'no policy rule names it',
    });
  });

  it('a cooldown: holds a version published 2 days ago until 7 days, admits one published 10 days ago', () => {
    const policy = rules(`  "registry.terraform.io/hashicorp/*": { min-age: 7d }`);
    expect(decide(policy, facts('5.81.0', 2), NOW)).toMatchObject({
      outcome: 'held',
      rule: 'version-in-cooldown',
      eligibleAt: new Date('2026-12-03T12:00:00Z'),
    });
    expect(decide(policy, facts('5.81.0', 2), NOW).reason).toContain(
      "published by its origin on 2026-11-26T12:00:00.000Z: held by the policy's min-age until 2026-12-03T12:00:00.000Z",
    );
    expect(decide(policy, facts('5.80.0', 10), NOW)).toMatchObject({ outcome: 'admitted' });
    // No date to count from: held, never admitted by default.
    expect(decide(policy, { ...facts('5.81.0', 0), published: undefined }, NOW)).toMatchObject({
      outcome: 'held',
      rule: 'version-in-cooldown',
    });
  });

  it('a pinned key refuses a version signed by another key, however valid; the key named or its subkey passes', () => {
    const policy = rules(`  "${AWS}": { keys: [${KEY}] }`);
    expect(decide(policy, facts('5.80.0', 30, { keyIds: [OTHER_KEY] }), NOW)).toMatchObject({
      outcome: 'refused',
      rule: 'key-not-allowed',
    });
    expect(decide(policy, facts('5.80.0', 30, { keyIds: [KEY, OTHER_KEY] }), NOW).outcome).toBe('admitted');
    // Before verification the key is not known yet: not refused for it.
    expect(decide(policy, facts('5.80.0', 30), NOW).outcome).toBe('admitted');
    // A fingerprint pins the whole fingerprint: another key whose 64-bit id collides is refused.
    const fingerprint = `0123456789ABCDEF01234567${KEY}`;
    const byFingerprint = rules(`  "${AWS}": { keys: ["${fingerprint.toLowerCase()}"] }`);
    const signedBy = (fp: string) => facts('5.80.0', 30, { keyIds: [KEY, fp] });
    expect(decide(byFingerprint, signedBy(fingerprint), NOW).outcome).toBe('admitted');
    expect(decide(byFingerprint, signedBy(`FFFFFFFFFFFFFFFFFFFFFFFF${KEY}`), NOW)).toMatchObject({
      outcome: 'refused',
      rule: 'key-not-allowed',
    });
  });

  it('versions: a version that does not meet them is refused', () => {
    expect(decide(rules(`  "${AWS}": { versions: "~> 5.80.0" }`), facts('5.81.0', 30), NOW)).toMatchObject({
      outcome: 'refused',
      rule: 'version-not-allowed',
    });
  });

  it('approval: required admits exactly the approved version, for the bytes and key it was given for', () => {
    const policy = rules(
      `  "registry.terraform.io/hashicorp/*":`,
      '    approval: required',
      '    approvals:',
      ...RECORD,
    );
    expect(decide(policy, facts('5.81.0', 30), NOW)).toMatchObject({
      outcome: 'held',
      rule: 'version-not-approved',
    });
    // Approved a day after publication: the record lifts a cooldown too.
    const approved = decide(policy, facts('5.80.0', 1, { sha256sums: SUMS, keyIds: [KEY] }), NOW);
    expect(approved).toMatchObject({
      outcome: 'admitted',
      reason: 'approved by alice on 2026-11-27: reviewed the changelog',
    });
    expect(decide(policy, facts('5.80.0', 1, { sha256sums: 'b'.repeat(64) }), NOW)).toMatchObject({
      outcome: 'refused',
      rule: 'approval-does-not-match',
    });
    expect(decide(policy, facts('5.80.0', 1, { keyIds: [OTHER_KEY] }), NOW)).toMatchObject({
      outcome: 'refused',
      rule: 'approval-does-not-match',
    });
    // Another provider's record approves nothing here.
    expect(
      decide(policy, { ...facts('5.80.0', 30), address: 'registry.terraform.io/hashicorp/google' }, NOW),
    ).toMatchObject({ outcome: 'held', rule: 'version-not-approved' });
  });

  it('auto-approve: a newer patch of an approved minor after its min-age; other versions still need a record', () => {
    const policy = rules(
      `  "${AWS}":`,
      '    approval: required',
      '    auto-approve:',
      '      - { patch-of-approved: true, min-age: 3d }',
      '    approvals:',
      ...RECORD,
    );
    expect(decide(policy, facts('5.80.2', 5), NOW)).toMatchObject({ outcome: 'admitted' });
    expect(decide(policy, facts('5.80.2', 1), NOW)).toMatchObject({
      outcome: 'held',
      rule: 'version-in-cooldown',
      eligibleAt: new Date('2026-11-30T12:00:00Z'),
    });
    expect(decide(policy, facts('5.81.0', 30), NOW)).toMatchObject({
      outcome: 'held',
      rule: 'version-not-approved',
    });
    expect(decide(policy, facts('5.80.3-rc1', 30), NOW)).toMatchObject({ outcome: 'held' });
  });

  it('patch-of-approved counts no pre-release record; a date that is no date holds', () => {
    const policy = rules(
      `  "${AWS}":`,
      '    approval: required',
      '    auto-approve: [{ patch-of-approved: true }]',
      '    approvals:',
      '      - version: 5.80.0-rc1',
      ...RECORD.slice(2),
    );
    expect(decide(policy, facts('5.80.1', 30), NOW)).toMatchObject({
      outcome: 'held',
      rule: 'version-not-approved',
    });
    const cooled = rules(`  "${AWS}": { min-age: 7d }`);
    const undated = {
      ...facts('5.80.0', 30),
      published: { at: new Date('not a date'), by: 'registry' as const },
    };
    expect(decide(cooled, undated, NOW)).toMatchObject({ outcome: 'held', rule: 'version-in-cooldown' });
  });

  it("a provider's records count for every entry that names it, wherever the file keeps them", () => {
    const policy = rules(
      '  "registry.terraform.io/hashicorp/*": { approval: required }',
      `  "${AWS}":`,
      `    keys: [${KEY}]`,
      '    approvals:',
      // Under the exact entry, a record needs no provider: it is the entry's.
      '      - version: 5.80.0',
      ...RECORD.slice(2),
    );
    expect(decide(policy, facts('5.80.0', 1, { sha256sums: SUMS, keyIds: [KEY] }), NOW).outcome).toBe(
      'admitted',
    );
    expect(decide(policy, facts('5.81.0', 1), NOW)).toMatchObject({
      outcome: 'held',
      rule: 'version-not-approved',
    });
  });

  it('every matching rule applies: refused outranks held, held outranks admitted', () => {
    const policy = rules(
      '  "registry.terraform.io/hashicorp/*": { min-age: 7d }',
      `  "${AWS}": { keys: [${KEY}] }`,
    );
    expect(decide(policy, facts('5.81.0', 2, { keyIds: [OTHER_KEY] }), NOW).outcome).toBe('refused');
    expect(decide(policy, facts('5.81.0', 2, { keyIds: [KEY] }), NOW).outcome).toBe('held');
    expect(decide(policy, facts('5.81.0', 9, { keyIds: [KEY] }), NOW).outcome).toBe('admitted');
  });
});

describe('a version known by two addresses (mirrored: its origin and the private registry)', () => {
  const COPY = 'app.terraform.io/my-org/aws';
  const both = (version: string, ageDays: number, signed: Partial<VersionFacts> = {}): VersionFacts => ({
    ...facts(version, ageDays, signed),
    address: COPY,
    also: [AWS],
  });

  it("applies the rules of both: the origin's cooldown and the registry's approval", () => {
    const policy = rules(
      '  "registry.terraform.io/hashicorp/*": { min-age: 7d }',
      '  "app.terraform.io/my-org/*": { approval: required }',
    );
    expect(decide(policy, both('5.81.0', 10), NOW)).toMatchObject({
      outcome: 'held',
      rule: 'version-not-approved',
    });
    expect(decide(policy, facts('5.81.0', 10), NOW).outcome).toBe('admitted');
  });

  it('counts a record under either address, and still binds it to the bytes', () => {
    const policy = rules(
      '  "app.terraform.io/my-org/*": { approval: required }',
      '  "registry.terraform.io/hashicorp/*":',
      '    approvals:',
      ...RECORD,
    );
    expect(decide(policy, both('5.80.0', 0, { sha256sums: SUMS, keyIds: [KEY] }), NOW).outcome).toBe(
      'admitted',
    );
    expect(decide(policy, both('5.80.0', 0, { sha256sums: 'b'.repeat(64) }), NOW)).toMatchObject({
      outcome: 'refused',
      rule: 'approval-does-not-match',
    });
    // Without the origin's address, the record is another provider's.
    expect(decide(policy, { ...both('5.80.0', 0), also: [] }, NOW).outcome).toBe('held');
  });
});

describe('two records of one version', () => {
  it('one for other bytes refuses the version, wherever it is in the file', () => {
    const other = RECORD.map((l) => l.replace(SUMS, 'b'.repeat(64)));
    for (const [first, second] of [
      [RECORD, other],
      [other, RECORD],
    ]) {
      const policy = rules('  "registry.terraform.io/hashicorp/*":', '    approvals:', ...first!, ...second!);
      expect(decide(policy, facts('5.80.0', 0, { sha256sums: SUMS, keyIds: [KEY] }), NOW)).toMatchObject({
        outcome: 'refused',
        rule: 'approval-does-not-match',
      });
    }
  });
});
