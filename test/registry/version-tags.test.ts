/**
 * The client's side of provider version tags: the format rules checked before sending (registry_tagging.mdx:
 * keys up to 128, values up to 256 characters of letters, digits, spaces and `_.=+-@:`), and the documented
 * 2026 samples (hashicorp/web-unified-docs: …/private-registry/providers/version-tags.mdx, providers/index.mdx),
 * served over loopback, read whole: the tag bindings, the PATCH (its payload as documented, its answer whose
 * platforms relationship has another name), and both shapes of the versions list.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHostname } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';
import { createRegistryClient, type RegistryClient } from '../../src/registry/http.js';
import type { ProviderAddress } from '../../src/registry/paths.js';
import { listVersionTags, setVersionTags, tagFilterQuery } from '../../src/registry/tagBindings.js';
import { matchesTagFilters, parseTag, parseTagFilter, parseTags, sameTags } from '../../src/registry/tags.js';
import { listVersionEntries } from '../../src/registry/versions.js';
import { Output } from '../../src/ui/output.js';
import { Capture } from '../helpers/cli.js';
import * as samples from '../emulator/documented-samples.js';

const ADDRESS: ProviderAddress = { organization: 'hashicorp', namespace: 'hashicorp', name: 'test-provider' };
const VERSIONS =
  '/api/v2/organizations/hashicorp/registry-providers/private/hashicorp/test-provider/versions';
const BINDINGS = '/api/v2/registry-provider-versions/provver-E94qRpUHFZezgEWC/tag-bindings';

/** What the loopback registry received. */
const received: { method: string; url: string; body: string }[] = [];
let server: Server;
let client: RegistryClient;

/** Answers by method, path and whether a tag filter was asked for. */
function answer(method: string, url: URL): unknown {
  if (method === 'GET' && url.pathname === BINDINGS) return samples.VERSION_TAG_BINDINGS_RESPONSE;
  if (method === 'PATCH' && url.pathname === `${VERSIONS}/0.0.4`) return samples.VERSION_TAGS_PATCH_RESPONSE;
  if (method === 'GET' && url.pathname === VERSIONS) {
    // The unfiltered sample says next-page 2 but total-pages 1 for its 4 items: served as the one page it is.
    return url.searchParams.has('filter[tagged][0][key]')
      ? samples.TAG_FILTERED_VERSION_LIST_RESPONSE
      : {
          ...samples.TAGGED_VERSION_LIST_RESPONSE,
          meta: {
            pagination: { ...samples.TAGGED_VERSION_LIST_RESPONSE.meta.pagination, 'next-page': null },
          },
        };
  }
  return undefined;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://registry.invalid');
      received.push({ method: req.method ?? '', url: req.url ?? '', body });
      const doc = answer(req.method ?? '', url);
      res
        .writeHead(doc === undefined ? 404 : 200, { 'content-type': 'application/vnd.api+json' })
        .end(JSON.stringify(doc ?? { errors: [{ status: '404' }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = createRegistryClient({
    apiHost: parseHostname(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'test'),
    token: 'version-tags-token',
    output: new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }),
    retry: { limit: 0 },
  });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the documented samples, read by the client', () => {
  it('reads the tag bindings of a version (two values of one key)', async () => {
    expect(await listVersionTags(client, 'provver-E94qRpUHFZezgEWC')).toEqual([
      { key: 'environment', value: 'dev' },
      { key: 'environment', value: 'testing' },
    ]);
  });

  it('sends the documented payload and takes the documented answer (registry-provider-platforms)', async () => {
    received.length = 0;
    await setVersionTags(client, ADDRESS, '0.0.4', [
      { key: 'environment', value: 'dev' },
      { key: 'environment', value: 'testing' },
    ]);
    expect(received).toHaveLength(1);
    expect(received[0]!.method).toBe('PATCH');
    expect(JSON.parse(received[0]!.body)).toEqual(samples.VERSION_TAGS_PATCH_PAYLOAD);
  });

  it("reads HCP Terraform's tag-aware versions list (no type is relied on), and asks the documented filter", async () => {
    const all = await listVersionEntries(client, ADDRESS);
    expect(all.map((e) => [e.version, e.resource, e.tags])).toEqual([
      ['3.9.0', undefined, []],
      ['3.7.1', undefined, []],
      ['3.6.0', undefined, []],
      ['3.5.1', undefined, []],
    ]);
    received.length = 0;
    const filtered = await listVersionEntries(client, ADDRESS, [{ key: 'environment', value: 'testing' }]);
    expect(filtered).toEqual([
      { version: '3.1.3', resource: undefined, tags: [{ key: 'environment', value: 'testing' }] },
    ]);
    // providers/index.mdx, "Sample request with query parameters".
    const query = new URL(received[0]!.url, 'http://x').searchParams;
    expect(query.get('filter[tagged][0][key]')).toBe('environment');
    expect(query.get('filter[tagged][0][value]')).toBe('testing');
  });
});

describe('tag rules and filters', () => {
  it('parses key=value at the first =, and refuses what the registry would answer 422 to', () => {
    expect(parseTag('environment=a=b')).toEqual({ key: 'environment', value: 'a=b' });
    expect(parseTag('team name=core @ eu:1')).toEqual({ key: 'team name', value: 'core @ eu:1' });
    expect(parseTag(`${'k'.repeat(128)}=${'v'.repeat(256)}`).key).toHaveLength(128);
    const refused: [string, RegExp][] = [
      ['environment', /expected key=value/],
      ['=dev', /the key is empty/],
      ['environment=', /the value is empty/],
      ['env/x=dev', /the key holds "\/"; only letters, digits, spaces and _ \. = \+ - @ : are allowed/],
      ['environment=dév', /the value holds "é"/],
      [`${'k'.repeat(129)}=v`, /the key has 129 characters; at most 128 are allowed/],
      [`k=${'v'.repeat(257)}`, /the value has 257 characters; at most 256 are allowed/],
      [' env=dev', /the key begins or ends with a space/],
    ];
    for (const [text, message] of refused) {
      expect(() => parseTag(text), text).toThrow(UsageError);
      expect(() => parseTag(text), text).toThrow(message);
    }
  });

  it('drops repeats and sorts; compares sets; filters as the platform does (key AND value, OR across)', () => {
    expect(parseTags(['team=core', 'environment=prod', 'team=core'])).toEqual([
      { key: 'environment', value: 'prod' },
      { key: 'team', value: 'core' },
    ]);
    expect(
      sameTags(
        [
          { key: 'a', value: '1' },
          { key: 'b', value: '2' },
        ],
        [
          { key: 'b', value: '2' },
          { key: 'a', value: '1' },
        ],
      ),
    ).toBe(true);
    expect(sameTags([{ key: 'a', value: '1' }], [{ key: 'a', value: '2' }])).toBe(false);
    const tags = [{ key: 'environment', value: 'prod' }];
    expect(matchesTagFilters(tags, [parseTagFilter('environment')])).toBe(true);
    expect(matchesTagFilters(tags, [parseTagFilter('environment=dev')])).toBe(false);
    expect(
      matchesTagFilters(tags, [parseTagFilter('environment=dev'), parseTagFilter('environment=prod')]),
    ).toBe(true);
    expect(tagFilterQuery([parseTagFilter('environment'), parseTagFilter('team=core')])).toEqual({
      'filter[tagged][0][key]': 'environment',
      'filter[tagged][1][key]': 'team',
      'filter[tagged][1][value]': 'core',
    });
  });
});
