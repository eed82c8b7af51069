/**
 * 422 answers (PRODUCT.md §6): one JSON:API error per problem, titled "invalid attribute", whose
 * `source.pointer` names the attribute. Two modes: by default the emulator accepts what the real registry is
 * documented to accept (registry-api.md §6.1, §6.2: key-id "abcdefg", no protocols, shasum "shasum",
 * filename "filename"); `strict: true` refuses those too. Semver, protocol values, os/arch, duplicates and the
 * GPG key algorithm are validated in both modes. A refused create changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { BLANK_REGISTRY_NAME_ERRORS } from './documented-samples.js';
import {
  addGpgKey,
  call,
  clients,
  expectErrorDocument,
  expectStatus,
  gpgKeyPaths,
  keyIdOf,
  loadRelease,
  platformPayload,
  providerPaths,
  providerPayload,
  publicKey,
  publishFixture,
  secretKey,
  versionPayload,
} from '../helpers/emulator/index.js';
import { arr, type JsonObject } from '../helpers/json.js';

const release = loadRelease();
const zip = release.zip('linux', 'amd64');
const MODES = ['default', 'strict'] as const;
type Mode = (typeof MODES)[number];
const emulators = {} as Record<Mode, Emulator>;

beforeAll(async () => {
  for (const mode of MODES) {
    const emulator = await startEmulator({ strict: mode === 'strict' });
    // Provider, signer key, version 1.2.3 with its linux/amd64 platform: the targets of the duplicate checks.
    await publishFixture(emulator, { platforms: ['linux_amd64'] });
    emulators[mode] = emulator;
  }
});

afterAll(async () => {
  await Promise.all(MODES.map((m) => emulators[m].close()));
});

const goodVersion: JsonObject = { version: '2.0.0', 'key-id': release.keyId, protocols: ['5.0', '6.0'] };
const goodPlatform: JsonObject = { os: 'darwin', arch: 'arm64', shasum: zip.shasum, filename: zip.filename };

function without(attributes: JsonObject, key: string): JsonObject {
  const copy = { ...attributes };
  delete copy[key];
  return copy;
}

async function count(emulator: Emulator, path: string): Promise<number> {
  const reply = await clients(emulator).owner.get(path);
  expectStatus(reply, 200);
  return arr(reply.json, 'data').length;
}

/** Posts a version with these attributes and returns the answer, checking a refusal created nothing. */
async function postVersion(mode: Mode, attributes: JsonObject, path?: string) {
  const emulator = emulators[mode];
  const paths = providerPaths(emulator.organization, release.name);
  const before = await count(emulator, paths.versions);
  const reply = await clients(emulator).owner.post(path ?? paths.versions, versionPayload(attributes));
  if (reply.status !== 201) expect(await count(emulator, paths.versions)).toBe(before);
  return reply;
}

async function postPlatform(mode: Mode, attributes: JsonObject) {
  const emulator = emulators[mode];
  const paths = providerPaths(emulator.organization, release.name);
  const before = await count(emulator, paths.platforms(release.version));
  const reply = await clients(emulator).owner.post(
    paths.platforms(release.version),
    platformPayload(attributes),
  );
  if (reply.status !== 201) expect(await count(emulator, paths.platforms(release.version))).toBe(before);
  return reply;
}

/** Removes what an accepted create made, so that every case starts from the seed. */
async function undoVersion(mode: Mode, version: string): Promise<void> {
  const emulator = emulators[mode];
  expectStatus(
    await clients(emulator).owner.delete(providerPaths(emulator.organization, release.name).version(version)),
    204,
  );
}

async function undoPlatform(mode: Mode, os: string, arch: string): Promise<void> {
  const emulator = emulators[mode];
  const path = providerPaths(emulator.organization, release.name).platform(release.version, os, arch);
  expectStatus(await clients(emulator).owner.delete(path), 204);
}

function expect422(reply: Awaited<ReturnType<typeof call>>, attribute: string, detail?: RegExp): void {
  const errors = expectErrorDocument(reply, 422, { pointer: `/data/attributes/${attribute}`, detail });
  for (const error of errors) expect(error.title).toBe('invalid attribute');
}

