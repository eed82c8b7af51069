/** The pure planner: every state of the registry → create / upload / skip / conflict, item by item. */
import { describe, expect, it } from 'vitest';
import { isNoop, planPublish } from '../../src/publish/plan.js';
import type { PlanOptions, RemoteState } from '../../src/publish/types.js';
import type { PlatformResource, VersionResource } from '../../src/terraform/api.js';
import type { VerifiedRelease } from '../../src/release/types.js';
import { aStringMatching, anObjectContaining } from '../helpers/matchers.js';

const KEY = 'AAAABBBBCCCCDDDD';
const SUMS = new TextEncoder().encode('sums\n');
const address = { organization: 'acme', namespace: 'acme', name: 'example' };
const defaults: PlanOptions = { createProvider: true, registerKey: true };

function release(): VerifiedRelease {
  const platform = (os: string, arch: string, shasum: string) => ({
    os,
    arch,
    filename: `terraform-provider-example_1.2.3_${os}_${arch}.zip`,
    path: `/r/terraform-provider-example_1.2.3_${os}_${arch}.zip`,
    shasum,
    bytes: 100,
    executable: 'terraform-provider-example_v1.2.3',
    h1: 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
  });
  return {
    dir: '/r',
    name: 'example',
    version: '1.2.3',
    protocols: ['6.0'],
    protocolsSource: 'manifest',
    shasums: { filename: 'terraform-provider-example_1.2.3_SHA256SUMS', path: '/r/s', bytes: SUMS.length },
    shasumsBytes: SUMS,
    signature: {
      filename: 'terraform-provider-example_1.2.3_SHA256SUMS.sig',
      path: '/r/s.sig',
      bytes: 3,
      dearmored: false,
    },
    signatureBytes: new Uint8Array([0x89, 1, 2]),
    platforms: [platform('darwin', 'arm64', 'a'.repeat(64)), platform('linux', 'amd64', 'b'.repeat(64))],
    signer: {
      keyId: KEY,
      fingerprint: `${'0'.repeat(24)}${KEY}`,
      signingKeyId: KEY,
      signingFingerprint: `${'0'.repeat(24)}${KEY}`,
      userId: 'Test',
      algorithm: 'RSA 3072',
      expires: null,
      origin: 'flag',
      originLabel: '--key k.asc',
      armoredKey: '-----BEGIN PGP PUBLIC KEY BLOCK-----',
    },
    warnings: [],
  };
}

function version(attributes: Partial<VersionResource['attributes']> = {}): VersionResource {
  return {
    id: 'provver-1',
    type: 'registry-provider-versions',
    attributes: {
      version: '1.2.3',
      'created-at': '',
      'updated-at': '',
      'key-id': KEY,
      protocols: ['6.0'],
      permissions: { 'can-delete': true, 'can-upload-asset': true },
      'shasums-uploaded': false,
      'shasums-sig-uploaded': false,
      ...attributes,
    },
    relationships: {
      'registry-provider': { data: { id: 'prov-1', type: 'registry-providers' } },
      platforms: { data: [], links: { related: '' } },
    },
    links: {},
  };
}

function platform(
  name: string,
  options: { shasum?: string; filename?: string; uploaded?: boolean } = {},
): PlatformResource {
  const [os = '', arch = ''] = name.split('_');
  return {
    id: `provpltfrm-${name}`,
    type: 'registry-provider-platforms',
    attributes: {
      os,
      arch,
      filename: options.filename ?? `terraform-provider-example_1.2.3_${name}.zip`,
      shasum: options.shasum ?? (name === 'darwin_arm64' ? 'a' : 'b').repeat(64),
      permissions: { 'can-delete': true, 'can-upload-asset': true },
      'provider-binary-uploaded': options.uploaded ?? false,
    },
    relationships: {
      'registry-provider-version': { data: { id: 'provver-1', type: 'registry-provider-versions' } },
    },
    links: {},
  };
}

function remote(state: Partial<RemoteState> = {}): RemoteState {
  return { providerExists: true, keyRegistered: true, platforms: [], ...state };
}

function plan(state: RemoteState, options: PlanOptions = defaults) {
  return planPublish(release(), state, { address, options });
}

function actions(p: ReturnType<typeof plan>): Record<string, string> {
  return {
    provider: p.provider.action,
    key: p.key.action,
    version: p.version.action,
    ...Object.fromEntries(p.files.map((f) => [f.kind, f.action])),
    ...Object.fromEntries(p.platforms.map((x) => [`${x.os}_${x.arch}`, x.action])),
  };
}

