import { describe, expect, it } from 'vitest';
import { UsageError, VerificationError } from '../../src/errors.js';
import { chooseProtocols, parseManifest, parseProtocolsFlag } from '../../src/release/protocols.js';

const M = 'x_manifest.json';
const manifest = (text: string): string[] => parseManifest(new TextEncoder().encode(text), M);

describe('parseManifest', () => {
  it('reads goreleaser manifests', () => {
    expect(manifest('{"version":1,"metadata":{"protocol_versions":["6.0"]}}\n')).toEqual(['6.0']);
    expect(manifest('{"version":1,"metadata":{"protocol_versions":["6.0","5.0","5.0"]}}')).toEqual([
      '5.0',
      '6.0',
    ]);
  });

  it.each([
    ['{"version":1,', 'not JSON'],
    ['[]', 'expected a JSON object'],
    ['{"version":2,"metadata":{"protocol_versions":["6.0"]}}', '"version" must be 1'],
    ['{"version":1}', '"metadata" must be an object'],
    ['{"version":1,"metadata":{"protocol_versions":[]}}', 'non-empty list'],
    ['{"version":1,"metadata":{"protocol_versions":[6]}}', 'non-empty list'],
    ['{"version":1,"metadata":{"protocol_versions":["7.0"]}}', '"7.0" is not one of 4.0, 5.0, 6.0'],
  ])('%s → VerificationError naming the file (%s)', (text, words) => {
    let error: unknown;
    try {
      manifest(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VerificationError);
    expect((error as Error).message).toContain(M);
    expect((error as Error).message).toContain(words);
  });
});

// Found by test/reliability (bad input corpus, "a 10 MB protocol version in the manifest"): the message quoted
// the whole value.
it('quotes at most 120 characters of a huge manifest value', () => {
  const error = (() => {
    try {
      manifest(`{"version":1,"metadata":{"protocol_versions":["${'9'.repeat(1_000_000)}"]}}`);
    } catch (e) {
      return e as VerificationError;
    }
    throw new Error('expected a VerificationError');
  })();
  expect(error.message).toContain(
    `protocol version "${'9'.repeat(120)}… (1000000 characters)" is not one of`,
  );
  expect(JSON.stringify(error.details).length).toBeLessThan(400);
});

describe('protocols', () => {
  it('parses --protocols', () => {
    expect(parseProtocolsFlag('6.0, 5.0')).toEqual(['5.0', '6.0']);
    expect(() => parseProtocolsFlag('6')).toThrow(UsageError);
    expect(() => parseProtocolsFlag(' , ')).toThrow(/--protocols is empty/);
  });

  it('prefers the flag, then the configuration file, then the manifest, and warns on disagreement', () => {
    expect(chooseProtocols({ manifest: ['6.0'] })).toEqual({
      protocols: ['6.0'],
      source: 'manifest',
      warnings: [],
    });
    expect(chooseProtocols({ flag: ['6.0'], manifest: ['6.0'] })).toEqual({
      protocols: ['6.0'],
      source: 'flag',
      warnings: [],
    });
    const config = chooseProtocols({ config: ['5.0'], manifest: ['6.0'], manifestFile: M });
    expect(config.source).toBe('config');
    expect(config.warnings[0]).toContain(`but ${M} says 6.0`);
  });

  it('is a usage error when nothing says', () => {
    expect(() => chooseProtocols({})).toThrow(UsageError);
    expect(() => chooseProtocols({})).toThrow(/plugin protocol versions/);
  });
});
