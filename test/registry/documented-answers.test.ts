/**
 * The client's schemas accept what the platform sends: every documented sample answer, served over loopback at
 * its documented path, is read by the resource function that asks for it and comes back whole, and fields the
 * platform may add later (at every level of the document) pass through instead of failing the read.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHostname } from '../../src/config/index.js';
import { addGpgKey, getGpgKey, listGpgKeys } from '../../src/registry/gpgKeys.js';
import { createRegistryClient, type RegistryClient } from '../../src/registry/http.js';
import type { ProviderAddress } from '../../src/registry/paths.js';
import {
  createPlatform,
  deletePlatform,
  getPlatform,
  listPlatforms,
} from '../../src/registry/providerPlatforms.js';
import { createProvider, getProvider } from '../../src/registry/providers.js';
import { listOf, providerResource } from '../../src/registry/schemas.js';
import { createVersion, deleteVersion, getVersion, listVersions } from '../../src/registry/versions.js';
import { Output } from '../../src/ui/output.js';
import { Capture } from '../helpers/cli.js';
import { isObject } from '../helpers/json.js';
import * as samples from '../emulator/documented-samples.js';

const ADDRESS: ProviderAddress = { organization: 'hashicorp', namespace: 'hashicorp', name: 'aws' };
const PROVIDERS = '/api/v2/organizations/hashicorp/registry-providers';
const PROVIDER = `${PROVIDERS}/private/hashicorp/aws`;
const VERSIONS = `${PROVIDER}/versions`;
const PLATFORMS = `${VERSIONS}/3.1.1/platforms`;
const KEYS = '/api/registry/private/v2/gpg-keys';

/** A copy of a document with an unknown field added to every object in it, as a newer platform might send. */
function withAddedFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withAddedFields);
  if (!isObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) copy[key] = withAddedFields(inner);
  copy['added-later'] = { nested: [1, 'two', null] };
  return copy;
}

/** `METHOD path` → the status and document answered (the path without its query string). */
type Answers = Map<string, { status: number; document: unknown }>;

function documentedAnswers(transform: (doc: unknown) => unknown): Answers {
  const answers: [string, number, unknown][] = [
    [`GET ${PROVIDER}`, 200, samples.PROVIDER_GET_RESPONSE],
    [`POST ${PROVIDERS}`, 201, samples.PROVIDER_CREATE_RESPONSE],
    [`GET ${VERSIONS}`, 200, samples.VERSION_LIST_RESPONSE],
    [`GET ${VERSIONS}/3.1.1`, 200, samples.VERSION_GET_RESPONSE],
    [`POST ${VERSIONS}`, 201, samples.VERSION_CREATE_RESPONSE],
    [`GET ${PLATFORMS}`, 200, samples.PLATFORM_LIST_RESPONSE],
    [`GET ${PLATFORMS}/linux/amd64`, 200, samples.PLATFORM_GET_RESPONSE],
    [`POST ${PLATFORMS}`, 201, samples.PLATFORM_CREATE_RESPONSE],
    [`GET ${KEYS}`, 200, samples.GPG_KEY_LIST_RESPONSE],
    [`GET ${KEYS}/hashicorp/32966F3FB5AC1129`, 200, samples.GPG_KEY_GET_RESPONSE],
    [`POST ${KEYS}`, 201, samples.GPG_KEY_ADD_RESPONSE],
  ];
  return new Map(answers.map(([key, status, doc]) => [key, { status, document: transform(doc) }]));
}

/** A loopback registry answering from `answers` (and 204 to every DELETE, as the platform does). */
async function serve(answers: Answers): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://registry.invalid').pathname;
      if (req.method === 'DELETE') {
        res.writeHead(204).end();
        return;
      }
      const answer = answers.get(`${req.method} ${path}`);
      if (answer === undefined) {
        res
          .writeHead(404, { 'content-type': 'application/vnd.api+json' })
          .end('{"errors":[{"status":"404"}]}');
        return;
      }
      res
        .writeHead(answer.status, { 'content-type': 'application/vnd.api+json' })
        .end(JSON.stringify(answer.document));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function clientFor(url: string): RegistryClient {
  return createRegistryClient({
    apiHost: parseHostname(url, 'test'),
    token: 'documented-samples-token',
    output: new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }),
    retry: { limit: 0 },
  });
}

/** Every resource function that reads an answer (with the client `current` returns), and its sample. */
function reads(current: () => RegistryClient): [string, () => Promise<unknown>, unknown][] {
  const platform = samples.PLATFORM_CREATE_PAYLOAD.data.attributes;
  return [
    ['getProvider', () => getProvider(current(), ADDRESS), samples.PROVIDER_GET_RESPONSE],
    ['createProvider', () => createProvider(current(), ADDRESS), samples.PROVIDER_CREATE_RESPONSE],
    ['listVersions', () => listVersions(current(), ADDRESS), samples.VERSION_LIST_RESPONSE],
    ['getVersion', () => getVersion(current(), ADDRESS, '3.1.1'), samples.VERSION_GET_RESPONSE],
    [
      'createVersion',
      () =>
        createVersion(current(), ADDRESS, {
          version: '3.1.1',
          keyId: '32966F3FB5AC1129',
          protocols: ['5.0'],
        }),
      samples.VERSION_CREATE_RESPONSE,
    ],
    ['listPlatforms', () => listPlatforms(current(), ADDRESS, '3.1.1'), samples.PLATFORM_LIST_RESPONSE],
    [
      'getPlatform',
      () => getPlatform(current(), ADDRESS, '3.1.1', 'linux', 'amd64'),
      samples.PLATFORM_GET_RESPONSE,
    ],
    [
      'createPlatform',
      () => createPlatform(current(), ADDRESS, '3.1.1', { ...platform }),
      samples.PLATFORM_CREATE_RESPONSE,
    ],
    ['listGpgKeys', () => listGpgKeys(current(), 'hashicorp'), samples.GPG_KEY_LIST_RESPONSE],
    ['getGpgKey', () => getGpgKey(current(), 'hashicorp', '32966F3FB5AC1129'), samples.GPG_KEY_GET_RESPONSE],
    [
      'addGpgKey',
      () => addGpgKey(current(), 'hashicorp', samples.GPG_KEY_ADD_PAYLOAD.data.attributes['ascii-armor']),
      samples.GPG_KEY_ADD_RESPONSE,
    ],
  ];
}

describe.each([
  ['as documented', (doc: unknown) => doc],
  ['with fields added at every level', withAddedFields],
] as const)('the documented sample answers, %s', (_, transform) => {
  let registry: { url: string; server: Server };
  beforeAll(async () => {
    registry = await serve(documentedAnswers(transform));
  });
  afterAll(() => {
    registry.server.close();
  });

  it.each(reads(() => clientFor(registry.url)))('%s reads its sample whole', async (_name, read, sample) => {
    expect(await read()).toEqual((transform(sample) as { data: unknown }).data);
  });

  it('a private provider list page (the documented envelope, items of the "Get a Provider" sample)', () => {
    const page = transform({
      ...samples.PROVIDER_LIST_ENVELOPE,
      data: [samples.PROVIDER_GET_RESPONSE.data],
    });
    expect(listOf(providerResource()).safeParse(page)).toEqual({ success: true, data: page });
  });

  it('deletes accept the empty 204 the platform answers', async () => {
    const client = clientFor(registry.url);
    await expect(deleteVersion(client, ADDRESS, '3.1.1')).resolves.toBeUndefined();
    await expect(deletePlatform(client, ADDRESS, '3.1.1', 'linux', 'amd64')).resolves.toBeUndefined();
  });
});
