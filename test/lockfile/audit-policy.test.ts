/**
 * `provider lock check`'s findings of the policy's decision (src/lockfile/audit.ts over src/lockfile/admission.ts),
 * pure: a provider block of the private registry, what the registry serves for its version (the keys its signature
 * proved, the SHA-256 of its SHA256SUMS, its `created-at`) and a policy file as a platform team writes it. A version
 * held or refused is one finding naming the rule and what to do; `versions` stays the finding it was, never twice,
 * and never hides a pinned key; a version the registry does not serve, and a provider from elsewhere, get none.
 */
import { describe, expect, it } from 'vitest';
import {
  auditOther,
  auditServed,
  type AuditContext,
  type LockEntry,
  type ServedAnswer,
  type ServedVersion,
} from '../../src/lockfile/audit.js';
import { parsePolicy, runPolicy, type LockPolicy } from '../../src/lockfile/policy.js';

const DAY = 86_400_000;
const NOW = new Date('2026-11-28T12:00:00Z');
const ADDRESS = 'app.terraform.io/example-org/example';
const SUMS = 'a'.repeat(64);
const KEY = '34365D9472D7468F';
const FINGERPRINT = `${'C'.repeat(24)}${KEY}`;
const OTHER_KEY = 'B7F05A4C6E0A8E0C';
const H1 = 'h1:linuxAmd64Hash=';

const ENTRY: LockEntry = { address: ADDRESS, version: '1.2.3', hashes: [H1, 'zh:aa'], line: 4 };

const CONTEXT: AuditContext = {
  lockFile: '.terraform.lock.hcl',
  rewrite: 'provider lock --registry --version 1.2.3 --name example --lock-file .terraform.lock.hcl',
  approve: 'provider approve example-org/example 1.2.3 --policy policy.yaml',
  address: ADDRESS,
  now: NOW,
};

/** What the registry serves for 1.2.3: every hash of ENTRY, signed by KEY, created 30 days before NOW. */
function served(facts: Partial<ServedVersion> = {}): ServedAnswer {
  return {
    state: 'served',
    served: {
      platforms: [{ platform: 'linux_amd64', h1: [H1] }],
      zh: ['zh:aa'],
      packages: [],
      keyIds: [KEY, FINGERPRINT],
      sha256sums: SUMS,
      createdAt: new Date(NOW.getTime() - 30 * DAY),
      ...facts,
    },
  };
}

/** The run's policy from a policy file holding `lines` under `providers:`. */
function policy(...lines: string[]): LockPolicy {
  const file = parsePolicy(['providers:', ...lines].join('\n'), 'policy.yaml');
  return runPolicy(file, { allow: [], platforms: [] });
}

/** An approval record of `version` for `sums` signed by `key`, as the lines under an entry's `approvals:`. */
function record(version: string, sums = SUMS, key = KEY): string[] {
  return [
    `      - version: "${version}"`,
    `        sha256sums: "${sums}"`,
    `        key: ${key}`,
    '        by: alice',
    '        at: "2026-11-27T09:00:00Z"',
    '        reason: reviewed the changelog',
  ];
}

const rules = (answer: ServedAnswer, held: LockPolicy, context = CONTEXT) =>
  auditServed(ENTRY, answer, held, context).map((f) => f.rule);

