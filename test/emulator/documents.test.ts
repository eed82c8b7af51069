/**
 * Every success document of the emulator against the documented samples (test/emulator/documented-samples.ts):
 * same keys at every level, same JSON types, id prefixes, timestamp formats, relationships, and `links` that
 * switch from upload to download file by file. Creates answer 201, deletes 204.
 */
import { describe, expect, it } from 'vitest';
import {
  GPG_KEY_ADD_PAYLOAD,
  GPG_KEY_ADD_RESPONSE,
  GPG_KEY_GET_RESPONSE,
  GPG_KEY_LIST_RESPONSE,
  PLATFORM_CREATE_PAYLOAD,
  PLATFORM_CREATE_RESPONSE,
  PLATFORM_GET_RESPONSE,
  PLATFORM_LIST_RESPONSE,
  PROVIDER_CREATE_PAYLOAD,
  PROVIDER_CREATE_RESPONSE,
  PROVIDER_GET_RESPONSE,
  PROVIDER_LIST_ENVELOPE,
  VERSION_CREATE_PAYLOAD,
  VERSION_CREATE_RESPONSE,
  VERSION_GET_RESPONSE,
  VERSION_LIST_RESPONSE,
} from './documented-samples.js';
import {
  JSONAPI,
  addGpgKey,
  clients,
  createPlatform,
  createProvider,
  createVersion,
  emulatorPerTest,
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
  type Reply,
} from '../helpers/emulator/index.js';
import { arr, obj, replaceAt, str } from '../helpers/json.js';
import { shapeMismatches, type ShapeVars } from '../helpers/shape.js';

const start = emulatorPerTest();
const release = loadRelease();

/**
 * The version samples of provider-versions-platforms.mdx predate version tags; the 2026 version document
 * (hashicorp/web-unified-docs: …/private-registry/providers/version-tags.mdx, sample response) names its tag
 * bindings in `relationships.tag-bindings`, by link only. The older samples, with that relationship added.
 */
function withTagBindings<T>(sample: T): T {
  const add = (item: unknown): unknown => {
    const resource = item as { id: string; relationships: Record<string, unknown> };
    const related = `/api/v2/registry-provider-versions/${resource.id}/tag-bindings`;
    return {
      ...resource,
      relationships: { ...resource.relationships, 'tag-bindings': { links: { related } } },
    };
  };
  const doc = sample as { data: unknown };
  return { ...doc, data: Array.isArray(doc.data) ? doc.data.map(add) : add(doc.data) } as T;
}
const VERSION_CREATE = withTagBindings(VERSION_CREATE_RESPONSE);
const VERSION_GET = withTagBindings(VERSION_GET_RESPONSE);
const VERSION_LIST = withTagBindings(VERSION_LIST_RESPONSE);

/** The sample's names → ours, for the fixture release published in the default organization. */
function varsFor(org: string): ShapeVars {
  return {
    hashicorp: org,
    'my-organization': org,
    'my-other-organization': org,
    aws: release.name,
    '3.1.1': release.version,
  };
}

function expectShape(actual: unknown, sample: unknown, vars: ShapeVars = {}): void {
  expect(shapeMismatches(actual, sample, vars)).toEqual([]);
}

function expectJsonApi(reply: Reply, status: number): void {
  expectStatus(reply, status);
  expect(reply.headers.get('content-type')).toContain(JSONAPI);
}

function linkNames(document: unknown, path = 'data.links'): string[] {
  return Object.keys(obj(document, path)).sort();
}

