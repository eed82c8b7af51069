/** Provider versions: list, read, create, delete. */
import type { RegistryClient } from './http.js';
import { versionsPath, type ProviderAddress } from './paths.js';
import { orUndefinedOn404 } from './providers.js';
import { createdVersionResource, documentOf, versionListItem, versionResource } from './schemas.js';
import { tagFilterQuery } from './tagBindings.js';
import { sortTags, type Tag, type TagFilter } from './tags.js';
import type { VersionResource } from '../terraform/api.js';

/**
 * One item of the versions list: the whole resource when the registry lists those (the provider versions API
 * page), or only the version and its tags when it answers with HCP Terraform's tag-aware list (providers/
 * index.mdx); `tags` is there when the item carried them.
 */
export interface VersionEntry {
  version: string;
  resource?: VersionResource | undefined;
  tags?: Tag[] | undefined;
}

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
  return client.list(versionsPath(address), versionResource());
}

/**
 * Every version of the provider (all pages), in either documented list shape; with `filters`, the query asks
 * for the versions carrying one of them (`filter[tagged]`).
 */
export async function listVersionEntries(
  client: RegistryClient,
  address: ProviderAddress,
  filters: readonly TagFilter[] = [],
): Promise<VersionEntry[]> {
  const items = await client.list(versionsPath(address), versionListItem(), tagFilterQuery(filters));
  return items.map((item) => {
    const raw: unknown = (item.attributes as Record<string, unknown>).tags;
    const tags = Array.isArray(raw)
      ? sortTags(
          raw.flatMap((t: unknown) => {
            const { key, value } = (t ?? {}) as { key?: unknown; value?: unknown };
            return typeof key === 'string' ? [{ key, value: typeof value === 'string' ? value : '' }] : [];
          }),
        )
      : undefined;
    const full = versionResource().safeParse(item);
    return { version: item.attributes.version, resource: full.success ? full.data : undefined, tags };
  });
}

/** One version, or undefined when absent. */
export async function getVersion(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
): Promise<VersionResource | undefined> {
  const doc = await orUndefinedOn404(
    client.get(versionsPath(address, version), documentOf(versionResource())),
  );
  return doc?.data;
}

/** Creates a version; the answer carries the upload links of SHA256SUMS and its signature. */
export async function createVersion(
  client: RegistryClient,
  address: ProviderAddress,
  attributes: VersionAttributes,
): Promise<VersionResource> {
  const path = versionsPath(address);
  const sent = { version: attributes.version, 'key-id': attributes.keyId, protocols: attributes.protocols };
  return client.create(path, 'registry-provider-versions', sent, createdVersionResource());
}

/** Deletes a version with its platforms and files. */
export async function deleteVersion(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
): Promise<void> {
  await client.request('DELETE', versionsPath(address, version));
}
