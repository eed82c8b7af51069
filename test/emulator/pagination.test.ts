/**
 * Pagination (registry-api.md §0, D5): `page[number]`, `page[size]` (default 20, at most 100), top-level
 * `links` {self, first, prev, next, last} and `meta.pagination`; the go-tfe assertions (no versions → 0 pages;
 * a page past the end is empty but keeps the totals); the GPG key list's relative links.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import {
  addGpgKey,
  call,
  clients,
  createPlatform,
  createProvider,
  createVersion,
  expectStatus,
  gpgKeyPaths,
  loadRelease,
  providerPaths,
  type Reply,
} from '../helpers/emulator/index.js';
import { arr, isObject, num, obj, str, type JsonObject } from '../helpers/json.js';

const release = loadRelease();
const TOTAL = 150;
const ALL_VERSIONS = Array.from({ length: TOTAL }, (_, i) => `1.0.${i}`);
let emulator: Emulator;
let paths: ReturnType<typeof providerPaths>;

beforeAll(async () => {
  emulator = await startEmulator();
  const { owner } = clients(emulator);
  const org = emulator.organization;
  paths = providerPaths(org, 'many');
  await createProvider(owner, org, 'many');
  for (const version of ALL_VERSIONS) {
    await createVersion(owner, org, 'many', { version, 'key-id': release.keyId, protocols: ['6.0'] });
  }
  await createProvider(owner, org, 'none');
  // A deleted version must not count in the totals.
  await createVersion(owner, org, 'many', { version: '2.0.0', 'key-id': release.keyId, protocols: ['6.0'] });
  expectStatus(await owner.delete(paths.version('2.0.0')), 204);
  for (const zip of release.zips) await createPlatform(owner, org, 'many', '1.0.0', zip);
  for (const key of ['signer', 'other', 'subkey', 'expired'] as const) await addGpgKey(owner, org, key);
}, 60_000);

afterAll(async () => {
  await emulator.close();
});

function get(pathOrUrl: string): Promise<Reply> {
  return call(emulator.url, 'GET', pathOrUrl, { token: emulator.ownerToken });
}

function page(query: string): Promise<Reply> {
  return get(`${paths.versions}${query}`);
}

/** The link that `name` in an absolute list URL for `number` and `size` must be. */
function listLink(base: string, number: number, size: number): string {
  return `${emulator.url}${base}?page%5Bnumber%5D=${number}&page%5Bsize%5D=${size}`;
}

function versionsOf(reply: Reply): string[] {
  return arr(reply.json, 'data').map((v) => str(v, 'attributes.version'));
}

describe('walking the versions list by its next links', () => {
  it.each([1, 7, 20, 100])(
    'page size %i: every page, its meta and links; every version exactly once',
    async (size) => {
      const totalPages = Math.ceil(TOTAL / size);
      const seen: string[] = [];
      let url: string | null = listLink(paths.versions, 1, size);
      let number = 1;
      while (url !== null) {
        const reply = await get(url);
        expectStatus(reply, 200);
        const expectedLength = Math.min(size, TOTAL - (number - 1) * size);
        expect(arr(reply.json, 'data')).toHaveLength(expectedLength);
        expect(obj(reply.json, 'meta.pagination')).toEqual({
          'current-page': number,
          'page-size': size,
          'prev-page': number > 1 ? number - 1 : null,
          'next-page': number < totalPages ? number + 1 : null,
          'total-pages': totalPages,
          'total-count': TOTAL,
        });
        expect(obj(reply.json, 'links')).toEqual({
          self: listLink(paths.versions, number, size),
          first: listLink(paths.versions, 1, size),
          prev: number > 1 ? listLink(paths.versions, number - 1, size) : null,
          next: number < totalPages ? listLink(paths.versions, number + 1, size) : null,
          last: listLink(paths.versions, totalPages, size),
        });
        seen.push(...versionsOf(reply));
        const next = obj(reply.json, 'links').next;
        url = typeof next === 'string' ? next : null;
        number += 1;
      }
      expect(number - 1).toBe(totalPages);
      expect(seen).toHaveLength(TOTAL);
      expect(new Set(seen)).toEqual(new Set(ALL_VERSIONS));
    },
  );

  it('walking back by prev links from the last page visits the same versions', async () => {
    const seen: string[] = [];
    let url: string | null = listLink(paths.versions, 8, 20);
    while (url !== null) {
      const reply = await get(url);
      seen.unshift(...versionsOf(reply));
      const prev = obj(reply.json, 'links').prev;
      url = typeof prev === 'string' ? prev : null;
    }
    expect(seen).toHaveLength(TOTAL);
    expect(new Set(seen)).toEqual(new Set(ALL_VERSIONS));
  });
});

