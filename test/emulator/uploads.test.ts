/**
 * Archivist links (registry-api.md §3, PRODUCT.md §6): a PUT of the bytes to the upload link, without a token,
 * flips the matching flag (after `flagDelayMs` when set); the download link serves exactly those bytes; a forged,
 * altered or expired link, or the wrong method on a link, is refused with 403.
 */
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  call,
  clients,
  download,
  emulatorPerTest,
  expectErrorDocument,
  expectStatus,
  expectSuccess,
  linkOf,
  loadRelease,
  loggedRequest,
  manualClock,
  providerPaths,
  publishFixture,
  upload,
} from '../helpers/emulator/index.js';
import { obj, str } from '../helpers/json.js';

const start = emulatorPerTest();
const release = loadRelease();

function versionPath(org: string): string {
  return providerPaths(org, release.name).version(release.version);
}

function platformPath(org: string, os = 'linux', arch = 'amd64'): string {
  return providerPaths(org, release.name).platform(release.version, os, arch);
}

/** Replaces one character of `text` at `index` with another one of the same alphabet. */
function alter(text: string, index: number): string {
  const i = index < 0 ? text.length + index : index;
  const c = text[i];
  return `${text.slice(0, i)}${c === 'A' ? 'B' : 'A'}${text.slice(i + 1)}`;
}

