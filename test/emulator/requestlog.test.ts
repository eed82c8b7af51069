/**
 * The request log (PRODUCT.md §6): one record per request with method, path, status, whether an Authorization
 * header was present, content type, content length and bytes; in memory and in the JSONL file alike; never a
 * token (not even an unknown one), never an archivist link or its secret.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/emulator/requestLog.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import {
  call,
  clients,
  download,
  expectStatus,
  expectSuccess,
  gpgKeyPaths,
  linkOf,
  loadRelease,
  providerPaths,
  publishFixture,
  upload,
} from '../helpers/emulator/index.js';
import { isObject, str } from '../helpers/json.js';
import { tempDir } from '../helpers/tmp.js';

const release = loadRelease();
const BOGUS_TOKEN = 'zzzzzzzzzzzzzz.atlasv1.bogus-token-that-must-not-be-logged-0123456789';
let dir: string;
let logPath: string;
let emulator: Emulator;
/** Every archivist link the emulator handed out during the session. */
const links = new Set<string>();
let fileText = '';
let fileRecords: unknown[] = [];
let records: RequestRecord[] = [];

function collectLinks(document: unknown): void {
  const walk = (value: unknown): void => {
    if (typeof value === 'string' && value.includes('/_archivist/')) links.add(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (isObject(value)) Object.values(value).forEach(walk);
  };
  walk(document);
}

beforeAll(async () => {
  dir = tempDir();
  logPath = join(dir, 'requests.jsonl');
  emulator = await startEmulator({ requestLogPath: logPath });
  const { owner, member, outsider } = clients(emulator);
  const org = emulator.organization;
  const paths = providerPaths(org, release.name);

  const published = await publishFixture(emulator, {
    platforms: ['linux_amd64', 'darwin_arm64'],
    uploads: ['sums', 'sig', 'linux_amd64'],
  });
  collectLinks(published.version);
  for (const doc of published.platforms.values()) collectLinks(doc);

  for (const api of [owner, member, outsider]) {
    for (const path of [paths.versions, paths.platforms(release.version), gpgKeyPaths().list(org)]) {
      collectLinks((await api.get(path)).json);
    }
  }
  const version = await owner.get(paths.version(release.version));
  collectLinks(version.json);
  expectStatus(await download(linkOf(version.json, 'shasums-download')), 200);
  expectStatus(await download(linkOf(version.json, 'shasums-sig-download')), 200);
  const consumer = await call(
    emulator.url,
    'GET',
    `/api/registry/v1/providers/${org}/${release.name}/${release.version}/download/linux/amd64`,
    {
      token: emulator.ownerToken,
    },
  );
  expectStatus(consumer, 200);
  collectLinks(consumer.json);
  expectStatus(await download(str(consumer.json, 'download_url')), 200);
  // A forged link, a GET on an upload link, an unknown token, a query string.
  const anUploadLink = linkOf(published.platforms.get('darwin_arm64'), 'provider-binary-upload');
  expectStatus(await download(anUploadLink), 403);
  expectStatus(await upload(`${anUploadLink}x`, Buffer.from('nope')), 403);
  expectStatus(await call(emulator.url, 'GET', paths.providers, { token: BOGUS_TOKEN }), 401);
  expectStatus(await owner.get(`${paths.versions}?page%5Bsize%5D=5`), 200);
  expectSuccess(await upload(anUploadLink, release.zip('darwin', 'arm64').bytes));

  // Closing waits for every answer to finish, so every record has been written.
  await emulator.close();
  records = emulator.requestLog.records;
  fileText = existsSync(logPath) ? readFileSync(logPath, 'utf8') : '';
  fileRecords = fileText
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as unknown);
});

