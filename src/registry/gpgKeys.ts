/** The registry's GPG keys (`/api/registry/private/v2/gpg-keys`). */
import type { RegistryClient } from './http.js';
import { orUndefinedOn404 } from './providers.js';
import { documentOf, gpgKeyResource } from './schemas.js';
import type { GpgKeyResource } from '../terraform/api.js';

/** The GPG key endpoints' base path (they live outside `/api/v2`). */
export const GPG_KEYS_PATH = '/api/registry/private/v2/gpg-keys';

/** Every key registered for the namespace, all pages. */
export async function listGpgKeys(client: RegistryClient, namespace: string): Promise<GpgKeyResource[]> {
  return client.list(GPG_KEYS_PATH, gpgKeyResource(), { 'filter[namespace]': namespace });
}

/**
 * Registers an armored public key for the namespace; the registry answers with its key id. The text sent is the
 * armor trimmed of the line end (and any blank) around it, whatever the key came from (a file, PROVIDER_GPG_KEY,
 * the Action's input): GitHub Actions trims its inputs, and publishers that find their key among the registered
 * ones by comparing that text (`===`) would otherwise try to add it again and be refused ("Key has already been
 * taken"). Which key it is stays decided by key id.
 */
export async function addGpgKey(
  client: RegistryClient,
  namespace: string,
  asciiArmor: string,
): Promise<GpgKeyResource> {
  const attributes = { namespace, 'ascii-armor': asciiArmor.trim() };
  return client.create(GPG_KEYS_PATH, 'gpg-keys', attributes, gpgKeyResource());
}

/** One registered key by its long key id, or undefined when absent. */
export async function getGpgKey(
  client: RegistryClient,
  namespace: string,
  keyId: string,
): Promise<GpgKeyResource | undefined> {
  const path = `${GPG_KEYS_PATH}/${encodeURIComponent(namespace)}/${encodeURIComponent(keyId)}`;
  const doc = await orUndefinedOn404(client.get(path, documentOf(gpgKeyResource())));
  return doc?.data;
}

/** Removes a registered key. */
export async function deleteGpgKey(client: RegistryClient, namespace: string, keyId: string): Promise<void> {
  await client.request(
    'DELETE',
    `${GPG_KEYS_PATH}/${encodeURIComponent(namespace)}/${encodeURIComponent(keyId)}`,
  );
}
