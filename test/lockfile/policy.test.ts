/**
 * The policy `provider lock check` holds a lock file to: the policy file's format, the provider patterns, and
 * versions held to constraints as Terraform selects them (apparentlymart/go-versions: `~> 1.2` is `>= 1.2.0,
 * < 2.0.0`, `~> 1.2.3` is `>= 1.2.3, < 1.3.0`, a pre-release selected only when named exactly).
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { versionMeets } from '../../src/lockfile/constraints.js';
import { matchesPattern, parsePolicy, runPolicy } from '../../src/lockfile/policy.js';

describe('versionMeets', () => {
  it.each([
    ['1.2.3', '~> 1.2', true],
    ['1.9.0', '~> 1.2', true],
    ['2.0.0', '~> 1.2', false],
    ['1.1.9', '~> 1.2', false],
    ['1.2.9', '~> 1.2.3', true],
    ['1.3.0', '~> 1.2.3', false],
    ['3.5.0', '~> 3', true],
    ['4.0.0', '~> 3', false],
    ['1.2.3', '>= 1.2.0, < 2.0.0', true],
    ['2.0.0', '>= 1.2.0, < 2.0.0', false],
    ['1.2.3', '!= 1.2.3', false],
    ['1.2.3', '1.2.3', true],
    ['2.0.0-beta.1', '>= 1.0.0', false],
    ['2.0.0-beta.1', '2.0.0-beta.1', true],
    ['not-a-version', '>= 1.0.0', false],
  ])('%s meets "%s": %s', (version, constraints, expected) => {
    expect(versionMeets(version, constraints, 'versions')).toBe(expected);
  });

  it('refuses constraints that are not constraints, naming where they come from', () => {
    expect(() => versionMeets('1.2.3', 'newest', 'versions in policy.yaml')).toThrow(
      'versions in policy.yaml "newest" is not a version constraint',
    );
  });
});

describe('provider patterns', () => {
  it.each([
    ['registry.terraform.io/hashicorp/*', 'registry.terraform.io/hashicorp/random', true],
    ['registry.terraform.io/hashicorp/*', 'registry.terraform.io/acme/random', false],
    ['*/*/*', 'app.terraform.io/example-org/example', true],
    ['app.terraform.io/*/example', 'app.terraform.io/a/b/example', false],
    ['app.terraform.io/example-org/ex*', 'APP.terraform.io/Example-Org/EXAMPLE', true],
    ['127.0.0.1:8080/org/*', '127.0.0.1:8080/org/x', true],
    ['127.0.0.1:8080/org/*', '127a0a0a1:8080/org/x', false],
  ])('%s matches %s: %s', (pattern, address, expected) => {
    expect(matchesPattern(pattern, address)).toBe(expected);
  });
});