describe('the request log', () => {
  it('has one record per request, the same in memory and in the JSONL file', () => {
    expect(records.length).toBeGreaterThan(20);
    expect(fileRecords).toEqual(records);
  });

  it('records method, path, status, authorization (a boolean), content type, content length and bytes', () => {
    for (const record of records) {
      expect(typeof record.method).toBe('string');
      expect(record.path.startsWith('/')).toBe(true);
      expect(typeof record.status).toBe('number');
      expect(typeof record.authorization).toBe('boolean');
      expect(record.contentType === null || typeof record.contentType === 'string').toBe(true);
      expect(record.contentLength === null || typeof record.contentLength === 'number').toBe(true);
      expect(typeof record.bytes).toBe('number');
    }
  });

  it('an upload: PUT, redacted path, 2xx, no Authorization, octet-stream, length and bytes of the file', () => {
    const zip = release.zip('linux', 'amd64');
    const put = records.find((r) => r.method === 'PUT' && r.bytes === zip.bytes.length);
    expect(put).toMatchObject({
      path: '/_archivist/v1/object/[secret]',
      authorization: false,
      contentType: 'application/octet-stream',
      contentLength: zip.bytes.length,
      bytes: zip.bytes.length,
      object: 'provider-binary',
    });
    expect(put!.status).toBeGreaterThanOrEqual(200);
    expect(put!.status).toBeLessThan(300);
  });

  it('a download: GET, 200, which file of which resource, no Authorization', () => {
    const gets = records.filter((r) => r.method === 'GET' && r.path === '/_archivist/v1/object/[secret]');
    const served = gets.filter((r) => r.status === 200).map((r) => r.object);
    expect(served.sort()).toEqual(['provider-binary', 'shasums', 'shasums-sig']);
    for (const r of gets) {
      expect(r.authorization).toBe(false);
      expect(r.owner).toMatch(/^(provver|provpltfrm)-[A-Za-z0-9]{16}$/);
    }
  });

  it('is written by the time a client has its answer', async () => {
    const live = await startEmulator({});
    try {
      for (let i = 0; i < 20; i++) {
        expectStatus(await call(live.url, 'GET', '/api/v2/ping'), 204);
        expect(live.requestLog.records).toHaveLength(i + 1);
      }
    } finally {
      await live.close();
    }
  });

  it('an API create: POST, its path, 201, Authorization present, JSON:API content type, body bytes', () => {
    const org = emulator.organization;
    const post = records.find(
      (r) => r.method === 'POST' && r.path === providerPaths(org, release.name).versions,
    );
    expect(post).toMatchObject({ status: 201, authorization: true, contentType: 'application/vnd.api+json' });
    expect(post!.bytes).toBeGreaterThan(0);
    expect(post!.contentLength).toBe(post!.bytes);
  });

  it('refusals are recorded with their status: 401 unknown token, 403 forged link and GET on an upload link', () => {
    expect(records.some((r) => r.status === 401 && r.authorization)).toBe(true);
    expect(
      records.filter((r) => r.status === 403 && r.path === '/_archivist/v1/object/[secret]'),
    ).toHaveLength(2);
  });

  it('contains no token: owner, member, outsider, nor the unknown one', () => {
    const memory = JSON.stringify(records);
    for (const token of [emulator.ownerToken, emulator.memberToken, emulator.outsiderToken, BOGUS_TOKEN]) {
      expect(memory).not.toContain(token);
      expect(fileText).not.toContain(token);
    }
    // Nor a recognisable piece of one.
    for (const token of [emulator.ownerToken, emulator.memberToken, emulator.outsiderToken]) {
      const tail = token.split('.').pop()!;
      expect(fileText).not.toContain(tail);
    }
  });

  it('contains no archivist link and no secret part of one', () => {
    expect(links.size).toBeGreaterThanOrEqual(8);
    const memory = JSON.stringify(records);
    for (const link of links) {
      const secret = link.slice(link.indexOf('/object/') + '/object/'.length);
      expect(secret.length).toBeGreaterThan(20);
      for (const text of [memory, fileText]) {
        expect(text).not.toContain(link);
        expect(text).not.toContain(secret);
        for (const part of secret.split('.')) expect(text).not.toContain(part);
      }
    }
    expect(fileText).toContain('/_archivist/v1/object/[secret]');
  });
});

// Found by test/reliability: a request log that could no longer be written (its folder removed) threw from the
// answer's `close` handler, an uncaught exception that took the whole emulator down.
describe('a request log file that cannot be written', () => {
  it('does not stop the emulator: answers go on, records stay in memory, onError is told', async () => {
    const folder = tempDir('gone');
    const errors: unknown[] = [];
    const e = await startEmulator({
      requestLogPath: join(folder, 'requests.jsonl'),
      onError: (error) => errors.push(error),
    });
    try {
      rmSync(folder, { recursive: true, force: true });
      const reply = await call(e.url, 'GET', '/api/v2/ping');
      expect(reply.status).toBe(204);
      const again = await call(e.url, 'GET', '/healthz');
      expect(again.status).toBe(200);
      expect(e.requestLog.records.map((r) => r.path)).toEqual(['/api/v2/ping', '/healthz']);
      expect(errors.map((x) => (x as NodeJS.ErrnoException).code)).toEqual(['ENOENT', 'ENOENT']);
    } finally {
      await e.close();
    }
  });
});
