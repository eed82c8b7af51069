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
      providers: [{ pattern: 'app.terraform.io/example-org/*', versions: '~> 1.2, >= 1.2.3' }],
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
    [aliasBomb(), 'its aliases stand for more than the YAML reader allows (an alias bomb?)'],
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
