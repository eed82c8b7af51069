/**
 * Provider version tags on the wire (HCP Terraform, 2026; hashicorp/web-unified-docs:
 * content/terraform-docs-common/docs/cloud-docs/api-docs/private-registry/providers/version-tags.mdx):
 * reading a version's tag bindings, replacing them with one PATCH of the version, and the `filter[tagged]`
 * query of the versions list (providers/index.mdx, "Versions List for a Registry Provider").
 */
import type { RegistryClient } from './http.js';
import { versionsPath, type ProviderAddress } from './paths.js';
import { documentOf, patchedVersionResource, tagBindingList } from './schemas.js';
import { sortTags, type Tag, type TagFilter } from './tags.js';

/** `/api/v2/registry-provider-versions/:id/tag-bindings` */
export function versionTagBindingsPath(versionId: string): string {
  return `/api/v2/registry-provider-versions/${encodeURIComponent(versionId)}/tag-bindings`;
}

/** The tags of a version (by its id), sorted; a binding without a value reads as an empty value. */
export async function listVersionTags(client: RegistryClient, versionId: string): Promise<Tag[]> {
  const doc = await client.get(versionTagBindingsPath(versionId), tagBindingList());
  return sortTags(doc.data.map((b) => ({ key: b.attributes.key, value: b.attributes.value ?? '' })));
}

/**
 * Replaces the version's tags with `tags` ("the request body will contain only the tag keys and values that are
 * currently needed"): the body is the documented sample payload's, organization relationship included.
 */
export async function setVersionTags(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
  tags: readonly Tag[],
): Promise<void> {
  await client.read('PATCH', versionsPath(address, version), documentOf(patchedVersionResource()), {
    json: {
      data: {
        type: 'registry-provider-versions',
        relationships: {
          organization: { data: { type: 'organizations', id: address.organization } },
          'tag-bindings': {
            data: tags.map((t) => ({ type: 'tag-bindings', attributes: { key: t.key, value: t.value } })),
          },
        },
      },
    },
  });
}

/**
 * The versions list's query for `filters`: `filter[tagged][i][key]` and, when a value is given,
 * `filter[tagged][i][value]` at the same index (key AND value); different indexes are ORed by the platform.
 */
export function tagFilterQuery(filters: readonly TagFilter[]): Record<string, string> {
  const query: Record<string, string> = {};
  filters.forEach((f, i) => {
    query[`filter[tagged][${i}][key]`] = f.key;
    if (f.value !== undefined) query[`filter[tagged][${i}][value]`] = f.value;
  });
  return query;
}
