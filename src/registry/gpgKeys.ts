/** The registry's GPG keys (`/api/registry/private/v2/gpg-keys`). */
import type { RegistryClient } from './http.js';
import type { GpgKeyResource } from './types.js';

/** The GPG key endpoints' base path (they live outside `/api/v2`). */
export const GPG_KEYS_PATH = '/api/registry/private/v2/gpg-keys';

/** Every key registered for the namespace, all pages. */
export async function listGpgKeys(client: RegistryClient, namespace: string): Promise<GpgKeyResource[]> {
  return client.list<GpgKeyResource>(GPG_KEYS_PATH, { 'filter[namespace]': namespace });
}
