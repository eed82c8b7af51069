/**
 * A write either lands on disk and in memory, or in neither. With the state file impossible to write (an
 * injected ENOSPC, as a full data folder gives: the temporary file is created, then writing fails), every
 * mutating route answers 500 and changes nothing: the next create is not "already taken", a failed delete
 * keeps the files, no `.tmp` is left, and a restart finds what the clients were told. An upload link that
 * received its file is spent: a second PUT is refused (403) and the stored bytes stay.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import {
  clients,
  download,
  expectErrorDocument,
  expectStatus,
  expectSuccess,
  gpgKeyPaths,
  gpgKeyPayload,
  keyIdOf,
  linkOf,
  loadRelease,
  platformPayload,
  providerPaths,
  providerPayload,
  publicKey,
  publishFixture,
  upload,
  versionPayload,
} from '../helpers/emulator/index.js';
import { rawExchange } from '../helpers/raw-http.js';
import { tempDir } from '../helpers/tmp.js';

/** Data folders whose state file cannot be written at the moment. */
const full = new Set<string>();

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const writeFileSync: typeof real.writeFileSync = (file, data, options) => {
    const path = String(file);
    if ([...full].some((dir) => path.startsWith(dir))) {
      // As on a full disk: the file is created, its bytes do not fit.
      real.writeFileSync(file, '', options);
      throw Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC' });
    }
    real.writeFileSync(file, data, options);
  };
  return { ...real, writeFileSync, default: { ...real, writeFileSync } };
});

const release = loadRelease();
let dir: string;
let emulator: Emulator;
let errors: unknown[];

async function startOn(dataDir: string): Promise<Emulator> {
  errors = [];
  return startEmulator({ dataDir, onError: (error) => errors.push(error) });
}

beforeEach(async () => {
  dir = tempDir();
  emulator = await startOn(dir);
});
afterEach(async () => {
  full.clear();
  await emulator.close();
});

/** What the emulator holds, in memory and on disk. */
function snapshot(): { memory: string; disk: string; files: string[] } {
  return {
    memory: JSON.stringify(emulator.store.data),
    disk: fs.readFileSync(join(dir, 'state.json'), 'utf8'),
    files: fs.readdirSync(dir, { recursive: true }).map(String).sort(),
  };
}

const paths = () => providerPaths(emulator.organization, release.name);

describe('a write that cannot be saved', () => {
  it('a version create answers 500, is not kept, leaves no .tmp; the next create succeeds and survives a restart', async () => {
    const { owner } = clients(emulator);
    await publishFixture(emulator, { platforms: [], version: '0.0.1' });
    const before = snapshot();
    full.add(dir);
    const body = versionPayload({ version: '1.2.3', 'key-id': release.keyId, protocols: ['6.0'] });
    const failed = await owner.post(paths().versions, body);
    expectStatus(failed, 500);
    expect(snapshot()).toEqual(before);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expectStatus(await owner.get(paths().version('1.2.3')), 404);

    full.clear();
    expectStatus(await owner.post(paths().versions, body), 201);
    await emulator.close();
    emulator = await startOn(dir);
    expectStatus(await clients(emulator).owner.get(paths().version('1.2.3')), 200);
  });

  it('every mutating route: 500, nothing changed in memory or on disk, the files of a failed delete kept', async () => {
    const { owner } = clients(emulator);
    await publishFixture(emulator, { platforms: ['linux_amd64'], uploads: ['sums', 'linux_amd64'] });
    const zip = release.zip('darwin', 'arm64');
    const version = await owner.get(paths().version(release.version));
    const sigLink = linkOf(version.json, 'shasums-sig-upload');
    const before = snapshot();
    full.add(dir);
    const attempts: [string, () => Promise<{ status: number }>][] = [
      [
        'create a provider',
        () =>
          owner.post(
            providerPaths(emulator.organization, 'other').providers,
            providerPayload(emulator.organization, 'other'),
          ),
      ],
      [
        'create a version',
        () => owner.post(paths().versions, versionPayload({ version: '2.0.0', 'key-id': release.keyId })),
      ],
      [
        'create a platform',
        () =>
          owner.post(
            paths().platforms(release.version),
            platformPayload({ os: zip.os, arch: zip.arch, shasum: zip.shasum, filename: zip.filename }),
          ),
      ],
      ['upload a file', () => upload(sigLink, release.sig)],
      [
        'add a GPG key',
        () => owner.post(gpgKeyPaths().keys, gpgKeyPayload(emulator.organization, publicKey('other'))),
      ],
      ['delete a GPG key', () => owner.delete(gpgKeyPaths().key(emulator.organization, keyIdOf('signer')))],
      ['delete a platform', () => owner.delete(paths().platform(release.version, 'linux', 'amd64'))],
      ['delete a version', () => owner.delete(paths().version(release.version))],
      ['delete a provider', () => owner.delete(paths().provider)],
    ];
    for (const [what, attempt] of attempts) {
      const reply = await attempt();
      expect(reply.status, what).toBe(500);
      expect(snapshot(), what).toEqual(before);
    }
    expect(errors.length).toBe(attempts.length);

    full.clear();
    // Nothing was lost: what was there still downloads, and the sig link was not spent by the failed upload.
    const again = await owner.get(paths().version(release.version));
    expect((await download(linkOf(again.json, 'shasums-download'))).bytes.equals(release.sums)).toBe(true);
    expectSuccess(await upload(sigLink, release.sig));
  });
});

describe('an upload link is single-use', () => {
  it('a second PUT to a link that received its file is refused with 403 and the stored bytes stay', async () => {
    const published = await publishFixture(emulator);
    const link = linkOf(published.version, 'shasums-upload');
    expectSuccess(await upload(link, release.sums));
    const second = await upload(link, Buffer.from('other bytes'));
    expectStatus(second, 403);
    expectErrorDocument(second, 403, { detail: /already been used/ });
    const version = await clients(emulator).owner.get(paths().version(release.version));
    expect((await download(linkOf(version.json, 'shasums-download'))).bytes.equals(release.sums)).toBe(true);
  });

  it('an upload that failed does not spend its link: the same link takes the file afterwards', async () => {
    const published = await publishFixture(emulator);
    const link = linkOf(published.version, 'shasums-upload');
    // The client announces more bytes than it sends, then goes away: the upload fails half-way.
    const { pathname } = new URL(link);
    const head = `PUT ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${release.sums.length + 10}\r\n\r\n`;
    const cut = await rawExchange(emulator.url, Buffer.concat([Buffer.from(head), release.sums]));
    expect(cut.status).not.toBe(200);
    // The client may see its connection end before the emulator has removed the partial file: wait for it.
    await vi.waitFor(() => expect(fs.readdirSync(join(dir, 'objects'))).toEqual([]), { timeout: 10_000 });
    expectSuccess(await upload(link, release.sums));
  });
});
