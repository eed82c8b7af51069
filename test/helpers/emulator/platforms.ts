/** The provider platform resource: its create body and the creation of a fixture zip's platform. */
import type { JsonObject } from '../json.js';
import { expectStatus, type Api } from './http.js';
import { providerPaths } from './providers.js';
import type { ReleaseZip } from './release.js';

/** Platform create body (the documented sample's `data.type`). */
export function platformPayload(attributes: JsonObject): JsonObject {
  return { data: { type: 'registry-provider-version-platforms', attributes } };
}

/** Creates the platform of a fixture zip (201 expected) and returns its document. */
export async function createPlatform(
  api: Api,
  org: string,
  name: string,
  version: string,
  zip: ReleaseZip,
): Promise<unknown> {
  const reply = await api.post(
    providerPaths(org, name).platforms(version),
    platformPayload({ os: zip.os, arch: zip.arch, shasum: zip.shasum, filename: zip.filename }),
  );
  expectStatus(reply, 201);
  return reply.json;
}