/** A billion "a/b/c" once its aliases are expanded: each level's list holds ten of the level below. */
function aliasBomb(): string {
  const levels = [
    'l0: &l0 ["a/b/c", "a/b/c", "a/b/c", "a/b/c", "a/b/c", "a/b/c", "a/b/c", "a/b/c", "a/b/c", "a/b/c"]',
  ];
  for (let i = 1; i < 9; i++)
    levels.push(
      `l${i}: &l${i} [${Array(10)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  return `${levels.join('\n')}\nallow: *l8\n`;
}

/** A policy with every field of a provider rule; its lines are asserted. */
const POLICY = [
  'allow: ["registry.terraform.io/hashicorp/*"]',
  'providers:',
  '  # public providers, mirrored',
  '  "registry.terraform.io/hashicorp/*":',
  '    min-age: 7d',
  '    versions: ">= 5.0"',
  '    keys:',
  '      [34365D9472D7468F, B7F05A4C6E0A8E0C]',
  '    approval: required',
  '    auto-approve:',
  '      - { patch-of-approved: true, min-age: 3d }',
  '    approvals:',
  '      # the first',
  '      - provider: registry.terraform.io/hashicorp/aws',
  '        version: 5.80.0',
  `        sha256sums: '${'a'.repeat(64)}'`,
  '        key: 34365d9472d7468f',
  '        by: alice',
  '        at: "2026-11-20T10:00:00Z"',
  '        reason: reviewed the changelog',
  '',
].join('\n');

describe('the policy file', () => {
  it('reads allow, platforms and versions per provider (constraints made canonical)', () => {
    const policy = parsePolicy(
      [
        'allow:',
        '  - registry.terraform.io/HashiCorp/*',
        'platforms: [linux_amd64, darwin_arm64]',
        'providers:',
        '  "app.terraform.io/example-org/*": { versions: "~> 1.2, >= 1.2.3" }',
      ].join('\n'),
      'policy.yaml',
    );
    expect(policy).toEqual({
      allow: ['registry.terraform.io/hashicorp/*'],
      platforms: ['linux_amd64', 'darwin_arm64'],
      providers: [
        {
          pattern: 'app.terraform.io/example-org/*',
          versions: '~> 1.2, >= 1.2.3',
          minAgeMs: undefined,
          keys: undefined,
          approval: 'none',
          autoApprove: [],
          approvals: [],
          line: 5,
        },
      ],
    });
  });

  it.each([
    ['alow: []', 'unknown field alow'],
    ['platforms: [linux]', 'platforms.0: a platform is <os>_<arch>'],
    ['providers: { "a/b/c": { version: "1.0" } }', 'unknown field version'],
    ['providers: { "a/b/c": { versions: "newest" } }', 'is not a version constraint'],
    ['allow: ["hashicorp/*"]', '"hashicorp/*" is not a host/namespace/type pattern'],
    ['allow: [', 'it is not YAML'],
    ['\nallow: [!!js/function "a/b/c"]', 'line 2: Unresolved tag: tag:yaml.org,2002:js/function'],
    [aliasBomb(), 'line 1: the anchor &l0: write each entry out in full'],
  ])('refuses %j (exit 2) naming what is wrong', (text, message) => {
    let error: unknown;
    try {
      parsePolicy(text, 'policy.yaml');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(message);
  });

  it('reads cooldowns, pinned keys, approval rules and records, each with its line', () => {
    const policy = parsePolicy(POLICY, 'policy.yaml');
    expect(policy.providers).toEqual([
      {
        pattern: 'registry.terraform.io/hashicorp/*',
        versions: '>= 5.0.0',
        minAgeMs: 7 * 86_400_000,
        keys: ['34365D9472D7468F', 'B7F05A4C6E0A8E0C'],
        approval: 'required',
        autoApprove: [{ patchOfApproved: true, minAgeMs: 3 * 86_400_000, versions: undefined, line: 11 }],
        approvals: [
          {
            provider: 'registry.terraform.io/hashicorp/aws',
            version: '5.80.0',
            sha256sums: 'a'.repeat(64),
            key: '34365D9472D7468F',
            by: 'alice',
            at: '2026-11-20T10:00:00Z',
            reason: 'reviewed the changelog',
            line: 14,
          },
        ],
        line: 4,
      },
    ]);
  });

  it.each([
    [
      POLICY.replace('min-age: 3d', 'min-agee: 3d'),
      'line 11: providers.registry.terraform.io/hashicorp/*.auto-approve.0: unknown field min-agee',
    ],
    [
      POLICY.replace('approval: required', 'approval: maybe'),
      'line 9: providers.registry.terraform.io/hashicorp/*.approval: ',
    ],
    [
      POLICY.replace('    keys:', '    key:'),
      'line 7: providers.registry.terraform.io/hashicorp/*: unknown field key',
    ],
    [
      POLICY.replace('version: 5.80.0', 'version: 5.80'),
      'line 15: providers.registry.terraform.io/hashicorp/*.approvals.0.version: version must be text (quote it)',
    ],
    [
      POLICY.replace("sha256sums: '" + 'a'.repeat(64) + "'", 'sha256sums: abc'),
      'line 16: providers.registry.terraform.io/hashicorp/*.approvals.0.sha256sums: ',
    ],
    [
      POLICY.replace(
        '      - provider: registry.terraform.io/hashicorp/aws\n        version',
        '      - version',
      ),
      'line 14: providers.registry.terraform.io/hashicorp/*.approvals.0: a record under a pattern with * must name its provider',
    ],
    [
      POLICY.replace(
        'provider: registry.terraform.io/hashicorp/aws',
        'provider: registry.terraform.io/acme/aws',
      ),
      'line 14: providers.registry.terraform.io/hashicorp/*.approvals.0.provider: registry.terraform.io/acme/aws is not a provider the pattern',
    ],
    [
      POLICY.replace('at: "2026-11-20T10:00:00Z"', 'at: yesterday'),
      'line 19: providers.registry.terraform.io/hashicorp/*.approvals.0.at: "yesterday" is not a date and time',
    ],
    [
      POLICY.replace('    approval: required\n', ''),
      'line 9: providers.registry.terraform.io/hashicorp/*.auto-approve: auto-approve admits versions without a record, so it needs approval: required',
    ],
    [
      POLICY.replace('{ patch-of-approved: true, min-age: 3d }', '{}'),
      'line 11: providers.registry.terraform.io/hashicorp/*.auto-approve.0: an auto-approve rule with no condition would admit every version',
    ],
    [
      POLICY.replace('min-age: 7d', 'min-age: soon'),
      'line 5: providers.registry.terraform.io/hashicorp/*.min-age is not an age',
    ],
    [
      POLICY.replace('34365D9472D7468F, B7F05A4C6E0A8E0C', 'nope'),
      'line 8: providers.registry.terraform.io/hashicorp/*.keys.0: a GPG key id',
    ],
  ])('refuses a grown policy that is wrong (exit 2), naming the line: %#', (text, message) => {
    expect(() => parsePolicy(text, 'policy.yaml')).toThrow(`Invalid policy file policy.yaml: ${message}`);
  });

  it.each([
    [
      'providers:\n  "a.io/b/foo": &x { approval: required }\n  "a.io/b/bar": *x\n',
      'line 2: the anchor &x: write each entry out in full',
    ],
    ['providers:\n  "a.io/b/c":\n    <<: { min-age: 7d }\n', 'line 3: a merge key <<'],
    ['%YAML 1.1\n---\nproviders: {}\n', 'line 1: a %YAML 1.1 directive: a policy is read as YAML 1.2 only'],
    [
      'providers:\n  "a.io/ b/c": { min-age: 7d }\n',
      'line 2: providers.a.io/ b/c: "a.io/ b/c" is not a host/namespace/type pattern',
    ],
    ['allow:\n  - a.io/b\n', 'line 2: allow.0: "a.io/b" is not a host/namespace/type pattern'],
    ['# nothing but a comment\n', 'it is empty: give at least one of allow, platforms or providers'],
  ])('refuses what would mean other than it reads (exit 2), naming the line: %#', (text, message) => {
    expect(() => parsePolicy(text, 'policy.yaml')).toThrow(`Invalid policy file policy.yaml: ${message}`);
  });

  it('is joined with the flags: their patterns and platforms added, linux_amd64 when none is named', () => {
    expect(runPolicy(undefined, { allow: [], platforms: [] })).toEqual({
      allow: [],
      platforms: ['linux_amd64'],
      providers: [],
    });
    const file = parsePolicy('allow: ["a/b/*"]\nplatforms: [darwin_arm64]', 'policy.yaml');
    expect(runPolicy(file, { allow: ['c/d/e', 'a/b/*'], platforms: ['linux_amd64'] })).toEqual({
      allow: ['a/b/*', 'c/d/e'],
      platforms: ['darwin_arm64', 'linux_amd64'],
      providers: [],
    });
  });
});