describe('lock check: the policy decision as findings', () => {
  it('finds nothing without a policy, nor when the policy admits the version', () => {
    expect(auditServed(ENTRY, served(), runPolicy(undefined, { allow: [], platforms: [] }), CONTEXT)).toEqual(
      [],
    );
    expect(rules(served(), policy(`  "${ADDRESS}":`, '    min-age: 7d', `    keys: [${KEY}]`))).toEqual([]);
  });

  it('version-not-approved: approval required and no record; the hint is the approve command', () => {
    const findings = auditServed(ENTRY, served(), policy(`  "${ADDRESS}": { approval: required }`), CONTEXT);
    expect(findings).toEqual([
      {
        rule: 'version-not-approved',
        provider: ADDRESS,
        version: '1.2.3',
        subject: '1.2.3',
        line: 4,
        message: `${ADDRESS} 1.2.3 has no approval record, and approval is required (${ADDRESS}): provider approve adds one`,
        hint: expect.stringContaining(
          'provider approve example-org/example 1.2.3 --policy policy.yaml --reason "…"',
        ) as string,
      },
    ]);
  });

  it('an auto-approve rule that holds admits without a record', () => {
    const held = policy(
      `  "${ADDRESS}":`,
      '    approval: required',
      '    auto-approve: [{ patch-of-approved: true }]',
      '    approvals:',
      ...record('1.2.0', 'b'.repeat(64)),
    );
    expect(rules(served(), held)).toEqual([]);
  });

  it('version-in-cooldown: the message and the hint give the date it becomes eligible', () => {
    const created = new Date('2026-11-26T12:00:00Z');
    const [finding] = auditServed(
      ENTRY,
      served({ createdAt: created }),
      policy(`  "${ADDRESS}": { min-age: 7d }`),
      CONTEXT,
    );
    expect(finding?.rule).toBe('version-in-cooldown');
    expect(finding?.message).toBe(
      `${ADDRESS} 1.2.3 was created in the registry on 2026-11-26T12:00:00.000Z: held by the policy's min-age until 2026-12-03T12:00:00.000Z (${ADDRESS})`,
    );
    expect(finding?.hint).toMatch(/^Wait until 2026-12-03T12:00:00\.000Z, when it becomes eligible/);
    // Old enough: admitted.
    expect(rules(served(), policy(`  "${ADDRESS}": { min-age: 7d }`))).toEqual([]);
  });

  it('version-in-cooldown: a version whose date is unknown is held (fail closed)', () => {
    const [finding] = auditServed(
      ENTRY,
      served({ createdAt: undefined }),
      policy(`  "${ADDRESS}": { min-age: 7d }`),
      CONTEXT,
    );
    expect(finding?.rule).toBe('version-in-cooldown');
    expect(finding?.message).toContain('has no valid publication date');
    expect(finding?.hint).toContain('The registry gives no date');
  });

  it('key-not-allowed: signed by a key the policy does not pin; a pin by fingerprint passes', () => {
    const [finding, ...rest] = auditServed(
      ENTRY,
      served(),
      policy(`  "${ADDRESS}": { keys: [${OTHER_KEY}] }`),
      CONTEXT,
    );
    expect(rest).toEqual([]);
    expect(finding?.rule).toBe('key-not-allowed');
    expect(finding?.message).toContain(`${ADDRESS} 1.2.3 is signed by key ${KEY} / ${FINGERPRINT}`);
    expect(finding?.hint).toMatch(/^Do not lock this version/);
    expect(rules(served(), policy(`  "${ADDRESS}": { keys: [${FINGERPRINT}] }`))).toEqual([]);
  });

  it('approval-does-not-match: a record for other bytes, or another key; the record for these admits', () => {
    const entry = (...lines: string[]) =>
      policy(`  "${ADDRESS}":`, '    approval: required', '    approvals:', ...lines);
    const otherBytes = auditServed(ENTRY, served(), entry(...record('1.2.3', 'f'.repeat(64))), CONTEXT);
    expect(otherBytes.map((f) => f.rule)).toEqual(['approval-does-not-match']);
    expect(otherBytes[0]!.message).toContain(`the one served now is ${SUMS}`);
    expect(otherBytes[0]!.hint).toContain('provider approve example-org/example 1.2.3');
    const otherKey = auditServed(ENTRY, served(), entry(...record('1.2.3', SUMS, OTHER_KEY)), CONTEXT);
    expect(otherKey.map((f) => f.rule)).toEqual(['approval-does-not-match']);
    expect(otherKey[0]!.message).toContain(`was approved as signed by ${OTHER_KEY}`);
    expect(rules(served(), entry(...record('1.2.3')))).toEqual([]);
  });

  it('version-not-allowed stays one finding, as before, and a pinned key is found beside it', () => {
    const versions = policy(`  "${ADDRESS}": { versions: "~> 2.0" }`);
    expect(auditServed(ENTRY, served(), versions, CONTEXT)).toEqual([
      expect.objectContaining({
        rule: 'version-not-allowed',
        message: `${ADDRESS} 1.2.3 does not meet the policy's versions "~> 2.0" (${ADDRESS})`,
      }),
    ]);
    const both = policy(`  "${ADDRESS}": { versions: "~> 2.0", keys: [${OTHER_KEY}] }`);
    expect(rules(served(), both)).toEqual(['version-not-allowed', 'key-not-allowed']);
  });

  it('matches the policy by the address the context gives (localterraform.com made the host)', () => {
    const aliased = { ...ENTRY, address: 'localterraform.com/example-org/example' };
    const findings = auditServed(
      aliased,
      served(),
      policy(`  "${ADDRESS}": { approval: required }`),
      CONTEXT,
    );
    expect(findings.map((f) => [f.rule, f.provider])).toEqual([
      ['version-not-approved', 'localterraform.com/example-org/example'],
    ]);
  });

  it('no policy finding for a version the registry does not serve, or serves in a state init refuses', () => {
    const held = policy(`  "${ADDRESS}": { approval: required, min-age: 7d }`);
    expect(rules({ state: 'unknown', why: 'not found' }, held)).toEqual(['version-not-served']);
    expect(rules({ state: 'refused', why: 'bad signature' }, held)).toEqual(['version-refused']);
  });

  it('a provider from elsewhere: its versions, and whether an approval it needs is recorded; no cooldown', () => {
    const publicEntry = { ...ENTRY, address: 'registry.terraform.io/hashicorp/random', version: '3.6.3' };
    const context = {
      now: new Date(),
      approve: 'provider approve hashicorp/random 3.6.3 --from registry.terraform.io',
    };
    const cooled = {
      ...policy(
        '  "registry.terraform.io/hashicorp/*": { min-age: 7d, versions: "~> 3.5", keys: [B7F05A4C6E0A8E0C] }',
      ),
      allow: ['registry.terraform.io/hashicorp/*'],
    };
    expect(auditOther(publicEntry, cooled, 'app.terraform.io/example-org', context)).toEqual([]);
    const required = {
      ...policy('  "registry.terraform.io/hashicorp/*": { approval: required, min-age: 7d }'),
      allow: ['registry.terraform.io/hashicorp/*'],
    };
    const found = auditOther(publicEntry, required, 'app.terraform.io/example-org', context);
    expect(found.map((f) => f.rule)).toEqual(['version-not-approved']);
    expect(found[0]!.hint).toContain(
      'provider approve hashicorp/random 3.6.3 --from registry.terraform.io --reason',
    );
    // An auto-approve rule counts an age the check does not know: it is taken as met (the mirror counts it).
    const auto = {
      ...policy(
        '  "registry.terraform.io/hashicorp/*":',
        '    approval: required',
        '    auto-approve: [{ min-age: 3d }]',
      ),
      allow: ['registry.terraform.io/hashicorp/*'],
    };
    expect(auditOther(publicEntry, auto, 'app.terraform.io/example-org', context)).toEqual([]);
    // Not allowed, or its version refused: an approval would not settle it, and is not asked for.
    const notAllowed = { ...required, allow: [] };
    expect(
      auditOther(publicEntry, notAllowed, 'app.terraform.io/example-org', context).map((f) => f.rule),
    ).toEqual(['provider-not-allowed']);
    const refused = {
      ...policy('  "registry.terraform.io/hashicorp/*": { approval: required, versions: "~> 4.0" }'),
      allow: ['registry.terraform.io/hashicorp/*'],
    };
    expect(
      auditOther(publicEntry, refused, 'app.terraform.io/example-org', context).map((f) => f.rule),
    ).toEqual(['version-not-allowed']);
  });
});