describe('uploading', () => {
  it('a PUT without a token flips the flag; the request log confirms no Authorization header was sent', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    const published = await publishFixture(emulator, { platforms: ['linux_amd64'] });
    const link = linkOf(published.version, 'shasums-upload');

    const put = await upload(link, release.sums);
    expectSuccess(put);
    const version = await owner.get(versionPath(emulator.organization));
    expect(obj(version.json, 'data.attributes')).toMatchObject({
      'shasums-uploaded': true,
      'shasums-sig-uploaded': false,
    });

    expectSuccess(
      await upload(
        linkOf(published.platforms.get('linux_amd64'), 'provider-binary-upload'),
        release.zip('linux', 'amd64').bytes,
      ),
    );
    const platform = await owner.get(platformPath(emulator.organization));
    expect(obj(platform.json, 'data.attributes')).toMatchObject({ 'provider-binary-uploaded': true });

    await emulator.close();
    const puts = emulator.requestLog.records.filter((r) => r.method === 'PUT');
    expect(puts).toHaveLength(2);
    for (const record of puts) expect(record.authorization).toBe(false);
  });

  it('with flagDelayMs, the flag stays false (and the upload link stays) until the clock passes the delay', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now, flagDelayMs: 5_000 });
    const { owner } = clients(emulator);
    const published = await publishFixture(emulator);
    expectSuccess(await upload(linkOf(published.version, 'shasums-upload'), release.sums));

    const read = async () => (await owner.get(versionPath(emulator.organization))).json;
    expect(obj(await read(), 'data.attributes')['shasums-uploaded']).toBe(false);
    expect(Object.keys(obj(await read(), 'data.links')).sort()).toEqual([
      'shasums-sig-upload',
      'shasums-upload',
    ]);

    clock.advance(4_999);
    expect(obj(await read(), 'data.attributes')['shasums-uploaded']).toBe(false);

    clock.advance(1);
    const after = await read();
    expect(obj(after, 'data.attributes')['shasums-uploaded']).toBe(true);
    expect(Object.keys(obj(after, 'data.links')).sort()).toEqual(['shasums-download', 'shasums-sig-upload']);
    const bytes = await download(linkOf(after, 'shasums-download'));
    expect(bytes.bytes.equals(release.sums)).toBe(true);
  });

  it('without flagDelayMs, the flag is true on the very next read', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now });
    const published = await publishFixture(emulator);
    expectSuccess(await upload(linkOf(published.version, 'shasums-sig-upload'), release.sig));
    const version = await clients(emulator).owner.get(versionPath(emulator.organization));
    expect(obj(version.json, 'data.attributes')['shasums-sig-uploaded']).toBe(true);
  });

  it('the download links serve exactly the uploaded bytes, without a token, as octet-stream', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    const pairs = ['linux_amd64', 'darwin_arm64', 'windows_amd64'];
    await publishFixture(emulator, { platforms: pairs, uploads: ['sums', 'sig', ...pairs] });
    const version = await owner.get(versionPath(emulator.organization));
    for (const [name, bytes] of [
      ['shasums-download', release.sums],
      ['shasums-sig-download', release.sig],
    ] as const) {
      const reply = await download(linkOf(version.json, name));
      expectStatus(reply, 200);
      expect(reply.headers.get('content-type')).toBe('application/octet-stream');
      expect(reply.bytes.equals(bytes)).toBe(true);
    }
    for (const pair of pairs) {
      const [os = '', arch = ''] = pair.split('_');
      const platform = await owner.get(platformPath(emulator.organization, os, arch));
      const reply = await download(linkOf(platform.json, 'provider-binary-download'));
      expectStatus(reply, 200);
      expect(reply.bytes.equals(release.zip(os, arch).bytes)).toBe(true);
    }
  });

  it('an upload link is single-use: a second PUT is refused (403) and the first bytes stay', async () => {
    const emulator = await start();
    const published = await publishFixture(emulator);
    const link = linkOf(published.version, 'shasums-upload');
    expectSuccess(await upload(link, release.sums));
    expectErrorDocument(await upload(link, Buffer.from('other bytes')), 403, { detail: /already been used/ });
    const version = await clients(emulator).owner.get(versionPath(emulator.organization));
    expect((await download(linkOf(version.json, 'shasums-download'))).bytes.equals(release.sums)).toBe(true);
  });

  it('an upload the client abandons halfway is logged unfinished (status 0), stores nothing, is no server error, and leaves the link usable', async () => {
    const errors: unknown[] = [];
    const emulator = await start({ onError: (error) => errors.push(error) });
    const published = await publishFixture(emulator);
    const link = linkOf(published.version, 'shasums-upload');
    // Announces the whole file, sends half of it, then gives up (as publish does with a file that changed).
    const half = release.sums.subarray(0, release.sums.length >> 1);
    const put = request(link, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': release.sums.length },
    });
    put.on('error', () => undefined);
    put.write(half, () => put.destroy());
    const record = await loggedRequest(emulator, (r) => r.method === 'PUT' && r.status !== 200);
    expect(record).toMatchObject({ status: 0, contentLength: release.sums.length, object: 'shasums' });
    expect(record.bytes).toBeLessThanOrEqual(half.length);
    expect(errors).toEqual([]);
    // The part file the bytes went to is closed and removed: nothing but whole objects in the store.
    expect(readdirSync(emulator.store.objectsDir).filter((name) => name.endsWith('.part'))).toEqual([]);
    const before = await clients(emulator).owner.get(versionPath(emulator.organization));
    expect(obj(before.json, 'data.attributes')).toMatchObject({ 'shasums-uploaded': false });
    // A link is spent only by an upload that arrived whole.
    expectSuccess(await upload(link, release.sums));
    const version = await clients(emulator).owner.get(versionPath(emulator.organization));
    expect((await download(linkOf(version.json, 'shasums-download'))).bytes.equals(release.sums)).toBe(true);
  });

  it('a member token sees the flags but gets no upload link (it may not upload)', async () => {
    const emulator = await start();
    await publishFixture(emulator);
    const version = await clients(emulator).member.get(versionPath(emulator.organization));
    expectStatus(version, 200);
    expect(obj(version.json, 'data.attributes')).toMatchObject({
      'shasums-uploaded': false,
      permissions: { 'can-delete': false, 'can-upload-asset': false },
    });
    expect(Object.keys(obj(version.json, 'data.links'))).not.toContain('shasums-upload');
  });
});