describe('the documented sample payloads, sent verbatim to an organization named "hashicorp"', () => {
  it('are accepted, and the answers match the documented responses value for value where state does not enter', async () => {
    const clock = manualClock();
    const emulator = await start({ organization: 'hashicorp', now: clock.now });
    const { owner } = clients(emulator);
    const paths = providerPaths('hashicorp', 'aws');

    const provider = await owner.post(paths.providers, PROVIDER_CREATE_PAYLOAD);
    expectJsonApi(provider, 201);
    expectShape(provider.json, PROVIDER_CREATE_RESPONSE);
    expect(obj(provider.json, 'data.relationships')).toEqual({
      organization: PROVIDER_CREATE_RESPONSE.data.relationships.organization,
      versions: PROVIDER_CREATE_RESPONSE.data.relationships.versions,
    });
    expect(obj(provider.json, 'data.links')).toEqual(PROVIDER_CREATE_RESPONSE.data.links);

    const version = await owner.post(paths.versions, VERSION_CREATE_PAYLOAD);
    expectJsonApi(version, 201);
    expectShape(version.json, VERSION_CREATE);
    const { version: v, 'key-id': keyId, protocols } = VERSION_CREATE_RESPONSE.data.attributes;
    expect(obj(version.json, 'data.attributes')).toMatchObject({ version: v, 'key-id': keyId, protocols });
    expect(obj(version.json, 'data.relationships.platforms')).toEqual(
      VERSION_CREATE_RESPONSE.data.relationships.platforms,
    );
    expect(str(version.json, 'data.relationships.registry-provider.data.id')).toBe(
      str(provider.json, 'data.id'),
    );

    const platform = await owner.post(paths.platforms('3.1.1'), PLATFORM_CREATE_PAYLOAD);
    expectJsonApi(platform, 201);
    expectShape(platform.json, PLATFORM_CREATE_RESPONSE);
    const { os, arch, filename, shasum } = PLATFORM_CREATE_RESPONSE.data.attributes;
    expect(obj(platform.json, 'data.attributes')).toMatchObject({ os, arch, filename, shasum });
    expect(str(platform.json, 'data.relationships.registry-provider-version.data.id')).toBe(
      str(version.json, 'data.id'),
    );
  });

  it('refuse the GPG key sample, whose armor is elided ("mQINB...=txfz"), with a 422 at ascii-armor', async () => {
    const emulator = await start({ organization: 'hashicorp' });
    const reply = await clients(emulator).owner.post(gpgKeyPaths().keys, GPG_KEY_ADD_PAYLOAD);
    expectStatus(reply, 422);
    expect(JSON.stringify(reply.json)).toContain('/data/attributes/ascii-armor');
  });
});

describe('providers', () => {
  it('create: 201, the sample shape, the clock in milliseconds, the organization relationship', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now });
    const org = emulator.organization;
    const reply = await clients(emulator).owner.post(
      providerPaths(org, 'example').providers,
      replaceAt(PROVIDER_CREATE_PAYLOAD, 'data.attributes', {
        name: 'example',
        namespace: org,
        'registry-name': 'private',
      }),
    );
    expectJsonApi(reply, 201);
    expectShape(reply.json, PROVIDER_CREATE_RESPONSE, varsFor(org));
    expect(str(reply.json, 'data.attributes.created-at')).toBe(new Date(clock.t).toISOString());
    expect(str(reply.json, 'data.attributes.updated-at')).toBe(new Date(clock.t).toISOString());
    expect(obj(reply.json, 'data.attributes.permissions')).toEqual({ 'can-delete': true });
  });

  it('get: lists its versions in relationships.versions like the documented Get sample', async () => {
    const emulator = await start();
    const org = emulator.organization;
    const { owner } = clients(emulator);
    const paths = providerPaths(org, release.name);
    await createProvider(owner, org, release.name);

    const empty = await owner.get(paths.provider);
    expectJsonApi(empty, 200);
    expectShape(empty.json, PROVIDER_CREATE_RESPONSE, varsFor(org));

    const version = await createVersion(owner, org, release.name, {
      version: '1.2.3',
      'key-id': release.keyId,
      protocols: ['6.0'],
    });
    const full = await owner.get(paths.provider);
    expectJsonApi(full, 200);
    expectShape(full.json, PROVIDER_GET_RESPONSE, varsFor(org));
    expect(arr(full.json, 'data.relationships.versions.data')).toEqual([
      { id: str(version, 'data.id'), type: 'registry-provider-versions' },
    ]);

    const byId = await owner.get(`/api/v2/registry-providers/${str(full.json, 'data.id')}`);
    expectJsonApi(byId, 200);
    expect(byId.json).toEqual(full.json);
  });

  it('list: the documented envelope (absolute links, meta.pagination) around provider items', async () => {
    const emulator = await start();
    const org = emulator.organization;
    const { owner } = clients(emulator);
    await createProvider(owner, org, 'example');
    await createProvider(owner, org, 'second');
    // Page size 1 of 2 gives the sample's null pattern: prev null, next and last set.
    const reply = await owner.get(
      `${providerPaths(org, 'example').providers}?page%5Bnumber%5D=1&page%5Bsize%5D=1`,
    );
    expectJsonApi(reply, 200);
    expectShape(
      reply.json,
      { data: [PROVIDER_GET_RESPONSE.data], ...PROVIDER_LIST_ENVELOPE },
      { 'my-organization': org, hashicorp: org, aws: 'example' },
    );
    expect(obj(reply.json, 'meta.pagination')).toEqual({
      'current-page': 1,
      'page-size': 1,
      'prev-page': null,
      'next-page': 2,
      'total-pages': 2,
      'total-count': 2,
    });
  });
});

