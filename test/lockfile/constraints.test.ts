/**
 * `--constraints` rewritten into the canonical form Terraform requires in a lock file. The expected strings are
 * Terraform's own test vectors: hashicorp/terraform: internal/getproviders/types_test.go,
 * `TestVersionConstraintsString`.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { canonicalConstraints } from '../../src/lockfile/constraints.js';

describe('canonicalConstraints', () => {
  it.each([
    ['1.2.3', '1.2.3'],
    ['1.2.3-beta', '1.2.3-beta'],
    ['1.2.3+foo.bar', '1.2.3+foo.bar'],
    ['1.2.3-beta+foo.bar', '1.2.3-beta+foo.bar'],
    ['>= 3', '>= 3.0.0'],
    ['~> 3', '~> 3.0'],
    ['~> 3.0', '~> 3.0'],
    ['~> 3.0.0', '~> 3.0.0'],
    ['> 1.0.0, < 1.0.0, >= 1.0.0, <= 1.0.0, != 1.0.0', '> 1.0.0, >= 1.0.0, <= 1.0.0, < 1.0.0, != 1.0.0'],
    ['>= 3.0, < 4.0', '>= 3.0.0, < 4.0.0'],
    ['>= 1.2.3, 1.2.3, ~> 1.2, 1.2.3', '~> 1.2, >= 1.2.3, 1.2.3'],
    ['>= 2.68, >= 2.68.0', '>= 2.68.0'],
    [
      '< 1.2.3, <= 1.2.3, != 1.2.3, 1.2.3+local.2, 1.2.3+local.1, = 1.2.4, = 1.2.3, > 2, > 1.2.3, >= 1.2.3, ~> 1.2.3, ~> 1.2',
      '~> 1.2, > 1.2.3, >= 1.2.3, 1.2.3, ~> 1.2.3, <= 1.2.3, < 1.2.3, != 1.2.3, 1.2.3+local.1, 1.2.3+local.2, 1.2.4, > 2.0.0',
    ],
    ['~> 1.2, >= 1.2, 1.2.4', '>= 1.2.0, ~> 1.2, 1.2.4'],
    ['>= 2, >= 1.2, < 1.3', '>= 1.2.0, < 1.3.0, >= 2.0.0'],
    // Spacing as people type it in required_providers.
    ['~>1.2', '~> 1.2'],
    ['  >=1.0,<2  ', '>= 1.0.0, < 2.0.0'],
  ])('%s → %s', (input, canonical) => {
    expect(canonicalConstraints(input)).toBe(canonical);
  });

  it.each([[''], ['latest'], ['>= v1.2'], ['1.2.3.4'], ['>= 1.2,'], ['=> 1.2']])(
    '%j is a usage error naming the flag',
    (input) => {
      expect(() => canonicalConstraints(input)).toThrow(UsageError);
      expect(() => canonicalConstraints(input)).toThrow(/^--constraints .* is not a version constraint/);
    },
  );
});
