/**
 * State survives a restart with the same data folder (PRODUCT.md §6): the same tokens, the same documents, the
 * same bytes downloadable, and links issued before the restart still valid.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import {
  clients,
  download,
  expectStatus,
  expectSuccess,
  gpgKeyPaths,
  linkOf,
  loadRelease,
  manualClock,
  providerPaths,
  publicKey,
  publishFixture,
  upload,
} from '../helpers/emulator/index.js';
import { arr, at, str } from '../helpers/json.js';
import { tempDir } from '../helpers/tmp.js';

const release = loadRelease();
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startOn(dataDir: string, now: () => number): Promise<Emulator> {
  const emulator = await startEmulator({ dataDir, now });
  cleanups.push(() => emulator.close());
  return emulator;
}

/** Everything a client can read, with the emulator's own base URL replaced so two runs compare equal. */
async function readEverything(emulator: Emulator): Promise<string> {
  const { owner } = clients(emulator);
  const org = emulator.organization;
  const paths = providerPaths(org, release.name);
  const reads = [
    paths.providers,
    paths.provider,
    paths.versions,
    paths.version(release.version),
    paths.platforms(release.version),
    paths.platform(release.version, 'linux', 'amd64'),
    paths.platform(release.version, 'darwin', 'arm64'),
    gpgKeyPaths().list(org),
    gpgKeyPaths().key(org, release.keyId),
  ];
  const documents: unknown[] = [];
  for (const path of reads) {
    const reply = await owner.get(path);
    expectStatus(reply, 200);
    documents.push(reply.json);
  }
  return JSON.stringify(documents).split(emulator.url).join('<base>');
}

describe('restart with the same dataDir', () => {
  it('keeps tokens, documents and bytes; links issued before the restart still work', async () => {
    const clock = manualClock();
    const dataDir = tempDir('data');
    const first = await startOn(dataDir, clock.now);
    const published = await publishFixture(first, {
      platforms: ['linux_amd64', 'darwin_arm64'],
      uploads: ['sums', 'sig', 'linux_amd64'],
    });
    const before = await readEverything(first);
    const version = (
      await clients(first).owner.get(providerPaths(first.organization, release.name).version(release.version))
    ).json;
    const oldSumsLink = linkOf(version, 'shasums-download');
    const oldDarwinUpload = linkOf(published.platforms.get('darwin_arm64'), 'provider-binary-upload');
    const tokens = [first.ownerToken, first.memberToken, first.outsiderToken];
    await first.close();

    const second = await startOn(dataDir, clock.now);
    expect(second.dataDir).toBe(dataDir);
    expect(second.organization).toBe(first.organization);
    expect([second.ownerToken, second.memberToken, second.outsiderToken]).toEqual(tokens);
    expect(await readEverything(second)).toBe(before);

    // Same bytes through the links the restarted emulator hands out …
    const { owner } = clients(second);
    const paths = providerPaths(second.organization, release.name);
    const again = (await owner.get(paths.version(release.version))).json;
    expect((await download(linkOf(again, 'shasums-download'))).bytes.equals(release.sums)).toBe(true);
    expect((await download(linkOf(again, 'shasums-sig-download'))).bytes.equals(release.sig)).toBe(true);
    const linux = (await owner.get(paths.platform(release.version, 'linux', 'amd64'))).json;
    const zip = release.zip('linux', 'amd64');
    expect((await download(linkOf(linux, 'provider-binary-download'))).bytes.equals(zip.bytes)).toBe(true);

    // … and through the links issued before the restart (same signing key, new port).
    const moved = (link: string) => link.replace(first.url, second.url);
    expect((await download(moved(oldSumsLink))).bytes.equals(release.sums)).toBe(true);
    const darwin = release.zip('darwin', 'arm64');
    expectSuccess(await upload(moved(oldDarwinUpload), darwin.bytes));
    const darwinDoc = (await owner.get(paths.platform(release.version, 'darwin', 'arm64'))).json;
    expect(at(darwinDoc, 'data.attributes.provider-binary-uploaded')).toBe(true);
  });

  it('keeps going: ids continue (GPG key ids never repeat) and writes after the restart persist too', async () => {
    const clock = manualClock();
    const dataDir = tempDir('data');
    const first = await startOn(dataDir, clock.now);
    await publishFixture(first);
    const firstKeyId = str(
      (await clients(first).owner.get(gpgKeyPaths().key(first.organization, release.keyId))).json,
      'data.id',
    );
    await first.close();

    const second = await startOn(dataDir, clock.now);
    const { owner } = clients(second);
    const added = await owner.post(gpgKeyPaths().keys, {
      data: {
        type: 'gpg-keys',
        attributes: { namespace: second.organization, 'ascii-armor': publicKey('other') },
      },
    });
    expectStatus(added, 201);
    expect(str(added.json, 'data.id')).not.toBe(firstKeyId);
    await second.close();

    const third = await startOn(dataDir, clock.now);
    const list = await clients(third).owner.get(gpgKeyPaths().list(third.organization));
    expect(
      arr(list.json, 'data')
        .map((k) => str(k, 'id'))
        .sort(),
    ).toEqual([firstKeyId, str(added.json, 'data.id')].sort());
  });

  it('a fresh dataDir gets fresh tokens', async () => {
    const a = await startOn(tempDir('data'), Date.now);
    const b = await startOn(tempDir('data'), Date.now);
    expect(a.ownerToken).not.toBe(b.ownerToken);
    expect(a.memberToken).not.toBe(b.memberToken);
    expect(new Set([a.ownerToken, a.memberToken, a.outsiderToken]).size).toBe(3);
  });
});
