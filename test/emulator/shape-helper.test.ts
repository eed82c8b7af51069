/** The shape checker itself: it must catch every kind of difference the document tests rely on it to catch. */
import { describe, expect, it } from 'vitest';
import {
  GPG_KEY_ADD_RESPONSE,
  VERSION_CREATE_RESPONSE,
  VERSION_LIST_RESPONSE,
} from './documented-samples.js';
import { replaceAt } from '../helpers/json.js';
import { shapeMismatches } from '../helpers/shape.js';

const vars = { hashicorp: 'example-org', aws: 'example', '3.1.1': '1.2.3' };

/** A version document as the emulator would write it for the sample's request. */
function goodVersion(): unknown {
  return {
    data: {
      id: 'provver-AbCdEfGh12345678',
      type: 'registry-provider-versions',
      attributes: {
        version: '1.2.3',
        'created-at': '2023-11-14T22:13:20.123Z',
        'updated-at': '2023-11-14T22:13:20.123Z',
        'key-id': '47D8C49E6154CCB3',
        protocols: ['6.0'],
        permissions: { 'can-delete': true, 'can-upload-asset': true },
        'shasums-uploaded': false,
        'shasums-sig-uploaded': false,
      },
      relationships: {
        'registry-provider': { data: { id: 'prov-ZZZZZZZZZZZZZZZZ', type: 'registry-providers' } },
        platforms: {
          data: [],
          links: {
            related:
              '/api/v2/organizations/example-org/registry-providers/private/example-org/example/versions/1.2.3/platforms',
          },
        },
      },
      links: {
        'shasums-upload': 'http://127.0.0.1:1234/_archivist/v1/object/cHV0Om9iai0.abc',
        'shasums-sig-upload': 'http://127.0.0.1:1234/_archivist/v1/object/cHV0Om9iai1.def',
      },
    },
  };
}