describe('planPublish', () => {
  it('creates everything on an empty registry', () => {
    const p = plan(remote({ providerExists: false, keyRegistered: false }));
    expect(actions(p)).toEqual({
      provider: 'create',
      key: 'create',
      version: 'create',
      shasums: 'upload',
      signature: 'upload',
      darwin_arm64: 'create',
      linux_amd64: 'create',
    });
    expect(p.version).toMatchObject({ version: '1.2.3', keyId: KEY, protocols: ['6.0'] });
    expect(p.conflicts).toEqual([]);
    expect(isNoop(p)).toBe(false);
  });

  it('marks an absent provider or key `missing` when creating them is switched off', () => {
    const p = plan(remote({ providerExists: false, keyRegistered: false }), {
      createProvider: false,
      registerKey: false,
    });
    expect([p.provider.action, p.key.action]).toEqual(['missing', 'missing']);
  });

  it('uploads only what the existing version lacks', () => {
    const p = plan(
      remote({
        version: version({ 'shasums-uploaded': true }),
        shasumsBytes: SUMS,
        platforms: [platform('darwin_arm64', { uploaded: true }), platform('linux_amd64')],
      }),
    );
    expect(actions(p)).toMatchObject({
      version: 'skip',
      shasums: 'skip',
      signature: 'upload',
      darwin_arm64: 'skip',
      linux_amd64: 'upload',
    });
  });

  it('skips everything when the registry holds the identical release (a no-op)', () => {
    const p = plan(
      remote({
        version: version({ 'shasums-uploaded': true, 'shasums-sig-uploaded': true }),
        shasumsBytes: SUMS,
        signature: { verifies: true },
        platforms: [
          platform('darwin_arm64', { uploaded: true }),
          platform('linux_amd64', { uploaded: true }),
        ],
      }),
    );
    expect(new Set(Object.values(actions(p)))).toEqual(new Set(['skip']));
    expect(isNoop(p)).toBe(true);
  });

  it('compares key ids without regard to case and protocols as sets', () => {
    const p = plan(remote({ version: version({ 'key-id': KEY.toLowerCase(), protocols: ['6.0', '6.0'] }) }));
    expect(p.conflicts).toEqual([]);
  });

  it.each<[string, Partial<RemoteState>, string, RegExp]>([
    [
      'another key id',
      { version: version({ 'key-id': '1111222233334444' }) },
      'version 1.2.3',
      /key-id 1111222233334444; the release is signed by key AAAABBBBCCCCDDDD/,
    ],
    [
      'other protocols',
      { version: version({ protocols: ['5.0'] }) },
      'version 1.2.3',
      /declares protocols 5.0; the release declares 6.0/,
    ],
    [
      'another SHA256SUMS',
      { version: version({ 'shasums-uploaded': true }), shasumsBytes: new Uint8Array([1]) },
      'terraform-provider-example_1.2.3_SHA256SUMS',
      /another SHA256SUMS \(1 bytes\)/,
    ],
    [
      'a signature that does not verify',
      { version: version({ 'shasums-sig-uploaded': true }), signature: { verifies: false, reason: 'bad' } },
      'terraform-provider-example_1.2.3_SHA256SUMS.sig',
      /does not verify over the release's SHA256SUMS with key AAAABBBBCCCCDDDD \(bad\)/,
    ],
    [
      'a platform with another shasum',
      {
        version: version(),
        platforms: [platform('linux_amd64', { shasum: 'c'.repeat(64), uploaded: true })],
      },
      'linux_amd64',
      /has shasum c{64}/,
    ],
    [
      'a platform with another filename',
      { version: version(), platforms: [platform('linux_amd64', { filename: 'x.zip' })] },
      'linux_amd64',
      /has filename x\.zip/,
    ],
  ])('reports a conflict for %s', (_name, state, subject, message) => {
    const p = plan(remote(state));
    expect(p.conflicts).toEqual([anObjectContaining({ subject, message: aStringMatching(message) })]);
  });

  it('names the platform of a platform-only conflict, so deleting that platform is enough', () => {
    const p = plan(
      remote({ version: version(), platforms: [platform('linux_amd64', { shasum: 'c'.repeat(64) })] }),
    );
    expect(p.conflicts[0]?.platform).toBe('linux_amd64');
    expect(p.platforms.find((x) => x.os === 'linux')?.action).toBe('conflict');
  });

  it('reports remote platforms the release lacks, and never plans to touch them', () => {
    const p = plan(remote({ version: version(), platforms: [platform('freebsd_amd64')] }));
    expect(p.extraPlatforms).toEqual([
      { os: 'freebsd', arch: 'amd64', filename: 'terraform-provider-example_1.2.3_freebsd_amd64.zip' },
    ]);
    expect(p.platforms.map((x) => x.action)).toEqual(['create', 'create']);
    expect(p.conflicts).toEqual([]);
  });
});
