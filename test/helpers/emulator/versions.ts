/** The provider version resource: its create body and creation. */
import type { JsonObject } from '../json.js';
import { expectStatus, type Api } from './http.js';
import { providerPaths } from './providers.js';

/** Version create body; `attributes` replaces the defaults wholesale when given. */
export function versionPayload(attributes: JsonObject): JsonObject {
  return { data: { type: 'registry-provider-versions', attributes } };
}

/** Creates a version (201 expected) and returns its document. */
export async function createVersion(
  api: Api,
  org: string,
  name: string,
  attributes: JsonObject,
): Promise<unknown> {
  const reply = await api.post(providerPaths(org, name).versions, versionPayload(attributes));
  expectStatus(reply, 201);
  return reply.json;
}
