/**
 * The emulator's provider version tags against the documented samples (HCP Terraform, 2026; hashicorp/
 * web-unified-docs: content/terraform-docs-common/docs/cloud-docs/api-docs/private-registry/providers/
 * version-tags.mdx and providers/index.mdx, transcribed in ./documented-samples.ts): the PATCH that replaces a
 * version's tag bindings (200 with the sample's document, 400/404/422 as listed), the tag bindings read by
 * version id, the tag-filtered versions list, and tags kept in the saved state.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  TAG_FILTERED_VERSION_LIST_RESPONSE,
  TAGGED_VERSION_LIST_RESPONSE,
  VERSION_TAG_BINDINGS_RESPONSE,
  VERSION_TAGS_PATCH_PAYLOAD,
  VERSION_TAGS_PATCH_RESPONSE,
} from './documented-samples.js';
import {
  JSONAPI,
  call,
  clients,
  createProvider,
  createVersion,
  emulatorPerTest,
  expectErrorDocument,
  expectStatus,
  keyIdOf,
  manualClock,
  providerPaths,
  type Reply,
} from '../helpers/emulator/index.js';
import type { Emulator } from '../../src/emulator/server.js';
import { arr, obj, replaceAt, str } from '../helpers/json.js';
import { shapeMismatches } from '../helpers/shape.js';

const start = emulatorPerTest();
const ORG = 'hashicorp';
const NAME = 'test-provider';
const paths = providerPaths(ORG, NAME);

/** The samples' names → ours: the PATCH sample's platforms link names 5.14.0 for the patched 0.0.4. */
const VARS = { hashicorp: ORG, 'test-provider': NAME, '0.0.4': '0.0.4', '5.14.0': '0.0.4' };

/** An emulator of organization "hashicorp" holding provider test-provider with versions `versions`. */
async function seeded(versions = ['0.0.4']): Promise<Emulator> {
  const emulator = await start({ organization: ORG, now: manualClock().now });
  const { owner } = clients(emulator);
  await createProvider(owner, ORG, NAME);
  for (const version of versions) {
    await createVersion(owner, ORG, NAME, { version, 'key-id': keyIdOf('signer'), protocols: ['5.0'] });
  }
  return emulator;
}

function patch(
  emulator: Emulator,
  version: string,
  body: unknown,
  token = emulator.ownerToken,
): Promise<Reply> {
  return call(emulator.url, 'PATCH', paths.version(version), { token, body });
}

/** The sample payload with other bindings. */
function payload(tags: { key: unknown; value: unknown }[]): unknown {
  return replaceAt(
    VERSION_TAGS_PATCH_PAYLOAD,
    'data.relationships.tag-bindings.data',
    tags.map((t) => ({ type: 'tag-bindings', attributes: t })),
  );
}

async function tagsOf(emulator: Emulator, version = '0.0.4'): Promise<{ key: string; value: string }[]> {
  const { owner } = clients(emulator);
  const doc = await owner.get(paths.version(version));
  const related = str(doc.json, 'data.relationships.tag-bindings.links.related');
  const reply = await owner.get(related);
  expectStatus(reply, 200);
  return arr(reply.json, 'data').map((b) => ({
    key: str(b, 'attributes.key'),
    value: str(b, 'attributes.value'),
  }));
}