describe('page parameters', () => {
  it('default: page 1 of size 20', async () => {
    const reply = await page('');
    expect(arr(reply.json, 'data')).toHaveLength(20);
    expect(obj(reply.json, 'meta.pagination')).toMatchObject({
      'current-page': 1,
      'page-size': 20,
      'total-pages': 8,
      'total-count': TOTAL,
    });
    expect(str(reply.json, 'links.self')).toBe(listLink(paths.versions, 1, 20));
  });

  it('the documented trailing slash (".../versions/") lists the same, with canonical links', async () => {
    const reply = await get(`${paths.versions}/?page%5Bsize%5D=5`);
    expectStatus(reply, 200);
    expect(versionsOf(reply)).toEqual(versionsOf(await page('?page%5Bsize%5D=5')));
    expect(str(reply.json, 'links.self')).toBe(listLink(paths.versions, 1, 5));
  });

  it('page[size]=150 is clamped to 100', async () => {
    const reply = await page('?page%5Bsize%5D=150');
    expect(arr(reply.json, 'data')).toHaveLength(100);
    expect(obj(reply.json, 'meta.pagination')).toMatchObject({
      'page-size': 100,
      'total-pages': 2,
      'next-page': 2,
    });
    expect(str(reply.json, 'links.next')).toBe(listLink(paths.versions, 2, 100));
  });

  it('unencoded brackets work as well as percent-encoded ones', async () => {
    const encoded = await page('?page%5Bnumber%5D=3&page%5Bsize%5D=7');
    const raw = await page('?page[number]=3&page[size]=7');
    expect(versionsOf(raw)).toEqual(versionsOf(encoded));
    expect(versionsOf(raw)).toHaveLength(7);
  });

  it('a page past the end: empty data, current-page as asked, totals kept (go-tfe page[number]=999)', async () => {
    const reply = await page('?page%5Bnumber%5D=999');
    expectStatus(reply, 200);
    expect(arr(reply.json, 'data')).toEqual([]);
    expect(obj(reply.json, 'meta.pagination')).toMatchObject({
      'current-page': 999,
      'page-size': 20,
      'next-page': null,
      'total-pages': 8,
      'total-count': TOTAL,
    });
  });

  it('no versions: total-pages 0, total-count 0, empty data (go-tfe)', async () => {
    const reply = await get(providerPaths(emulator.organization, 'none').versions);
    expectStatus(reply, 200);
    expect(arr(reply.json, 'data')).toEqual([]);
    expect(obj(reply.json, 'meta.pagination')).toMatchObject({
      'current-page': 1,
      'prev-page': null,
      'next-page': null,
      'total-pages': 0,
      'total-count': 0,
    });
    expect(obj(reply.json, 'links')).toMatchObject({ prev: null, next: null });
  });

  it('platforms paginate the same way (5 platforms, size 2 → 3 pages)', async () => {
    const seen: string[] = [];
    let url: string | null = `${emulator.url}${paths.platforms('1.0.0')}?page%5Bsize%5D=2`;
    let pages = 0;
    while (url !== null) {
      const reply = await get(url);
      pages += 1;
      expect(num(reply.json, 'meta.pagination.total-pages')).toBe(3);
      expect(num(reply.json, 'meta.pagination.total-count')).toBe(5);
      seen.push(
        ...arr(reply.json, 'data').map((p) => `${str(p, 'attributes.os')}_${str(p, 'attributes.arch')}`),
      );
      const next = obj(reply.json, 'links').next;
      url = typeof next === 'string' ? next : null;
    }
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(release.zips.map((z) => `${z.os}_${z.arch}`).sort());
  });

  it('providers paginate the same way, and a page past the end keeps the totals (go-tfe)', async () => {
    const first = await get(`${paths.providers}?page%5Bsize%5D=1`);
    expect(obj(first.json, 'meta.pagination')).toMatchObject({
      'total-count': 2,
      'total-pages': 2,
      'next-page': 2,
    });
    const past = await get(`${paths.providers}?page%5Bnumber%5D=999&page%5Bsize%5D=1`);
    expect(arr(past.json, 'data')).toEqual([]);
    expect(obj(past.json, 'meta.pagination')).toMatchObject({ 'current-page': 999, 'total-count': 2 });
  });
});

