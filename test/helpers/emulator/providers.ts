/** The provider resource: its documented paths (with those of its versions and platforms), body and creation. */
import type { JsonObject } from '../json.js';
import { expectStatus, type Api } from './http.js';

/** The documented paths of one private provider of `org`. */
export function providerPaths(org: string, name: string, registry = 'private') {
  const providers = `/api/v2/organizations/${org}/registry-providers`;
  const provider = `${providers}/${registry}/${org}/${name}`;
  const versions = `${provider}/versions`;
  return {
    providers,
    provider,
    versions,
    version: (version: string) => `${versions}/${version}`,
    platforms: (version: string) => `${versions}/${version}/platforms`,
    platform: (version: string, os: string, arch: string) => `${versions}/${version}/platforms/${os}/${arch}`,
  };
}

/** Provider create body. */
export function providerPayload(org: string, name: string, registryName = 'private'): JsonObject {
  return {
    data: { type: 'registry-providers', attributes: { name, namespace: org, 'registry-name': registryName } },
  };
}

/** Creates the provider (201 expected) and returns its document. */
export async function createProvider(api: Api, org: string, name: string): Promise<unknown> {
  const reply = await api.post(providerPaths(org, name).providers, providerPayload(org, name));
  expectStatus(reply, 201);
  return reply.json;
}