describe('versions', () => {
  it('create: 201 with the sample shape, both upload links, no download link, flags false', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now });
    const org = emulator.organization;
    const { owner } = clients(emulator);
    const provider = await createProvider(owner, org, release.name);
    const reply = await owner.post(
      providerPaths(org, release.name).versions,
      replaceAt(VERSION_CREATE_PAYLOAD, 'data.attributes', {
        version: '1.2.3',
        'key-id': release.keyId,
        protocols: ['6.0'],
      }),
    );
    expectJsonApi(reply, 201);
    expectShape(reply.json, VERSION_CREATE, varsFor(org));
    expect(linkNames(reply.json)).toEqual(['shasums-sig-upload', 'shasums-upload']);
    expect(obj(reply.json, 'data.attributes')).toMatchObject({
      version: '1.2.3',
      'key-id': release.keyId,
      protocols: ['6.0'],
      'created-at': new Date(clock.t).toISOString(),
      'shasums-uploaded': false,
      'shasums-sig-uploaded': false,
      permissions: { 'can-delete': true, 'can-upload-asset': true },
    });
    expect(obj(reply.json, 'data.relationships.registry-provider.data')).toEqual({
      id: str(provider, 'data.id'),
      type: 'registry-providers',
    });
  });

  it.each([
    {
      first: 'sums' as const,
      links: ['shasums-download', 'shasums-sig-upload'],
      flags: { 'shasums-uploaded': true, 'shasums-sig-uploaded': false },
    },
    {
      first: 'sig' as const,
      links: ['shasums-sig-download', 'shasums-upload'],
      flags: { 'shasums-uploaded': false, 'shasums-sig-uploaded': true },
    },
  ])(
    'links switch file by file: after uploading only the $first file, links are $links',
    async ({ first, links, flags }) => {
      const emulator = await start();
      const org = emulator.organization;
      const { owner } = clients(emulator);
      const published = await publishFixture(emulator, { uploads: [first] });
      const reply = await owner.get(providerPaths(org, release.name).version(release.version));
      expectJsonApi(reply, 200);
      expect(linkNames(reply.json)).toEqual(links);
      expect(obj(reply.json, 'data.attributes')).toMatchObject(flags);
      const sample = replaceAt(
        VERSION_CREATE,
        'data.links',
        Object.fromEntries(links.map((l) => [l, 'https://archivist.terraform.io/v1/object/dmF1b...'])),
      );
      expectShape(reply.json, sample, varsFor(org));
      // The link that stayed an upload link is the same object as before: uploading the other file works.
      const other = first === 'sums' ? 'shasums-sig-upload' : 'shasums-upload';
      expectSuccess(await upload(linkOf(reply.json, other), first === 'sums' ? release.sig : release.sums));
      const after = await owner.get(providerPaths(org, release.name).version(release.version));
      expect(linkNames(after.json)).toEqual(['shasums-download', 'shasums-sig-download']);
      expect(str(published.version, 'data.id')).toBe(str(after.json, 'data.id'));
    },
  );

  it('get and list: with both files and five platforms uploaded, the documented Get and List samples', async () => {
    // A stopped clock makes the signed download links of both answers identical.
    const emulator = await start({ now: manualClock().now });
    const org = emulator.organization;
    const { owner } = clients(emulator);
    const pairs = release.zips.map((z) => `${z.os}_${z.arch}`);
    const published = await publishFixture(emulator, {
      platforms: pairs,
      uploads: ['sums', 'sig', ...pairs],
    });
    const paths = providerPaths(org, release.name);

    const one = await owner.get(paths.version(release.version));
    expectJsonApi(one, 200);
    expectShape(one.json, VERSION_GET, varsFor(org));
    expect(obj(one.json, 'data.attributes')).toMatchObject({
      'shasums-uploaded': true,
      'shasums-sig-uploaded': true,
    });
    expect(arr(one.json, 'data.relationships.platforms.data')).toEqual(
      [...published.platforms.values()].map((p) => ({
        id: str(p, 'data.id'),
        type: 'registry-provider-platforms',
      })),
    );
    expect(str(one.json, 'data.relationships.platforms.links.related')).toBe(
      `${paths.platforms(release.version)}`,
    );

    const list = await owner.get(paths.versions);
    expectJsonApi(list, 200);
    expectShape(list.json, VERSION_LIST, varsFor(org));
    expect(arr(list.json, 'data')).toEqual([obj(one.json, 'data')]);
    expect(obj(list.json, 'meta.pagination')).toEqual(VERSION_LIST_RESPONSE.meta.pagination);
  });
});

