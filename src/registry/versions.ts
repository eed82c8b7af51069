/** Provider versions: list, read, create, delete. */
import type { RegistryClient } from './http.js';
import { versionsPath, type ProviderAddress } from './paths.js';
import { orUndefinedOn404 } from './providers.js';
import { createdVersionResource, documentOf, versionResource } from './schemas.js';
import type { VersionResource } from './types.js';

/** What a new version declares. */
export interface VersionAttributes {
  version: string;
  keyId: string;
  protocols: string[];
}

/** Every version of the provider (all pages). */
export async function listVersions(
  client: RegistryClient,
  address: ProviderAddress,
): Promise<VersionResource[]> {
  return client.list(versionsPath(address), versionResource);
}

/** One version, or undefined when absent. */
export async function getVersion(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
): Promise<VersionResource | undefined> {
  const doc = await orUndefinedOn404(client.get(versionsPath(address, version), documentOf(versionResource)));
  return doc?.data;
}

/** Creates a version; the answer carries the upload links of SHA256SUMS and its signature. */
export async function createVersion(
  client: RegistryClient,
  address: ProviderAddress,
  attributes: VersionAttributes,
): Promise<VersionResource> {
  const path = versionsPath(address);
  const doc = await client.read('POST', path, documentOf(createdVersionResource), {
    json: {
      data: {
        type: 'registry-provider-versions',
        attributes: {
          version: attributes.version,
          'key-id': attributes.keyId,
          protocols: attributes.protocols,
        },
      },
    },
  });
  return doc.data;
}

/** Deletes a version with its platforms and files. */
export async function deleteVersion(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
): Promise<void> {
  await client.request('DELETE', versionsPath(address, version));
}
