/** What `--versions`, `--platforms` and the provider arguments of `provider mirror` select, and what they refuse. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { normaliseProtocols } from '../../src/mirror/record.js';
import { parsePlatforms, parseProviders, versionSelector } from '../../src/mirror/select.js';

const LIST = [
  '0.9.0',
  '1.0.0',
  '1.2.0',
  '1.2.9',
  '1.3.0',
  '2.0.0-rc1',
  '2.0.0',
  '2.1.0-beta',
  'latest',
  'v3.0.0',
];

describe('--versions', () => {
  it.each([
    [undefined, ['2.0.0']],
    ['~> 1.2', ['1.2.0', '1.2.9', '1.3.0']],
    ['~> 1.2.0', ['1.2.0', '1.2.9']],
    ['>= 1.0, < 2', ['1.0.0', '1.2.0', '1.2.9', '1.3.0']],
    ['1.2.9', ['1.2.9']],
    ['= 2.0.0-rc1', ['2.0.0-rc1']],
    ['> 1.3.0', ['2.0.0']],
    ['>= 1.2.0, != 1.2.9, <= 1.3.0', ['1.2.0', '1.3.0']],
    ['~> 4.0', []],
  ])('%s selects %j, a pre-release only when named exactly', (constraint, expected) => {
    expect(versionSelector(constraint)(LIST)).toEqual(expected);
  });

  it('refuses what is not a constraint, before any request', () => {
    expect(() => versionSelector('newest')).toThrow(UsageError);
    expect(() => versionSelector('')).toThrow(/--versions/);
  });
});

describe('--platforms and the providers', () => {
  it('reads os_arch pairs (and os/arch), each once, sorted', () => {
    expect(parsePlatforms('linux_amd64, darwin/arm64,linux_amd64')).toEqual([
      { os: 'darwin', arch: 'arm64' },
      { os: 'linux', arch: 'amd64' },
    ]);
    expect(parsePlatforms(undefined)).toBeUndefined();
    expect(() => parsePlatforms('linux')).toThrow(/not an os_arch pair/);
    expect(() => parsePlatforms(' , ')).toThrow(/empty/);
  });

  it('reads <namespace>/<type>, each once; a host or a path is refused', () => {
    expect(parseProviders(['hashicorp/random', 'HashiCorp/Random', 'acme/tls'])).toEqual([
      { namespace: 'hashicorp', type: 'random' },
      { namespace: 'acme', type: 'tls' },
    ]);
    expect(() => parseProviders([])).toThrow(UsageError);
    expect(() => parseProviders(['registry.terraform.io/hashicorp/random'])).toThrow(
      /not a provider address/,
    );
    expect(() => parseProviders(['../etc'])).toThrow(/not a provider address/);
  });
});

describe('protocols', () => {
  it('are normalised to what the private registry accepts', () => {
    expect(normaliseProtocols(['5.1', '6.0', '5.0'], 'x')).toEqual({
      protocols: ['5.0', '6.0'],
      dropped: [],
    });
    expect(normaliseProtocols(['4', '7.0'], 'x')).toEqual({ protocols: ['4.0'], dropped: ['7.0'] });
    expect(() => normaliseProtocols(['7.0'], 'acme/x 1.0.0')).toThrow(
      /none of which the private registry accepts/,
    );
  });
});
