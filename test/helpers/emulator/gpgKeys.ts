/** The GPG key resource: its endpoints and body, the fixture keys (public, secret, key id) and adding one. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject } from '../json.js';
import { REPO_ROOT } from '../paths.js';
import { expectStatus, type Api } from './http.js';

/** The GPG key endpoints (under the registry API, not /api/v2). */
export function gpgKeyPaths(registry = 'private') {
  const keys = `/api/registry/${registry}/v2/gpg-keys`;
  return {
    keys,
    list: (namespaces: string, query = '') =>
      `${keys}?filter%5Bnamespace%5D=${encodeURIComponent(namespaces)}${query}`,
    key: (namespace: string, keyId: string) => `${keys}/${namespace}/${keyId}`,
  };
}

/** GPG key add body. */
export function gpgKeyPayload(namespace: string, armor: string): JsonObject {
  return { data: { type: 'gpg-keys', attributes: { namespace, 'ascii-armor': armor } } };
}

/** Names of the fixture keys. */
export type FixtureKey = 'signer' | 'other' | 'subkey' | 'expired' | 'ecc';

/** A fixture key's armored public key. */
export function publicKey(name: FixtureKey): string {
  return readFileSync(join(REPO_ROOT, 'fixtures', 'keys', `${name}.pub.asc`), 'utf8');
}

/** A fixture key's armored secret key. */
export function secretKey(name: FixtureKey): string {
  return readFileSync(join(REPO_ROOT, 'fixtures', 'keys', `${name}.sec.asc`), 'utf8');
}

/** A fixture key's long key id (16 upper-case hex digits). */
export function keyIdOf(name: FixtureKey): string {
  return readFileSync(join(REPO_ROOT, 'fixtures', 'keys', `${name}.keyid`), 'utf8').trim();
}

/** Adds a fixture key (201 expected) and returns its document. */
export async function addGpgKey(api: Api, namespace: string, key: FixtureKey): Promise<unknown> {
  const reply = await api.post(gpgKeyPaths().keys, gpgKeyPayload(namespace, publicKey(key)));
  expectStatus(reply, 201);
  return reply.json;
}
