/**
 * Who may do what (registry-api.md §0, PRODUCT.md §6): 401 without a known token; 404 for a member who writes,
 * for an outsider, and for anything unknown (never telling what exists); 403 for the `public` registry name.
 * Every refusal is a JSON:API error document, and a refused write changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import {
  call,
  clients,
  expectErrorDocument,
  expectStatus,
  gpgKeyPaths,
  gpgKeyPayload,
  loadRelease,
  platformPayload,
  providerPaths,
  providerPayload,
  publicKey,
  publishFixture,
  versionPayload,
} from '../helpers/emulator/index.js';
import { arr } from '../helpers/json.js';

const release = loadRelease();
let emulator: Emulator;

beforeAll(async () => {
  emulator = await startEmulator();
  await publishFixture(emulator, { platforms: ['linux_amd64'] });
});

afterAll(async () => {
  await emulator.close();
});

interface Endpoint {
  name: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: (org: string, registry: string) => string;
  body?: (org: string) => unknown;
}

const V = release.version;
const newZip = release.zip('darwin', 'arm64');

/** Every registry endpoint, aimed at resources that exist (or at a new one for creates). */
const ENDPOINTS: Endpoint[] = [
  { name: 'list providers', method: 'GET', path: (o) => providerPaths(o, 'example').providers },
  {
    name: 'create a provider',
    method: 'POST',
    path: (o) => providerPaths(o, 'example').providers,
    body: (o) => providerPayload(o, 'brand-new'),
  },
  { name: 'read a provider', method: 'GET', path: (o, r) => providerPaths(o, 'example', r).provider },
  { name: 'delete a provider', method: 'DELETE', path: (o, r) => providerPaths(o, 'example', r).provider },
  { name: 'list versions', method: 'GET', path: (o, r) => providerPaths(o, 'example', r).versions },
  {
    name: 'create a version',
    method: 'POST',
    path: (o, r) => providerPaths(o, 'example', r).versions,
    body: () => versionPayload({ version: '9.9.9', 'key-id': release.keyId, protocols: ['6.0'] }),
  },
  { name: 'read a version', method: 'GET', path: (o, r) => providerPaths(o, 'example', r).version(V) },
  { name: 'delete a version', method: 'DELETE', path: (o, r) => providerPaths(o, 'example', r).version(V) },
  { name: 'list platforms', method: 'GET', path: (o, r) => providerPaths(o, 'example', r).platforms(V) },
  {
    name: 'create a platform',
    method: 'POST',
    path: (o, r) => providerPaths(o, 'example', r).platforms(V),
    body: () =>
      platformPayload({ os: newZip.os, arch: newZip.arch, shasum: newZip.shasum, filename: newZip.filename }),
  },
  {
    name: 'read a platform',
    method: 'GET',
    path: (o, r) => providerPaths(o, 'example', r).platform(V, 'linux', 'amd64'),
  },
  {
    name: 'delete a platform',
    method: 'DELETE',
    path: (o, r) => providerPaths(o, 'example', r).platform(V, 'linux', 'amd64'),
  },
  { name: 'list GPG keys', method: 'GET', path: (o, r) => gpgKeyPaths(r).list(o) },
  {
    name: 'add a GPG key',
    method: 'POST',
    path: (_o, r) => gpgKeyPaths(r).keys,
    body: (o) => gpgKeyPayload(o, publicKey('other')),
  },
  { name: 'read a GPG key', method: 'GET', path: (o, r) => gpgKeyPaths(r).key(o, release.keyId) },
  { name: 'delete a GPG key', method: 'DELETE', path: (o, r) => gpgKeyPaths(r).key(o, release.keyId) },
];

const WRITES = ENDPOINTS.filter((e) => e.method !== 'GET');
const READS = ENDPOINTS.filter((e) => e.method === 'GET');

function send(
  endpoint: Endpoint,
  token: string | undefined,
  options: { org?: string; registry?: string } = {},
) {
  const org = options.org ?? emulator.organization;
  return call(emulator.url, endpoint.method, endpoint.path(org, options.registry ?? 'private'), {
    token,
    body: endpoint.body?.(emulator.organization),
  });
}

/** Everything that exists after the seed, as the owner reads it: a refused write must leave it unchanged. */
async function snapshot(): Promise<unknown[]> {
  const { owner } = clients(emulator);
  const org = emulator.organization;
  const paths = providerPaths(org, 'example');
  const reads = [paths.providers, paths.versions, paths.platforms(V), gpgKeyPaths().list(org)];
  const replies = await Promise.all(reads.map((p) => owner.get(p)));
  return replies.map((r) => {
    expectStatus(r, 200);
    return arr(r.json, 'data').length;
  });
}

describe('401 for a missing or unknown token', () => {
  it.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s without a token', async (_name, endpoint) => {
    expectErrorDocument(await send(endpoint, undefined), 401);
  });

  it.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s with an unknown token', async (_name, endpoint) => {
    expectErrorDocument(await send(endpoint, 'abcdefghijklmn.atlasv1.not-a-token-the-emulator-issued'), 401);
  });

  it('with a known token not sent as a Bearer token', async () => {
    const reply = await call(emulator.url, 'GET', providerPaths(emulator.organization, 'example').providers, {
      headers: { authorization: `Basic ${emulator.ownerToken}` },
    });
    expectErrorDocument(reply, 401);
  });

  it('with the consumer registry protocol too', async () => {
    const reply = await call(
      emulator.url,
      'GET',
      `/api/registry/v1/providers/${emulator.organization}/example/versions`,
    );
    expectErrorDocument(reply, 401);
  });
});