describe.each(MODES)('version create, %s mode: 422 with a pointer', (mode) => {
  it.each<[string, JsonObject, string, RegExp?]>([
    ['missing version', without(goodVersion, 'version'), 'version', /can't be blank/],
    ['missing key-id', without(goodVersion, 'key-id'), 'key-id', /can't be blank/],
    ['empty version', { ...goodVersion, version: '' }, 'version'],
    ['version as a number', { ...goodVersion, version: 123 }, 'version'],
    ['key-id as a number', { ...goodVersion, 'key-id': 1234567890123456 }, 'key-id'],
    ['protocols as a string', { ...goodVersion, protocols: '5.0' }, 'protocols'],
    ['protocols as numbers', { ...goodVersion, protocols: [5, 6] }, 'protocols'],
    ['protocols as an object', { ...goodVersion, protocols: { 0: '5.0' } }, 'protocols'],
    ['version v1.2.3 (not semver: leading v)', { ...goodVersion, version: 'v1.2.3' }, 'version'],
    ['version 1.2 (not semver)', { ...goodVersion, version: '1.2' }, 'version'],
    ['version latest (not semver)', { ...goodVersion, version: 'latest' }, 'version'],
    ['version 01.2.3 (leading zero)', { ...goodVersion, version: '01.2.3' }, 'version'],
    ['protocols ["3.0"]', { ...goodVersion, protocols: ['3.0'] }, 'protocols'],
    ['protocols ["7.0"]', { ...goodVersion, protocols: ['7.0'] }, 'protocols'],
    ['protocols ["5"]', { ...goodVersion, protocols: ['5'] }, 'protocols'],
    ['protocols ["5.0", "6.1"]', { ...goodVersion, protocols: ['5.0', '6.1'] }, 'protocols'],
    [
      'a duplicate version',
      { ...goodVersion, version: release.version },
      'version',
      /has already been taken/,
    ],
  ])('%s', async (_name, attributes, attribute, detail) => {
    expect422(await postVersion(mode, attributes), attribute, detail);
  });

  it('reports every problem at once, one error per attribute', async () => {
    const reply = await postVersion(mode, { version: 'latest', protocols: ['9.0'] });
    const errors = expectErrorDocument(reply, 422);
    expect(new Set(errors.map((e) => e.pointer))).toEqual(
      new Set(['/data/attributes/version', '/data/attributes/key-id', '/data/attributes/protocols']),
    );
  });

  it.each(['1.2.3-beta.1', '0.0.1', '10.20.30+build.5'])('accepts the semver %s', async (version) => {
    expectStatus(await postVersion(mode, { ...goodVersion, version }), 201);
    await undoVersion(mode, version);
  });
});

describe('version create: what the real registry accepts (go-tfe TestRegistryProviderVersionsCreate)', () => {
  it.each<[string, JsonObject]>([
    ['key-id "abcdefg"', { ...goodVersion, 'key-id': 'abcdefg' }],
    ['key-id "abcdefg" and no protocols (the go-tfe test body)', { version: '2.0.0', 'key-id': 'abcdefg' }],
    ['no protocols', without(goodVersion, 'protocols')],
    ['a 15-digit key id', { ...goodVersion, 'key-id': release.keyId.slice(1) }],
  ])('default mode accepts %s, with both upload links and no download link', async (_name, attributes) => {
    const reply = await postVersion('default', attributes);
    expectStatus(reply, 201);
    const links = reply.json as { data: { links: JsonObject } };
    expect(Object.keys(links.data.links).sort()).toEqual(['shasums-sig-upload', 'shasums-upload']);
    await undoVersion('default', '2.0.0');
  });

  it.each<[string, JsonObject, string]>([
    ['key-id "abcdefg"', { ...goodVersion, 'key-id': 'abcdefg' }, 'key-id'],
    ['a 15-digit key id', { ...goodVersion, 'key-id': release.keyId.slice(1) }, 'key-id'],
    ['a 17-digit key id', { ...goodVersion, 'key-id': `${release.keyId}0` }, 'key-id'],
    ['a key id with non-hex digits', { ...goodVersion, 'key-id': 'GHIJKLMNOPQRSTUV' }, 'key-id'],
    [
      'a fingerprint instead of the long key id',
      { ...goodVersion, 'key-id': `${'A'.repeat(24)}${release.keyId}` },
      'key-id',
    ],
    ['no protocols', without(goodVersion, 'protocols'), 'protocols'],
    ['empty protocols', { ...goodVersion, protocols: [] }, 'protocols'],
  ])('strict mode refuses %s', async (_name, attributes, attribute) => {
    expect422(await postVersion('strict', attributes), attribute);
  });

  it('strict mode accepts a proper long key id and protocols', async () => {
    expectStatus(await postVersion('strict', goodVersion), 201);
    await undoVersion('strict', '2.0.0');
  });
});

describe.each(MODES)('platform create, %s mode: 422 with a pointer', (mode) => {
  it.each<[string, JsonObject, string | string[], RegExp?]>([
    ['missing os', without(goodPlatform, 'os'), 'os', /can't be blank/],
    ['missing arch', without(goodPlatform, 'arch'), 'arch', /can't be blank/],
    ['missing shasum', without(goodPlatform, 'shasum'), 'shasum', /can't be blank/],
    ['missing filename', without(goodPlatform, 'filename'), 'filename', /can't be blank/],
    ['os as a number', { ...goodPlatform, os: 1 }, 'os'],
    ['shasum as a number', { ...goodPlatform, shasum: 1234 }, 'shasum'],
    ['filename as an array', { ...goodPlatform, filename: [zip.filename] }, 'filename'],
    ['os "foo"', { ...goodPlatform, os: 'foo' }, 'os'],
    ['arch "scrimbles"', { ...goodPlatform, arch: 'scrimbles' }, 'arch'],
    [
      'os "foo" and arch "scrimbles" (as go-tfe once used)',
      { ...goodPlatform, os: 'foo', arch: 'scrimbles' },
      ['os', 'arch'],
    ],
    ['darwin/386 (a pair Go does not build)', { ...goodPlatform, os: 'darwin', arch: '386' }, ['os', 'arch']],
    [
      'a duplicate platform (same os/arch)',
      { ...goodPlatform, os: 'linux', arch: 'amd64' },
      ['os', 'arch'],
      /has already been taken/,
    ],
  ])('%s', async (_name, attributes, attribute, detail) => {
    const reply = await postPlatform(mode, attributes);
    if (typeof attribute === 'string') {
      expect422(reply, attribute, detail);
    } else {
      const errors = expectErrorDocument(reply, 422, { detail });
      expect(errors.some((e) => attribute.some((a) => e.pointer === `/data/attributes/${a}`))).toBe(true);
    }
  });

  it.each([
    ['linux', 'arm64'],
    ['windows', 'amd64'],
    ['freebsd', 'amd64'],
    ['linux', 'arm'],
  ])('accepts %s/%s', async (os, arch) => {
    expectStatus(await postPlatform(mode, { ...goodPlatform, os, arch }), 201);
    await undoPlatform(mode, os, arch);
  });

  it('accepts the documented data.type "registry-provider-version-platforms" and an empty type alike', async () => {
    const emulator = emulators[mode];
    const path = providerPaths(emulator.organization, release.name).platforms(release.version);
    const reply = await clients(emulator).owner.post(path, { data: { type: '', attributes: goodPlatform } });
    expectStatus(reply, 201);
    await undoPlatform(mode, 'darwin', 'arm64');
  });
});

describe('platform create: what the real registry accepts (go-tfe TestRegistryProviderPlatformsCreate)', () => {
  it.each<[string, JsonObject]>([
    ['shasum "shasum" and filename "filename"', { ...goodPlatform, shasum: 'shasum', filename: 'filename' }],
    [
      'the 26-character shasum seen in python-tfe PR #145',
      { ...goodPlatform, shasum: '8f69533712fbb38a2dec1bba38' },
    ],
    ['a filename with a path', { ...goodPlatform, filename: `dist/${zip.filename}` }],
  ])('default mode accepts %s', async (_name, attributes) => {
    const reply = await postPlatform('default', attributes);
    expectStatus(reply, 201);
    expect(reply.json).toMatchObject({ data: { attributes: { 'provider-binary-uploaded': false } } });
    await undoPlatform('default', 'darwin', 'arm64');
  });

  it.each<[string, JsonObject, string]>([
    ['shasum "shasum"', { ...goodPlatform, shasum: 'shasum', filename: 'filename' }, 'shasum'],
    ['a 63-digit shasum', { ...goodPlatform, shasum: zip.shasum.slice(1) }, 'shasum'],
    ['a 65-digit shasum', { ...goodPlatform, shasum: `${zip.shasum}0` }, 'shasum'],
    ['a shasum with non-hex digits', { ...goodPlatform, shasum: 'z'.repeat(64) }, 'shasum'],
    ['a filename with a path', { ...goodPlatform, filename: `dist/${zip.filename}` }, 'filename'],
    ['a filename with a Windows path', { ...goodPlatform, filename: `dist\\${zip.filename}` }, 'filename'],
    ['a filename going up', { ...goodPlatform, filename: `../${zip.filename}` }, 'filename'],
  ])('strict mode refuses %s', async (_name, attributes, attribute) => {
    expect422(await postPlatform('strict', attributes), attribute);
  });

  it('strict mode accepts a real shasum and a bare file name', async () => {
    expectStatus(await postPlatform('strict', goodPlatform), 201);
    await undoPlatform('strict', 'darwin', 'arm64');
  });
});

describe.each(MODES)('GPG key add, %s mode: 422 with a pointer', (mode) => {
  const add = (attributes: JsonObject) =>
    clients(emulators[mode]).owner.post(gpgKeyPaths().keys, { data: { type: 'gpg-keys', attributes } });

  it('an ECC (ed25519) key: only RSA and DSA are accepted', async () => {
    const org = emulators[mode].organization;
    expect422(await add({ namespace: org, 'ascii-armor': publicKey('ecc') }), 'ascii-armor', /RSA/);
  });

  it.each([
    ['text that is not armor', 'not a key'],
    [
      'an armor header with garbage inside',
      '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot base64 at all!\n-----END PGP PUBLIC KEY BLOCK-----\n',
    ],
    ['a truncated key', publicKey('signer').slice(0, 400)],
  ])('invalid armor: %s', async (_name, armor) => {
    expect422(await add({ namespace: emulators[mode].organization, 'ascii-armor': armor }), 'ascii-armor');
  });

  it('a secret key block instead of the public key', async () => {
    expect422(
      await add({ namespace: emulators[mode].organization, 'ascii-armor': secretKey('other') }),
      'ascii-armor',
    );
  });

  it.each<[string, (org: string) => JsonObject, string]>([
    ['missing namespace', () => ({ 'ascii-armor': publicKey('other') }), 'namespace'],
    ['missing ascii-armor', (org) => ({ namespace: org }), 'ascii-armor'],
    ['ascii-armor as a number', (org) => ({ namespace: org, 'ascii-armor': 42 }), 'ascii-armor'],
  ])('%s', async (_name, attributes, attribute) => {
    expect422(await add(attributes(emulators[mode].organization)), attribute);
  });

  it('the same key twice in one namespace: "has already been taken"', async () => {
    const org = emulators[mode].organization;
    const errors = expectErrorDocument(
      await add({ namespace: org, 'ascii-armor': publicKey('signer') }),
      422,
      {
        detail: /has already been taken/,
      },
    );
    expect(
      errors.every((e) => typeof e.pointer === 'string' && e.pointer.startsWith('/data/attributes/')),
    ).toBe(true);
  });

  it('accepts another RSA key; none of the refusals above added one', async () => {
    const emulator = emulators[mode];
    const { owner } = clients(emulator);
    const list = await owner.get(gpgKeyPaths().list(emulator.organization));
    expect(arr(list.json, 'data')).toHaveLength(1);
    await addGpgKey(owner, emulator.organization, 'other');
    expectStatus(await owner.delete(gpgKeyPaths().key(emulator.organization, keyIdOf('other'))), 204);
  });
});

describe.each(MODES)('provider create, %s mode', (mode) => {
  const create = (attributes: JsonObject) => {
    const org = emulators[mode].organization;
    return clients(emulators[mode]).owner.post(providerPaths(org, 'x').providers, {
      data: { type: 'registry-providers', attributes },
    });
  };

  it('an empty registry-name: the two documented errors, both at registry-name', async () => {
    const org = emulators[mode].organization;
    const errors = expectErrorDocument(
      await create({ name: 'p', namespace: org, 'registry-name': '' }),
      422,
      {
        pointer: '/data/attributes/registry-name',
      },
    );
    expect(errors.map((e) => ({ title: e.title, detail: e.detail }))).toEqual(BLANK_REGISTRY_NAME_ERRORS);
  });

  it('an invalid registry-name: only "is not included in the list"', async () => {
    const org = emulators[mode].organization;
    const errors = expectErrorDocument(
      await create({ name: 'p', namespace: org, 'registry-name': 'secret' }),
      422,
      {
        pointer: '/data/attributes/registry-name',
      },
    );
    expect(errors.map((e) => ({ title: e.title, detail: e.detail }))).toEqual([
      BLANK_REGISTRY_NAME_ERRORS[1],
    ]);
  });

  it.each<[string, (org: string) => JsonObject, string, RegExp?]>([
    ['missing name', (org) => ({ namespace: org, 'registry-name': 'private' }), 'name', /can't be blank/],
    ['name as a number', (org) => ({ name: 7, namespace: org, 'registry-name': 'private' }), 'name'],
    ['missing namespace', () => ({ name: 'p', 'registry-name': 'private' }), 'namespace', /can't be blank/],
    [
      'a duplicate provider',
      (org) => ({ name: release.name, namespace: org, 'registry-name': 'private' }),
      'name',
      /has already been taken/,
    ],
  ])('%s', async (_name, attributes, attribute, detail) => {
    expect422(await create(attributes(emulators[mode].organization)), attribute, detail);
  });

  it('a body that is not JSON: 400 with an error document', async () => {
    const emulator = emulators[mode];
    const reply = await call(emulator.url, 'POST', providerPaths(emulator.organization, 'x').providers, {
      token: emulator.ownerToken,
      body: '{"data": ',
    });
    expectErrorDocument(reply, 400);
  });

  it('a body without data: 422 at /data', async () => {
    expectErrorDocument(
      await clients(emulators[mode]).owner.post(providerPaths(emulators[mode].organization, 'x').providers, {
        attributes: providerPayload('a', 'b'),
      }),
      422,
      { pointer: '/data' },
    );
  });
});
