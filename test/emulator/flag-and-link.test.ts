/**
 * A version's document says one thing about each file: its `*-uploaded` flag and its link (download once it
 * is there, upload while it is missing) agree, even when the flag's delay runs out while the document is being
 * written (the clock read between the two). A CI run caught the emulator answering `shasums-sig-uploaded: true`
 * with no download link, which `provider publish`'s check then reported as a registry serving no link.
 */
import { describe, expect, it } from 'vitest';
import type { App, Principal } from '../../src/emulator/app.js';
import { platformResource, versionResource } from '../../src/emulator/documents.js';
import { LinkSigner } from '../../src/emulator/links.js';
import type {
  StoredObject,
  StoredPlatform,
  StoredProvider,
  StoredVersion,
} from '../../src/emulator/state.js';

const owner = { token: 't', organization: 'example-org', role: 'owner' } as Principal;
const provider: StoredProvider = {
  id: 'prov-1',
  organization: 'example-org',
  registryName: 'private',
  namespace: 'example-org',
  name: 'example',
  createdAt: 0,
  updatedAt: 0,
};
const object = (key: string, flagAt: number): StoredObject => ({ key, uploadedAt: 0, flagAt, bytes: 1 });

/** An app whose clock moves on by 1 ms at every reading. */
function ticking(platforms: StoredPlatform[] = []): App {
  let now = 0;
  return {
    store: { data: { platforms } },
    links: new LinkSigner('k'.repeat(64), 60_000),
    settings: {},
    now: () => now++,
    baseUrl: () => 'http://127.0.0.1:1',
  } as unknown as App;
}

describe('flags and links in one document', () => {
  it.each([0, 1, 2, 3, 4, 5, 6])('a version whose signature flag flips at %d ms', (flagAt) => {
    const version: StoredVersion = {
      id: 'provver-1',
      providerId: provider.id,
      version: '1.2.3',
      keyId: 'ABCDEF0123456789',
      protocols: ['6.0'],
      createdAt: 0,
      updatedAt: 0,
      shasums: object('sums', flagAt),
      shasumsSig: object('sig', flagAt),
    };
    const doc = versionResource(ticking(), provider, version, owner);
    const links = doc.links as Record<string, string | undefined>;
    expect(links['shasums-download'] !== undefined).toBe(doc.attributes['shasums-uploaded']);
    expect(links['shasums-upload'] !== undefined).toBe(!doc.attributes['shasums-uploaded']);
    expect(links['shasums-sig-download'] !== undefined).toBe(doc.attributes['shasums-sig-uploaded']);
    expect(links['shasums-sig-upload'] !== undefined).toBe(!doc.attributes['shasums-sig-uploaded']);
  });

  it.each([0, 1, 2, 3])('a platform whose binary flag flips at %d ms', (flagAt) => {
    const platform = {
      id: 'provpltfrm-1',
      versionId: 'provver-1',
      os: 'linux',
      arch: 'amd64',
      filename: 'f.zip',
      shasum: 'a'.repeat(64),
      binary: object('bin', flagAt),
    } as StoredPlatform;
    const doc = platformResource(ticking([platform]), platform, owner);
    const links = doc.links as Record<string, string | undefined>;
    expect(links['provider-binary-download'] !== undefined).toBe(doc.attributes['provider-binary-uploaded']);
  });
});