describe('shapeMismatches', () => {
  it('accepts a document of the same shape', () => {
    expect(shapeMismatches(goodVersion(), VERSION_CREATE_RESPONSE, vars)).toEqual([]);
  });

  it.each([
    ['a missing attribute', 'data.attributes', { version: '1.2.3' }, /missing key "created-at"/],
    ['an extra link', 'data.links.extra', 'x', /unexpected key "extra"/],
    [
      'a download link where the sample has an upload link',
      'data.links',
      {
        'shasums-download': 'http://h/_archivist/v1/object/x',
        'shasums-sig-upload': 'http://h/_archivist/v1/object/y',
      },
      /missing key "shasums-upload"/,
    ],
    ['a number instead of a boolean', 'data.attributes.shasums-uploaded', 0, /expected a boolean/],
    ['a string instead of an array', 'data.attributes.protocols', '6.0', /expected an array/],
    ['a wrong id prefix', 'data.id', 'ver-AbCdEfGh12345678', /version id/],
    ['a short id', 'data.id', 'provver-AbC', /version id/],
    [
      'whole seconds where milliseconds are documented',
      'data.attributes.created-at',
      '2023-11-14T22:13:20Z',
      /millisecond/,
    ],
    [
      'a non-archivist upload link',
      'data.links.shasums-upload',
      'http://127.0.0.1:1234/files/abc',
      /archivist/,
    ],
    [
      'a wrong relationship type',
      'data.relationships.registry-provider.data.type',
      'providers',
      /expected type "registry-providers"/,
    ],
    ['a wrong resource type', 'data.type', 'registry-provider-version', /expected type/],
    ['another version than the mapped one', 'data.attributes.version', '3.1.1', /expected "1.2.3"/],
    [
      'a related link with another organization',
      'data.relationships.platforms.links.related',
      '/api/v2/organizations/other/registry-providers/private/example-org/example/versions/1.2.3/platforms',
      /expected a path like/,
    ],
    [
      'an absolute related link',
      'data.relationships.platforms.links.related',
      'http://h/api/v2/organizations/example-org/registry-providers/private/example-org/example/versions/1.2.3/platforms',
      /relative link/,
    ],
    ['null instead of an object', 'data.relationships', null, /expected an object/],
  ])('reports %s', (_what, path, value, message) => {
    const mismatches = shapeMismatches(replaceAt(goodVersion(), path, value), VERSION_CREATE_RESPONSE, vars);
    expect(mismatches.length).toBeGreaterThan(0);
    expect(mismatches.join('\n')).toMatch(message);
  });

  it('compares unmapped strings by type only, mapped ones exactly', () => {
    const doc = replaceAt(goodVersion(), 'data.attributes.key-id', '0000000000000000');
    expect(shapeMismatches(doc, VERSION_CREATE_RESPONSE, vars)).toEqual([]);
    expect(
      shapeMismatches(doc, VERSION_CREATE_RESPONSE, { ...vars, '32966F3FB5AC1129': '47D8C49E6154CCB3' }),
    ).toEqual(['$.data.attributes.key-id: expected "47D8C49E6154CCB3", got "0000000000000000"']);
  });

  it('compares every array element with the sample element, and refuses elements an empty sample cannot vouch for', () => {
    const list = {
      ...VERSION_LIST_RESPONSE,
      data: [
        replaceAt(VERSION_LIST_RESPONSE.data[0], 'relationships.platforms.data', [
          { id: 'provpltfrm-x', type: 't' },
        ]),
      ],
    };
    expect(shapeMismatches(list, VERSION_LIST_RESPONSE).join('\n')).toMatch(
      /data\[0\]\.relationships\.platforms\.data\[0\]\.id/,
    );
    const created = replaceAt(goodVersion(), 'data.relationships.platforms.data', [
      { id: 'provpltfrm-AbCdEfGh12345678', type: 'registry-provider-platforms' },
    ]);
    expect(shapeMismatches(created, VERSION_CREATE_RESPONSE, vars).join('\n')).toMatch(/cannot vouch/);
  });

  it('checks pagination links: host-free path, parameter names, percent-encoded brackets', () => {
    const good =
      'http://127.0.0.1:9/api/v2/organizations/example-org/registry-providers/private/example-org/example/versions?page%5Bnumber%5D=1&page%5Bsize%5D=20';
    const sample = VERSION_LIST_RESPONSE.links.self;
    expect(shapeMismatches(good, sample, vars)).toEqual([]);
    expect(shapeMismatches(good.replace(/%5B/g, '[').replace(/%5D/g, ']'), sample, vars).join()).toMatch(
      /percent-encodes/,
    );
    expect(shapeMismatches(good.replace('page%5Bsize%5D=20', 'size=20'), sample, vars).join()).toMatch(
      /query parameters/,
    );
    expect(
      shapeMismatches(good.replace('page%5Bnumber%5D=1', 'page%5Bnumber%5D=x'), sample, vars).join(),
    ).toMatch(/should be a number/);
    expect(
      shapeMismatches(
        '/api/v2/organizations/example-org/registry-providers/private/example-org/example/versions?page%5Bnumber%5D=1&page%5Bsize%5D=20',
        sample,
        vars,
      ).join(),
    ).toMatch(/absolute/);
  });

  it('checks GPG keys: numeric string id, whole-second times', () => {
    const good = {
      data: {
        type: 'gpg-keys',
        id: '7',
        attributes: {
          'ascii-armor': '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nxsDN\n-----END PGP PUBLIC KEY BLOCK-----\n',
          'created-at': '2023-11-14T22:13:20Z',
          'key-id': '47D8C49E6154CCB3',
          namespace: 'example-org',
          source: '',
          'source-url': null,
          'trust-signature': '',
          'updated-at': '2023-11-14T22:13:20Z',
        },
        links: { self: '/v2/gpg-keys/7' },
      },
    };
    expect(shapeMismatches(good, GPG_KEY_ADD_RESPONSE, vars)).toEqual([]);
    expect(shapeMismatches(replaceAt(good, 'data.id', 7), GPG_KEY_ADD_RESPONSE, vars).join()).toMatch(
      /expected a string/,
    );
    expect(shapeMismatches(replaceAt(good, 'data.id', 'gpg-7'), GPG_KEY_ADD_RESPONSE, vars).join()).toMatch(
      /numeric/,
    );
    expect(
      shapeMismatches(
        replaceAt(good, 'data.attributes.created-at', '2023-11-14T22:13:20.000Z'),
        GPG_KEY_ADD_RESPONSE,
        vars,
      ).join(),
    ).toMatch(/whole-second/);
    expect(
      shapeMismatches(replaceAt(good, 'data.attributes.source-url', ''), GPG_KEY_ADD_RESPONSE, vars).join(),
    ).toMatch(/expected null/);
    expect(
      shapeMismatches(
        replaceAt(good, 'data.attributes.namespace', 'other'),
        GPG_KEY_ADD_RESPONSE,
        vars,
      ).join(),
    ).toMatch(/expected "example-org"/);
  });
});