describe('the version tags PATCH (providers/version-tags.mdx)', () => {
  it('takes the documented sample payload verbatim and answers the documented sample document', async () => {
    const emulator = await seeded();
    const reply = await patch(emulator, '0.0.4', VERSION_TAGS_PATCH_PAYLOAD);
    expectStatus(reply, 200);
    expect(reply.headers.get('content-type')).toContain(JSONAPI);
    expect(shapeMismatches(reply.json, VERSION_TAGS_PATCH_RESPONSE, VARS)).toEqual([]);
    expect(str(reply.json, 'data.relationships.tag-bindings.links.related')).toBe(
      `/api/v2/registry-provider-versions/${str(reply.json, 'data.id')}/tag-bindings`,
    );
    // The sample's two bindings share the key "environment": both are kept.
    expect(await tagsOf(emulator)).toEqual([
      { key: 'environment', value: 'dev' },
      { key: 'environment', value: 'testing' },
    ]);
  });

  it('replaces the whole set: bindings left out are removed, kept ones keep their id and created-at', async () => {
    const emulator = await seeded();
    expectStatus(await patch(emulator, '0.0.4', VERSION_TAGS_PATCH_PAYLOAD), 200);
    const before = emulator.store.data.versions[0]!.tags!.find((t) => t.value === 'testing')!;
    const reply = await patch(
      emulator,
      '0.0.4',
      payload([
        { key: 'environment', value: 'testing' },
        { key: 'team', value: 'core' },
        { key: 'team', value: 'core' },
      ]),
    );
    expectStatus(reply, 200);
    expect(await tagsOf(emulator)).toEqual([
      { key: 'environment', value: 'testing' },
      { key: 'team', value: 'core' },
    ]);
    const kept = emulator.store.data.versions[0]!.tags!.find((t) => t.value === 'testing')!;
    expect(kept).toEqual(before);
    // An empty list removes every tag; a PATCH naming no tag-bindings leaves them as they are.
    expectStatus(await patch(emulator, '0.0.4', payload([])), 200);
    expect(await tagsOf(emulator)).toEqual([]);
    expectStatus(await patch(emulator, '0.0.4', payload([{ key: 'a', value: 'b' }])), 200);
    const untouched = replaceAt(VERSION_TAGS_PATCH_PAYLOAD, 'data.relationships', {});
    expectStatus(await patch(emulator, '0.0.4', untouched), 200);
    expect(await tagsOf(emulator)).toEqual([{ key: 'a', value: 'b' }]);
  });

  it.each([
    [
      'a key with a character outside letters, digits, spaces and _.=+-@:',
      { key: 'env/x', value: 'dev' },
      'key',
    ],
    ['an empty value', { key: 'environment', value: '' }, 'value'],
    ['a key of 129 characters', { key: 'k'.repeat(129), value: 'dev' }, 'key'],
    ['a value of 257 characters', { key: 'environment', value: 'v'.repeat(257) }, 'value'],
    ['a value that is not a string', { key: 'environment', value: 3 }, 'value'],
  ])('answers 422 with a JSON:API error for %s, and changes nothing', async (_what, tag, part) => {
    const emulator = await seeded();
    expectStatus(await patch(emulator, '0.0.4', payload([{ key: 'keep', value: 'me' }])), 200);
    const reply = await patch(emulator, '0.0.4', payload([{ key: 'ok', value: 'fine' }, tag]));
    expectErrorDocument(reply, 422, {
      pointer: `/data/relationships/tag-bindings/data/1/attributes/${part}`,
    });
    expect(await tagsOf(emulator)).toEqual([{ key: 'keep', value: 'me' }]);
  });

  it('answers 400 to a body that cannot be parsed, 404 to an absent version and to a member token', async () => {
    const emulator = await seeded();
    expectErrorDocument(
      await call(emulator.url, 'PATCH', paths.version('0.0.4'), {
        token: emulator.ownerToken,
        body: '{not json',
      }),
      400,
    );
    expectErrorDocument(await patch(emulator, '0.0.4', { data: 'no' }), 400);
    expectErrorDocument(await patch(emulator, '9.9.9', VERSION_TAGS_PATCH_PAYLOAD), 404);
    expectErrorDocument(
      await patch(emulator, '0.0.4', VERSION_TAGS_PATCH_PAYLOAD, emulator.memberToken),
      404,
    );
    expect(await tagsOf(emulator)).toEqual([]);
  });
});

describe('the tag bindings of a version (GET /api/v2/registry-provider-versions/:id/tag-bindings)', () => {
  it('answers the documented sample shape, its target the version in the versions list', async () => {
    const emulator = await seeded();
    expectStatus(await patch(emulator, '0.0.4', VERSION_TAGS_PATCH_PAYLOAD), 200);
    const id = emulator.store.data.versions[0]!.id;
    const reply = await clients(emulator).owner.get(`/api/v2/registry-provider-versions/${id}/tag-bindings`);
    expectStatus(reply, 200);
    expect(shapeMismatches(reply.json, VERSION_TAG_BINDINGS_RESPONSE, VARS)).toEqual([]);
    expect(str(reply.json, 'links.target')).toBe(`${paths.versions}?version=0.0.4`);
  });

  it('is 404 for an unknown id and for a token of another organization, 401 without a token', async () => {
    const emulator = await seeded();
    const id = emulator.store.data.versions[0]!.id;
    const { outsider, anonymous, owner, member } = clients(emulator);
    const path = `/api/v2/registry-provider-versions/${id}/tag-bindings`;
    expectErrorDocument(
      await owner.get('/api/v2/registry-provider-versions/provver-AAAAAAAAAAAAAAAA/tag-bindings'),
      404,
    );
    expectErrorDocument(await outsider.get(path), 404);
    expectErrorDocument(await anonymous.get(path), 401);
    expectStatus(await member.get(path), 200);
  });
});

