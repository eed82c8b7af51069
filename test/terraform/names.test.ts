/**
 * Terraform's vocabulary (src/terraform/names.ts): platform names read and written back, Go's platform list, the
 * protocol versions, byte counts for people, and the JSON:API media type written once in src/ (every server and
 * client imports it instead of spelling it again).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  JSONAPI,
  PROTOCOL_VERSIONS,
  commonPlatformNames,
  comparePlatforms,
  formatBytes,
  isKnownOs,
  isKnownPlatform,
  isProtocolVersion,
  isUnusualPlatform,
  knownPlatformNames,
  normalizeProtocols,
  parsePlatformName,
  platformName,
} from '../../src/terraform/names.js';
import { REPO_ROOT } from '../helpers/paths.js';

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('platform names', () => {
  it.each(['linux_amd64', 'darwin_arm64', 'windows_386', 'freebsd_arm', 'linux_mips64le', 'wasip1_wasm'])(
    '%s: read, then written back the same',
    (name) => {
      const key = parsePlatformName(name);
      expect(key).toBeDefined();
      expect(platformName(key!)).toBe(name);
    },
  );

  it('reads os/arch and surrounding blanks too, and writes os_arch', () => {
    expect(parsePlatformName(' darwin/arm64 ')).toEqual({ os: 'darwin', arch: 'arm64' });
    expect(platformName({ os: 'darwin', arch: 'arm64' })).toBe('darwin_arm64');
  });

  it('orders platforms by os, then arch, by code units whatever the locale', () => {
    const names = ['windows_amd64', 'linux_arm64', 'darwin_arm64', 'linux_386', 'linux_amd64', 'linux_arm'];
    const sorted = names
      .map((n) => parsePlatformName(n)!)
      .sort(comparePlatforms)
      .map(platformName);
    expect(sorted).toEqual([
      'darwin_arm64',
      'linux_386',
      'linux_amd64',
      'linux_arm',
      'linux_arm64',
      'windows_amd64',
    ]);
    // Upper case before lower case, as code units are (a locale's collation puts them together).
    expect(
      [
        { os: 'b', arch: 'x' },
        { os: 'B', arch: 'x' },
        { os: 'a', arch: 'x' },
      ].sort(comparePlatforms),
    ).toEqual([
      { os: 'B', arch: 'x' },
      { os: 'a', arch: 'x' },
      { os: 'b', arch: 'x' },
    ]);
    expect(comparePlatforms({ os: 'linux', arch: 'arm' }, { os: 'linux', arch: 'arm' })).toBe(0);
  });

  it.each(['linux', 'linux_', '_amd64', 'linux_amd64_v1', 'Linux_amd64', 'linux-amd64', 'linux amd64', ''])(
    '%j is not a platform name',
    (text) => {
      expect(parsePlatformName(text)).toBeUndefined();
    },
  );

  it("Go's list: known, unusual and unknown pairs; unknown operating systems", () => {
    expect(isKnownPlatform('linux', 'amd64')).toBe(true);
    expect(isUnusualPlatform('linux', 'amd64')).toBe(false);
    expect(isKnownPlatform('plan9', 'arm')).toBe(true);
    expect(isUnusualPlatform('plan9', 'arm')).toBe(true);
    expect(isKnownPlatform('darwin', '386')).toBe(false);
    expect(isUnusualPlatform('darwin', '386')).toBe(false);
    expect(isKnownOs('darwin')).toBe(true);
    expect(isKnownOs('beos')).toBe(false);
  });

  it("lists Go's pairs and the recommended ones as os_arch names, in Go's order (shell completion offers them)", () => {
    const known = knownPlatformNames();
    expect(known).toHaveLength(49);
    expect(known.slice(0, 3)).toEqual(['aix_ppc64', 'android_386', 'android_amd64']);
    expect(commonPlatformNames()).toEqual([
      'darwin_amd64',
      'darwin_arm64',
      'freebsd_386',
      'freebsd_amd64',
      'freebsd_arm',
      'freebsd_arm64',
      'linux_386',
      'linux_amd64',
      'linux_arm',
      'linux_arm64',
      'windows_386',
      'windows_amd64',
      'windows_arm64',
    ]);
    for (const name of known) {
      const { os, arch } = parsePlatformName(name)!;
      expect(isKnownPlatform(os, arch)).toBe(true);
      expect(commonPlatformNames().includes(name)).toBe(!isUnusualPlatform(os, arch));
    }
  });
});

describe('protocol versions', () => {
  it('are 4.0, 5.0 and 6.0, and nothing else', () => {
    expect([...PROTOCOL_VERSIONS]).toEqual(['4.0', '5.0', '6.0']);
    for (const version of PROTOCOL_VERSIONS) expect(isProtocolVersion(version)).toBe(true);
    for (const text of ['6', '6.1', '3.0', ' 6.0', '']) expect(isProtocolVersion(text)).toBe(false);
  });

  it('a list is kept each once, in order', () => {
    expect(normalizeProtocols(['6.0', '5.0', '6.0'])).toEqual(['5.0', '6.0']);
    expect(normalizeProtocols([])).toEqual([]);
  });
});

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [2253, '2.2 KiB'],
    [1024 * 1024 - 1, '1024.0 KiB'],
    [256 * 1024 * 1024, '256.0 MiB'],
    [3 * 1024 ** 3, '3.0 GiB'],
    [5 * 1024 ** 4, '5.0 TiB'],
    [2048 * 1024 ** 4, '2048.0 TiB'],
  ])('%d bytes: %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});

describe('the JSON:API media type', () => {
  it('is application/vnd.api+json', () => {
    expect(JSONAPI).toBe('application/vnd.api+json');
  });

  it('is a string literal in src/ only in src/terraform/names.ts (a comment may name it)', () => {
    const literal = /['"`]application\/vnd\.api\+json['"`]/;
    const spelled = sources(join(REPO_ROOT, 'src'))
      .filter((file) => literal.test(readFileSync(file, 'utf8')))
      .map((file) => relative(REPO_ROOT, file));
    expect(spelled).toEqual(['src/terraform/names.ts']);
  });
});