describe('platforms', () => {
  it('create: 201 with the sample shape and an upload link; get switches to the download link once uploaded', async () => {
    const emulator = await start();
    const org = emulator.organization;
    const { owner } = clients(emulator);
    await publishFixture(emulator);
    const zip = release.zip('linux', 'amd64');
    const paths = providerPaths(org, release.name);
    const created = await owner.post(
      paths.platforms(release.version),
      replaceAt(PLATFORM_CREATE_PAYLOAD, 'data.attributes', {
        os: zip.os,
        arch: zip.arch,
        shasum: zip.shasum,
        filename: zip.filename,
      }),
    );
    expectJsonApi(created, 201);
    expectShape(created.json, PLATFORM_CREATE_RESPONSE, varsFor(org));
    expect(obj(created.json, 'data.attributes')).toMatchObject({
      os: 'linux',
      arch: 'amd64',
      shasum: zip.shasum,
      filename: zip.filename,
      'provider-binary-uploaded': false,
    });

    const before = await owner.get(paths.platform(release.version, 'linux', 'amd64'));
    expectJsonApi(before, 200);
    expectShape(before.json, PLATFORM_CREATE_RESPONSE, varsFor(org));

    expectSuccess(await upload(linkOf(created.json, 'provider-binary-upload'), zip.bytes));
    const after = await owner.get(paths.platform(release.version, 'linux', 'amd64'));
    expectJsonApi(after, 200);
    expectShape(after.json, PLATFORM_GET_RESPONSE, varsFor(org));
    expect(linkNames(after.json)).toEqual(['provider-binary-download']);
    expect(str(after.json, 'data.id')).toBe(str(created.json, 'data.id'));
  });

  it('list: the documented List sample for two uploaded darwin platforms', async () => {
    const emulator = await start();
    const org = emulator.organization;
    await publishFixture(emulator, {
      platforms: ['darwin_amd64', 'darwin_arm64'],
      uploads: ['darwin_amd64', 'darwin_arm64'],
    });
    const reply = await clients(emulator).owner.get(
      providerPaths(org, release.name).platforms(release.version),
    );
    expectJsonApi(reply, 200);
    expectShape(reply.json, PLATFORM_LIST_RESPONSE, varsFor(org));
    expect(
      arr(reply.json, 'data').map((p) => `${str(p, 'attributes.os')}/${str(p, 'attributes.arch')}`),
    ).toEqual(['darwin/amd64', 'darwin/arm64']);
    expect(obj(reply.json, 'meta.pagination')).toEqual(PLATFORM_LIST_RESPONSE.meta.pagination);
  });

  it('a platform created by the helper is the same resource the list shows', async () => {
    const emulator = await start();
    const org = emulator.organization;
    const { owner } = clients(emulator);
    await publishFixture(emulator);
    const created = await createPlatform(
      owner,
      org,
      release.name,
      release.version,
      release.zip('linux', 'arm64'),
    );
    const list = await owner.get(providerPaths(org, release.name).platforms(release.version));
    expect(arr(list.json, 'data').map((p) => str(p, 'id'))).toEqual([str(created, 'data.id')]);
  });
});