describe('the tag-filtered versions list (providers/index.mdx, TFC only)', () => {
  it('answers the documented filtered sample, its filter kept in the links', async () => {
    const emulator = await seeded(['3.1.3', '3.1.4']);
    expectStatus(await patch(emulator, '3.1.3', payload([{ key: 'environment', value: 'testing' }])), 200);
    const reply = await clients(emulator).owner.get(
      `${paths.versions}?page[number]=1&page[size]=20&filter[tagged][0][key]=environment&filter[tagged][0][value]=testing`,
    );
    expectStatus(reply, 200);
    // The filtered sample's item has type public-registry-provider-versions and id "16", the unfiltered
    // sample's ephemeral-registry-provider-versions and a UUID: the emulator answers the latter's.
    const item = TAGGED_VERSION_LIST_RESPONSE.data[0];
    const sample = replaceAt(
      replaceAt(TAG_FILTERED_VERSION_LIST_RESPONSE, 'data.0.type', item.type),
      'data.0.id',
      item.id,
    );
    const vars = { ...VARS, RAUC: ORG, public: 'private', random: NAME, '3.1.3': '3.1.3' };
    expect(shapeMismatches(reply.json, sample, vars)).toEqual([]);
    expect(obj(reply.json, 'data.0.attributes')).toEqual({
      version: '3.1.3',
      tags: [{ key: 'environment', value: 'testing' }],
      status: '',
      name: NAME,
      namespace: ORG,
    });
  });

  it('ANDs a key and a value of one index, ORs different indexes; a bad filter parameter is a 400', async () => {
    const emulator = await seeded(['1.0.0', '1.1.0', '1.2.0', '1.3.0']);
    const tag = (version: string, tags: { key: string; value: string }[]): Promise<Reply> =>
      patch(emulator, version, payload(tags));
    expectStatus(await tag('1.0.0', [{ key: 'environment', value: 'prod' }]), 200);
    expectStatus(await tag('1.1.0', [{ key: 'environment', value: 'dev' }]), 200);
    expectStatus(await tag('1.2.0', [{ key: 'team', value: 'prod' }]), 200);
    const versions = async (query: string): Promise<string[]> => {
      const reply = await clients(emulator).owner.get(`${paths.versions}?${query}`);
      expectStatus(reply, 200);
      return arr(reply.json, 'data').map((v) => str(v, 'attributes.version'));
    };
    // providers/index.mdx: "Use the same index to combine a key and value with AND", "different indexes … OR".
    expect(await versions('filter[tagged][0][key]=environment&filter[tagged][0][value]=prod')).toEqual([
      '1.0.0',
    ]);
    expect(await versions('filter[tagged][0][key]=environment&filter[tagged][1][value]=prod')).toEqual([
      '1.0.0',
      '1.1.0',
      '1.2.0',
    ]);
    expect(await versions('filter[tagged][0][key]=nothing')).toEqual([]);
    expectErrorDocument(await clients(emulator).owner.get(`${paths.versions}?filter[tagged][x][key]=a`), 400);
  });
});

describe('persistence', () => {
  it('saves the tags with the version in the state file', async () => {
    const emulator = await seeded();
    expectStatus(await patch(emulator, '0.0.4', payload([{ key: 'environment', value: 'prod' }])), 200);
    const saved = JSON.parse(readFileSync(join(emulator.store.dataDir, 'state.json'), 'utf8')) as {
      versions: { tags?: { key: string; value: string; id: string }[] }[];
    };
    expect(saved.versions[0]?.tags).toEqual([
      expect.objectContaining({
        key: 'environment',
        value: 'prod',
        id: expect.stringMatching(/^tb-/) as string,
      }),
    ]);
  });
});
