/** Provider platforms of a version: list, read, create, delete (addressed by os and arch). */
import type { RegistryClient } from './http.js';
import { platformsPath, type ProviderAddress } from './paths.js';
import { orUndefinedOn404 } from './providers.js';
import { createdPlatformResource, documentOf, platformResource } from './schemas.js';
import type { PlatformResource } from '../terraform/api.js';

/** What a new platform declares: `filename` exactly as in SHA256SUMS, `shasum` its hash there. */
export interface PlatformAttributes {
  os: string;
  arch: string;
  shasum: string;
  filename: string;
}

/** Every platform of the version (all pages). */
export async function listPlatforms(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
): Promise<PlatformResource[]> {
  return client.list(platformsPath(address, version), platformResource());
}

/** One platform, or undefined when absent. */
export async function getPlatform(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
  os: string,
  arch: string,
): Promise<PlatformResource | undefined> {
  const doc = await orUndefinedOn404(
    client.get(platformsPath(address, version, os, arch), documentOf(platformResource())),
  );
  return doc?.data;
}

/** Creates a platform; the answer carries the binary's upload link. */
export async function createPlatform(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
  attributes: PlatformAttributes,
): Promise<PlatformResource> {
  const path = platformsPath(address, version);
  // The documented sample payload uses this type string; the registry does not check it.
  return client.create(path, 'registry-provider-version-platforms', attributes, createdPlatformResource());
}

/** Deletes one platform and its binary. */
export async function deletePlatform(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
  os: string,
  arch: string,
): Promise<void> {
  await client.request('DELETE', platformsPath(address, version, os, arch));
}