describe('GPG keys', () => {
  it('add: 201 with the sample shape, a numeric id, the long key id, whole-second times', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now });
    const org = emulator.organization;
    const armor = publicKey('signer');
    const reply = await clients(emulator).owner.post(
      gpgKeyPaths().keys,
      replaceAt(GPG_KEY_ADD_PAYLOAD, 'data.attributes', { namespace: org, 'ascii-armor': armor }),
    );
    expectJsonApi(reply, 201);
    expectShape(reply.json, GPG_KEY_ADD_RESPONSE, varsFor(org));
    expect(obj(reply.json, 'data.attributes')).toMatchObject({
      'ascii-armor': armor,
      'key-id': release.keyId,
      namespace: org,
      'created-at': new Date(clock.t).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
    expect(str(reply.json, 'data.links.self')).toBe(`/v2/gpg-keys/${str(reply.json, 'data.id')}`);
  });

  it('get: the documented Get sample', async () => {
    const emulator = await start();
    const org = emulator.organization;
    const { owner } = clients(emulator);
    const added = await addGpgKey(owner, org, 'signer');
    const reply = await owner.get(gpgKeyPaths().key(org, release.keyId));
    expectJsonApi(reply, 200);
    expectShape(reply.json, GPG_KEY_GET_RESPONSE, varsFor(org));
    expect(reply.json).toEqual(added);
  });

  it('list: the documented List sample (relative links first/last/next/prev, meta.pagination)', async () => {
    const emulator = await start();
    const org = emulator.organization;
    const { owner } = clients(emulator);
    await addGpgKey(owner, org, 'signer');
    await addGpgKey(owner, org, 'other');
    const reply = await owner.get(gpgKeyPaths().list(org, '&page%5Bnumber%5D=1&page%5Bsize%5D=15'));
    expectJsonApi(reply, 200);
    expect(obj(reply.json, 'meta.pagination')).toEqual(GPG_KEY_LIST_RESPONSE.meta.pagination);
    expectShape(reply.json, GPG_KEY_LIST_RESPONSE, varsFor(org));
  });
});

describe('deletes answer 204 No Content', () => {
  it.each([
    ['a platform', (p: ReturnType<typeof providerPaths>) => p.platform('1.2.3', 'linux', 'amd64')],
    ['a version', (p: ReturnType<typeof providerPaths>) => p.version('1.2.3')],
    ['a provider', (p: ReturnType<typeof providerPaths>) => p.provider],
  ])('%s', async (_what, pathOf) => {
    const emulator = await start();
    const { owner } = clients(emulator);
    await publishFixture(emulator, { platforms: ['linux_amd64'] });
    const path = pathOf(providerPaths(emulator.organization, release.name));
    const reply = await owner.delete(path);
    expectStatus(reply, 204);
    expect(reply.bytes.length).toBe(0);
    expectStatus(await owner.get(path), 404);
  });

  it('a GPG key (the GPG keys docs table says 201, which registry-api.md §4.2 marks unconfirmed)', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    await addGpgKey(owner, emulator.organization, 'signer');
    const path = gpgKeyPaths().key(emulator.organization, release.keyId);
    const reply = await owner.delete(path);
    expectStatus(reply, 204);
    expectStatus(await owner.get(path), 404);
  });
});
