/**
 * Deletes cascade (registry-api.md §1.4 "deleted along with its corresponding platforms", §4.1 "deletes the
 * provider and all its versions"; PRODUCT.md §6 "Deleting a version deletes its platforms and their files"):
 * the resources answer 404 afterwards, old download links 404, and the object files are gone from disk.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import {
  clients,
  download,
  emulatorPerTest,
  expectErrorDocument,
  expectStatus,
  linkOf,
  loadRelease,
  providerPaths,
  publishFixture,
  upload,
} from '../helpers/emulator/index.js';
import { arr, str } from '../helpers/json.js';

const start = emulatorPerTest();
const release = loadRelease();
const PAIRS = ['linux_amd64', 'darwin_arm64'];

function objectFiles(emulator: Emulator): string[] {
  return readdirSync(join(emulator.dataDir, 'objects')).sort();
}

/** Publishes a complete version and returns every download link of it (version files and binaries). */
async function completeVersion(emulator: Emulator, version: string, createProvider = true) {
  await publishFixture(emulator, {
    version,
    platforms: PAIRS,
    uploads: ['sums', 'sig', ...PAIRS],
    createProvider,
    addKey: createProvider,
  });
  const { owner } = clients(emulator);
  const paths = providerPaths(emulator.organization, release.name);
  const doc = (await owner.get(paths.version(version))).json;
  const links = [linkOf(doc, 'shasums-download'), linkOf(doc, 'shasums-sig-download')];
  for (const pair of PAIRS) {
    const [os = '', arch = ''] = pair.split('_');
    links.push(linkOf((await owner.get(paths.platform(version, os, arch))).json, 'provider-binary-download'));
  }
  for (const link of links) expectStatus(await download(link), 200);
  return { links, paths };
}

describe('deleting a version', () => {
  it('removes its platforms, their files on disk, and its download links answer 404', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    const { links, paths } = await completeVersion(emulator, release.version);
    expect(objectFiles(emulator)).toHaveLength(2 + PAIRS.length);

    expectStatus(await owner.delete(paths.version(release.version)), 204);

    expectErrorDocument(await owner.get(paths.version(release.version)), 404);
    expectErrorDocument(await owner.get(paths.platforms(release.version)), 404);
    for (const pair of PAIRS) {
      const [os = '', arch = ''] = pair.split('_');
      expectErrorDocument(await owner.get(paths.platform(release.version, os, arch)), 404);
    }
    for (const link of links) expectErrorDocument(await download(link), 404);
    expect(objectFiles(emulator)).toEqual([]);
    expect(arr((await owner.get(paths.versions)).json, 'data')).toEqual([]);
  });

  it('leaves the other versions of the provider, their files and links alone', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    const kept = await completeVersion(emulator, '1.0.0');
    const filesOfKept = objectFiles(emulator);
    await completeVersion(emulator, release.version, false);

    expectStatus(await owner.delete(kept.paths.version(release.version)), 204);

    expect(objectFiles(emulator)).toEqual(filesOfKept);
    for (const link of kept.links) expectStatus(await download(link), 200);
    const versions = arr((await owner.get(kept.paths.versions)).json, 'data');
    expect(versions.map((v) => str(v, 'attributes.version'))).toEqual(['1.0.0']);
  });

  it('makes its upload links answer 404 too (the object is gone)', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    const published = await publishFixture(emulator, { platforms: ['linux_amd64'] });
    const paths = providerPaths(emulator.organization, release.name);
    expectStatus(await owner.delete(paths.version(release.version)), 204);
    expectErrorDocument(await upload(linkOf(published.version, 'shasums-upload'), release.sums), 404);
    const binaryLink = linkOf(published.platforms.get('linux_amd64'), 'provider-binary-upload');
    expectErrorDocument(await upload(binaryLink, release.zip('linux', 'amd64').bytes), 404);
    expect(objectFiles(emulator)).toEqual([]);
  });

  it('the same version can be created again afterwards, with fresh files (the munnep README fix)', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    const { paths } = await completeVersion(emulator, release.version);
    expectStatus(await owner.delete(paths.version(release.version)), 204);
    await completeVersion(emulator, release.version, false);
    expect(objectFiles(emulator)).toHaveLength(2 + PAIRS.length);
  });
});

describe('deleting a platform', () => {
  it('removes its binary only', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    const { links, paths } = await completeVersion(emulator, release.version);
    expectStatus(await owner.delete(paths.platform(release.version, 'linux', 'amd64')), 204);
    expect(objectFiles(emulator)).toHaveLength(2 + PAIRS.length - 1);
    const [sums, sig, linuxBinary, darwinBinary] = links;
    expectErrorDocument(await download(linuxBinary!), 404);
    for (const link of [sums!, sig!, darwinBinary!]) expectStatus(await download(link), 200);
  });
});

describe('deleting a provider', () => {
  it('cascades to every version, platform and file', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    const first = await completeVersion(emulator, '1.0.0');
    const second = await completeVersion(emulator, release.version, false);
    expect(objectFiles(emulator)).toHaveLength(2 * (2 + PAIRS.length));

    expectStatus(await owner.delete(first.paths.provider), 204);

    expectErrorDocument(await owner.get(first.paths.provider), 404);
    expectErrorDocument(await owner.get(first.paths.versions), 404);
    expectErrorDocument(await owner.get(first.paths.version('1.0.0')), 404);
    for (const link of [...first.links, ...second.links]) expectErrorDocument(await download(link), 404);
    expect(objectFiles(emulator)).toEqual([]);

    // Re-creating the provider starts empty: nothing of the old versions comes back.
    const recreated = await owner.post(first.paths.providers, {
      data: {
        type: 'registry-providers',
        attributes: { name: release.name, namespace: emulator.organization, 'registry-name': 'private' },
      },
    });
    expectStatus(recreated, 201);
    expect(arr((await owner.get(first.paths.versions)).json, 'data')).toEqual([]);
  });
});