describe('refused links: 403 with an error document, nothing flips', () => {
  async function setup(options: Parameters<typeof start>[0] = {}) {
    const emulator = await start(options);
    const published = await publishFixture(emulator);
    const link = linkOf(published.version, 'shasums-upload');
    const secret = link.slice(link.indexOf('/object/') + '/object/'.length);
    const base = link.slice(0, link.length - secret.length);
    const flags = async () =>
      obj((await clients(emulator).owner.get(versionPath(emulator.organization))).json, 'data.attributes');
    return { emulator, link, secret, base, flags };
  }

  it.each([
    ['the last character of the signature changed', (s: string) => alter(s, -1)],
    ['the first character of the payload changed', (s: string) => alter(s, 0)],
    ['the signature removed', (s: string) => s.slice(0, s.indexOf('.'))],
    ['a made-up secret', () => 'dmF1bHQ6djU6bm90LWEtcmVhbC1zZWNyZXQ'],
    [
      'a payload re-encoded with a later expiry, the old signature kept',
      (s: string) => {
        const [payload = '', mac = ''] = s.split('.');
        const [op, key, expires] = Buffer.from(payload, 'base64url').toString('utf8').split(':');
        const later = Buffer.from(`${op}:${key}:${Number(expires) + 86_400_000}`).toString('base64url');
        return `${later}.${mac}`;
      },
    ],
  ])('a PUT to a link with %s', async (_name, forge) => {
    const { base, secret, flags } = await setup();
    const reply = await upload(`${base}${forge(secret)}`, release.sums);
    expectErrorDocument(reply, 403);
    expect((await flags())['shasums-uploaded']).toBe(false);
  });

  it('an upload link edited into a download link (operation swapped in the payload, signature kept)', async () => {
    const { base, secret, link } = await setup();
    expectSuccess(await upload(link, release.sums));
    const [payload = '', mac = ''] = secret.split('.');
    const decoded = Buffer.from(payload, 'base64url').toString('utf8');
    expect(decoded.startsWith('put:')).toBe(true);
    const swapped = Buffer.from(decoded.replace(/^put:/, 'get:')).toString('base64url');
    expectErrorDocument(await download(`${base}${swapped}.${mac}`), 403);
  });

  it('an expired upload link (linkTtlMs small, clock moved past it); a fresh read gives a working one', async () => {
    const clock = manualClock();
    const { emulator, link, flags } = await setup({ now: clock.now, linkTtlMs: 60_000 });
    clock.advance(60_000);
    expectErrorDocument(await upload(link, release.sums), 403);
    expect((await flags())['shasums-uploaded']).toBe(false);

    const fresh = await clients(emulator).owner.get(versionPath(emulator.organization));
    expectSuccess(await upload(linkOf(fresh.json, 'shasums-upload'), release.sums));
    expect((await flags())['shasums-uploaded']).toBe(true);
  });

  it('an expired download link', async () => {
    const clock = manualClock();
    const { emulator, link } = await setup({ now: clock.now, linkTtlMs: 60_000 });
    expectSuccess(await upload(link, release.sums));
    const version = await clients(emulator).owner.get(versionPath(emulator.organization));
    const downloadLink = linkOf(version.json, 'shasums-download');
    clock.advance(59_999);
    expectStatus(await download(downloadLink), 200);
    clock.advance(1);
    expectErrorDocument(await download(downloadLink), 403);
  });

  it('a GET on an upload link', async () => {
    const { link } = await setup();
    expectErrorDocument(await download(link), 403);
  });

  it('a GET on an upload link after the upload (the bytes are there, the link still does not serve them)', async () => {
    const { link } = await setup();
    expectSuccess(await upload(link, release.sums));
    expectErrorDocument(await download(link), 403);
  });

  it('a PUT on a download link', async () => {
    const { emulator, link } = await setup();
    expectSuccess(await upload(link, release.sums));
    const version = await clients(emulator).owner.get(versionPath(emulator.organization));
    const downloadLink = linkOf(version.json, 'shasums-download');
    expectErrorDocument(await upload(downloadLink, Buffer.from('overwritten')), 403);
    expect((await download(downloadLink)).bytes.equals(release.sums)).toBe(true);
  });

  it('a link sent with a token is judged by its secret alone (a token does not make a forged link valid)', async () => {
    const { emulator, base, secret } = await setup();
    const reply = await call('', 'PUT', `${base}${alter(secret, -1)}`, {
      token: emulator.ownerToken,
      body: release.sums,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expectErrorDocument(reply, 403);
  });
});

describe('links belong to their object', () => {
  it('the sums upload link fills the sums file, not the signature', async () => {
    const emulator = await start();
    const published = await publishFixture(emulator);
    expectSuccess(await upload(linkOf(published.version, 'shasums-upload'), release.sums));
    const version = await clients(emulator).owner.get(versionPath(emulator.organization));
    expect(obj(version.json, 'data.attributes')).toMatchObject({
      'shasums-uploaded': true,
      'shasums-sig-uploaded': false,
    });
    expect(str(version.json, 'data.links.shasums-sig-upload')).not.toBe(
      linkOf(published.version, 'shasums-upload'),
    );
  });
});