describe('GPG key list', () => {
  const org = () => emulator.organization;
  const relative = (number: number, size: number) =>
    `/v2/gpg-keys?filter%5Bnamespace%5D=${org()}&page%5Bnumber%5D=${number}&page%5Bsize%5D=${size}`;

  it('page size 15, as in the documented sample: the same meta and relative links', async () => {
    const reply = await get(gpgKeyPaths().list(org(), '&page%5Bnumber%5D=1&page%5Bsize%5D=15'));
    expectStatus(reply, 200);
    expect(arr(reply.json, 'data')).toHaveLength(4);
    expect(obj(reply.json, 'meta.pagination')).toEqual({
      'page-size': 15,
      'current-page': 1,
      'next-page': null,
      'prev-page': null,
      'total-pages': 1,
      'total-count': 4,
    });
    expect(obj(reply.json, 'links')).toMatchObject({
      first: relative(1, 15),
      last: relative(1, 15),
      next: null,
      prev: null,
    });
  });

  it('default page size 20 (GPG keys docs parameter table)', async () => {
    const reply = await get(gpgKeyPaths().list(org()));
    expect(num(reply.json, 'meta.pagination.page-size')).toBe(20);
    expect(str(reply.json, 'links.first')).toBe(relative(1, 20));
  });

  it('page size 1: relative next/prev links that work when resolved against /api/registry/private', async () => {
    const ids: string[] = [];
    let link: string | null = relative(1, 1);
    let pages = 0;
    while (link !== null) {
      expect(link.startsWith('/v2/gpg-keys?')).toBe(true);
      const reply = await get(`/api/registry/private${link}`);
      expectStatus(reply, 200);
      pages += 1;
      expect(obj(reply.json, 'meta.pagination')).toMatchObject({
        'current-page': pages,
        'page-size': 1,
        'total-pages': 4,
        'total-count': 4,
      });
      ids.push(...arr(reply.json, 'data').map((k) => str(k, 'attributes.key-id')));
      const links: JsonObject = obj(reply.json, 'links');
      expect(links.prev).toBe(pages > 1 ? relative(pages - 1, 1) : null);
      link = typeof links.next === 'string' ? links.next : null;
    }
    expect(pages).toBe(4);
    expect(new Set(ids).size).toBe(4);
  });

  it('a page past the end: empty, current-page 999, total-count kept (go-tfe)', async () => {
    const reply = await get(gpgKeyPaths().list(org(), '&page%5Bnumber%5D=999'));
    expectStatus(reply, 200);
    expect(arr(reply.json, 'data')).toEqual([]);
    expect(obj(reply.json, 'meta.pagination')).toMatchObject({ 'current-page': 999, 'total-count': 4 });
    expect(isObject(obj(reply.json, 'links'))).toBe(true);
  });
});