describe('404 for a member token that writes (the platform hides what exists)', () => {
  it.each(WRITES.map((e) => [e.name, e] as const))('%s', async (_name, endpoint) => {
    const before = await snapshot();
    expectErrorDocument(await send(endpoint, emulator.memberToken), 404);
    expect(await snapshot()).toEqual(before);
  });

  it.each(READS.map((e) => [e.name, e] as const))('but a member may %s', async (_name, endpoint) => {
    expectStatus(await send(endpoint, emulator.memberToken), 200);
  });
});

describe('404 for an outsider token (a valid token of another organization)', () => {
  it.each(ENDPOINTS.filter((e) => e.name !== 'list GPG keys').map((e) => [e.name, e] as const))(
    '%s',
    async (_name, endpoint) => {
      const before = await snapshot();
      expectErrorDocument(await send(endpoint, emulator.outsiderToken), 404);
      expect(await snapshot()).toEqual(before);
    },
  );

  it('listing GPG keys of a namespace it may not see: 403 "no authorized namespaces" (GPG keys docs)', async () => {
    const reply = await send(
      ENDPOINTS.find((e) => e.name === 'list GPG keys')!,
      emulator.outsiderToken,
    );
    expectErrorDocument(reply, 403);
  });
});

describe('404 for what does not exist (owner token)', () => {
  const unknown: [string, 'GET' | 'POST' | 'DELETE', (org: string) => string, unknown?][] = [
    [
      'an unknown organization: list providers',
      'GET',
      () => providerPaths('no-such-org', 'example').providers,
    ],
    [
      'an unknown organization: read a provider',
      'GET',
      () => providerPaths('no-such-org', 'example').provider,
    ],
    [
      'an unknown organization: create a provider',
      'POST',
      () => providerPaths('no-such-org', 'example').providers,
      providerPayload('no-such-org', 'example'),
    ],
    ['an unknown organization: list versions', 'GET', () => providerPaths('no-such-org', 'example').versions],
    ['an unknown provider: read', 'GET', (o) => providerPaths(o, 'nope').provider],
    ['an unknown provider: delete', 'DELETE', (o) => providerPaths(o, 'nope').provider],
    ['an unknown provider: list versions', 'GET', (o) => providerPaths(o, 'nope').versions],
    [
      'an unknown provider: create a version',
      'POST',
      (o) => providerPaths(o, 'nope').versions,
      versionPayload({ version: '1.0.0', 'key-id': release.keyId, protocols: ['6.0'] }),
    ],
    ['an unknown version: read', 'GET', (o) => providerPaths(o, 'example').version('9.9.9')],
    ['an unknown version: delete', 'DELETE', (o) => providerPaths(o, 'example').version('9.9.9')],
    ['an unknown version: list platforms', 'GET', (o) => providerPaths(o, 'example').platforms('9.9.9')],
    [
      'an unknown version: create a platform',
      'POST',
      (o) => providerPaths(o, 'example').platforms('9.9.9'),
      platformPayload({ os: newZip.os, arch: newZip.arch, shasum: newZip.shasum, filename: newZip.filename }),
    ],
    ['an unknown platform: read', 'GET', (o) => providerPaths(o, 'example').platform(V, 'linux', 'arm64')],
    [
      'an unknown platform: delete',
      'DELETE',
      (o) => providerPaths(o, 'example').platform(V, 'linux', 'arm64'),
    ],
    ['an unknown GPG key: read "foobar" (as go-tfe asserts)', 'GET', (o) => gpgKeyPaths().key(o, 'foobar')],
    ['an unknown GPG key: delete', 'DELETE', (o) => gpgKeyPaths().key(o, '0123456789ABCDEF')],
  ];

  it.each(unknown)('%s', async (_name, method, path, body) => {
    const before = await snapshot();
    const reply = await call(emulator.url, method, path(emulator.organization), {
      token: emulator.ownerToken,
      body,
    });
    expectErrorDocument(reply, 404);
    expect(await snapshot()).toEqual(before);
  });
});

describe('403 for the registry name "public" in the path', () => {
  const inPath = ENDPOINTS.filter((e) => e.path('o', 'public').includes('public'));

  it('covers every endpoint with a registry name in its path', () => {
    expect(inPath.map((e) => e.name)).toEqual(
      ENDPOINTS.filter((e) => !['list providers', 'create a provider'].includes(e.name)).map((e) => e.name),
    );
  });

  it.each(inPath.map((e) => [e.name, e] as const))('%s', async (_name, endpoint) => {
    const before = await snapshot();
    expectErrorDocument(await send(endpoint, emulator.ownerToken, { registry: 'public' }), 403);
    expect(await snapshot()).toEqual(before);
  });

  it('creating a provider with registry-name "public": 403 (public provider curation disabled)', async () => {
    const before = await snapshot();
    const reply = await clients(emulator).owner.post(
      providerPaths(emulator.organization, 'example').providers,
      providerPayload(emulator.organization, 'curated', 'public'),
    );
    expectErrorDocument(reply, 403);
    expect(await snapshot()).toEqual(before);
  });
});

describe('GPG key list without filter[namespace]', () => {
  it('answers 400 "missing namespaces in request" (GPG keys docs)', async () => {
    const reply = await clients(emulator).owner.get(gpgKeyPaths().keys);
    expectErrorDocument(reply, 400, { detail: /missing namespaces/ });
  });
});
