/** Seeding an emulator through its API, as a publisher would: (part of) the fixture release. */
import type { Emulator } from '../../../src/emulator/server.js';
import { addGpgKey } from './gpgKeys.js';
import { clients, expectSuccess } from './http.js';
import { createPlatform } from './platforms.js';
import { createProvider } from './providers.js';
import { loadRelease } from './release.js';
import { linkOf, upload } from './uploads.js';
import { createVersion } from './versions.js';

/** What `publishFixture` did: the version document at creation and each platform document at creation. */
export interface Published {
  version: unknown;
  platforms: Map<string, unknown>;
}

/**
 * Publishes (part of) the fixture release through the API, as a publisher would: provider, signer key,
 * version, then each platform; uploads only what `uploads` names (`sums`, `sig`, `os_arch`).
 */
export async function publishFixture(
  emulator: Emulator,
  options: {
    name?: string;
    version?: string;
    platforms?: string[];
    uploads?: string[];
    createProvider?: boolean;
    addKey?: boolean;
  } = {},
): Promise<Published> {
  const release = loadRelease();
  const { owner } = clients(emulator);
  const org = emulator.organization;
  const name = options.name ?? release.name;
  const version = options.version ?? release.version;
  if (options.createProvider !== false) await createProvider(owner, org, name);
  if (options.addKey !== false) await addGpgKey(owner, org, 'signer');
  const versionDoc = await createVersion(owner, org, name, {
    version,
    'key-id': release.keyId,
    protocols: release.protocols,
  });
  const uploads = new Set(options.uploads ?? []);
  if (uploads.has('sums')) expectSuccess(await upload(linkOf(versionDoc, 'shasums-upload'), release.sums));
  if (uploads.has('sig')) expectSuccess(await upload(linkOf(versionDoc, 'shasums-sig-upload'), release.sig));
  const platforms = new Map<string, unknown>();
  for (const pair of options.platforms ?? []) {
    const [os = '', arch = ''] = pair.split('_');
    const zip = release.zip(os, arch);
    const doc = await createPlatform(owner, org, name, version, zip);
    platforms.set(pair, doc);
    if (uploads.has(pair)) expectSuccess(await upload(linkOf(doc, 'provider-binary-upload'), zip.bytes));
  }
  return { version: versionDoc, platforms };
}
