/** Registry providers: read, create, delete. */
import type { ApiError } from '../errors.js';
import type { RegistryClient } from './http.js';
import { providerPath, providersPath, type ProviderAddress } from './paths.js';
import type { Document, ProviderResource } from './types.js';

/** The provider, or undefined when the registry answers 404. */
export async function getProvider(
  client: RegistryClient,
  address: ProviderAddress,
): Promise<ProviderResource | undefined> {
  const doc = await orUndefinedOn404(client.get<Document<ProviderResource>>(providerPath(address)));
  return doc?.data;
}

/** Creates a private provider (namespace = organization for private providers). */
export async function createProvider(
  client: RegistryClient,
  address: ProviderAddress,
): Promise<ProviderResource> {
  const doc = await client.request<Document<ProviderResource>>('POST', providersPath(address.organization), {
    json: {
      data: {
        type: 'registry-providers',
        attributes: { name: address.name, namespace: address.namespace, 'registry-name': 'private' },
      },
    },
  });
  return mustHave(doc, 'POST', providersPath(address.organization)).data;
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

/** A create must answer with a document. */
export function mustHave<T>(doc: T | undefined, method: string, path: string): T {
  if (doc === undefined) throw new Error(`${method} ${path} answered without a document`);
  return doc;
}
