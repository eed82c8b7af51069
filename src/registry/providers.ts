/** Registry providers: read, create, delete. */
import type { ApiError } from '../errors.js';
import type { RegistryClient } from './http.js';
import { providerPath, providersPath, type ProviderAddress } from './paths.js';
import { documentOf, providerResource } from './schemas.js';
import type { ProviderResource } from '../terraform/api.js';

/** The provider, or undefined when the registry answers 404. */
export async function getProvider(
  client: RegistryClient,
  address: ProviderAddress,
): Promise<ProviderResource | undefined> {
  const doc = await orUndefinedOn404(client.get(providerPath(address), documentOf(providerResource())));
  return doc?.data;
}

/** Creates a private provider (namespace = organization for private providers). */
export async function createProvider(
  client: RegistryClient,
  address: ProviderAddress,
): Promise<ProviderResource> {
  const path = providersPath(address.organization);
  const attributes = { name: address.name, namespace: address.namespace, 'registry-name': 'private' };
  return client.create(path, 'registry-providers', attributes, providerResource());
}

/** Deletes a provider and all its versions. */
export async function deleteProvider(client: RegistryClient, address: ProviderAddress): Promise<void> {
  await client.request('DELETE', providerPath(address));
}

/** Awaits a read and turns a 404 into undefined (absent is a normal answer when planning). */
export async function orUndefinedOn404<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if ((error as Partial<ApiError>).code === 'api' && (error as ApiError).status === 404) return undefined;
    throw error;
  }
}
