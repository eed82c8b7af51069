/**
 * The shapes of the documents the client reads, as zod schemas: each resource function passes the schema of the
 * answer it expects to the HTTP layer, which parses with it (src/registry/answers.ts), so no caller ever holds
 * a document that is not what its type says. They follow the wire types of types.ts and the documented samples;
 * every object is loose: fields the platform adds over time pass through untouched.
 *
 * Each is built on its first use and kept: building all of them takes zod some 15 ms, and a command reads only a
 * few kinds of document (`provider versions list` reads two).
 */
import * as z from 'zod';

/** A schema built by `build` when first asked for, then the same one. */
function once<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

const resourceIdentifier = <T extends string>(type: T) =>
  z.looseObject({ id: z.string(), type: z.literal(type) });

// A resource of `type`: its identifier, its `attributes`, and the rest of its members (relationships, links).
const resource = <T extends string, A extends z.ZodRawShape, R extends z.ZodRawShape>(
  type: T,
  attributes: A,
  rest: R,
) => z.looseObject({ id: z.string(), type: z.literal(type), attributes: z.looseObject(attributes), ...rest });

const assetPermissions = () => z.looseObject({ 'can-delete': z.boolean(), 'can-upload-asset': z.boolean() });

/** A `registry-providers` resource. */
export const providerResource = once(() =>
  resource(
    'registry-providers',
    {
      name: z.string(),
      namespace: z.string(),
      'registry-name': z.enum(['private', 'public']),
      'created-at': z.string(),
      'updated-at': z.string(),
      permissions: z.looseObject({ 'can-delete': z.boolean() }),
    },
    {
      relationships: z.looseObject({
        organization: z.looseObject({ data: resourceIdentifier('organizations') }),
        versions: z.looseObject({
          data: z.array(resourceIdentifier('registry-provider-versions')),
          links: z.looseObject({ related: z.string() }),
        }),
      }),
      links: z.looseObject({ self: z.string() }),
    },
  ),
);

const versionLinks = () =>
  z.looseObject({
    'shasums-upload': z.string().optional(),
    'shasums-sig-upload': z.string().optional(),
    'shasums-download': z.string().optional(),
    'shasums-sig-download': z.string().optional(),
  });

/** A `registry-provider-versions` resource, as read (its links depend on what is uploaded and on the token). */
export const versionResource = once(() =>
  resource(
    'registry-provider-versions',
    {
      version: z.string(),
      'created-at': z.string(),
      'updated-at': z.string(),
      'key-id': z.string(),
      protocols: z.array(z.string()),
      permissions: assetPermissions(),
      'shasums-uploaded': z.boolean(),
      'shasums-sig-uploaded': z.boolean(),
    },
    {
      relationships: z.looseObject({
        'registry-provider': z.looseObject({ data: resourceIdentifier('registry-providers') }),
        platforms: z.looseObject({
          data: z.array(resourceIdentifier('registry-provider-platforms')),
          links: z.looseObject({ related: z.string() }),
        }),
        'tag-bindings': z.looseObject({ links: z.looseObject({ related: z.string() }) }).optional(),
      }),
      links: versionLinks(),
    },
  ),
);

/**
 * The answer to a version's tag PATCH: a version document whose relationships differ from the GET's in the
 * documented sample (`registry-provider-platforms` for `platforms`), so only what identifies it is required.
 */
export const patchedVersionResource = once(() =>
  z.looseObject({
    id: z.string(),
    type: z.literal('registry-provider-versions'),
    attributes: z.looseObject({ version: z.string() }),
  }),
);

/** A `tag-bindings` resource (providers/version-tags.mdx). */
export const tagBindingResource = once(() =>
  resource(
    'tag-bindings',
    { key: z.string(), value: z.string().nullable(), 'created-at': z.string().optional() },
    {},
  ),
);

/** The tag bindings of a version: one document, not paginated in the documented sample. */
export const tagBindingList = once(() => z.looseObject({ data: z.array(tagBindingResource()) }));

/**
 * An item of HCP Terraform's tag-aware versions list (providers/index.mdx): the version and its tags inline.
 * Its `type` is not checked (the documented samples disagree: `ephemeral-…` and `public-registry-provider-versions`).
 */
export const taggedVersionItem = once(() =>
  z.looseObject({
    id: z.string(),
    type: z.string(),
    attributes: z.looseObject({
      version: z.string(),
      tags: z.array(z.looseObject({ key: z.string(), value: z.string().nullable() })),
    }),
  }),
);

/** An item of the versions list: a whole version resource, or the tag-aware item. */
export const versionListItem = once(() => z.union([versionResource(), taggedVersionItem()]));

/** A version just created: nothing is uploaded yet, so both upload links must be there. */
export const createdVersionResource = once(() =>
  versionResource().extend({
    links: versionLinks().extend({ 'shasums-upload': z.string(), 'shasums-sig-upload': z.string() }),
  }),
);

const platformLinks = () =>
  z.looseObject({
    'provider-binary-upload': z.string().optional(),
    'provider-binary-download': z.string().optional(),
  });

/** A `registry-provider-platforms` resource, as read. */
export const platformResource = once(() =>
  resource(
    'registry-provider-platforms',
    {
      os: z.string(),
      arch: z.string(),
      filename: z.string(),
      shasum: z.string(),
      permissions: assetPermissions(),
      'provider-binary-uploaded': z.boolean(),
    },
    {
      relationships: z.looseObject({
        'registry-provider-version': z.looseObject({
          data: resourceIdentifier('registry-provider-versions'),
        }),
      }),
      links: platformLinks(),
    },
  ),
);

/** A platform just created: its binary's upload link must be there. */
export const createdPlatformResource = once(() =>
  platformResource().extend({
    links: platformLinks().extend({ 'provider-binary-upload': z.string() }),
  }),
);

/** A `gpg-keys` resource. */
export const gpgKeyResource = once(() =>
  resource(
    'gpg-keys',
    {
      'ascii-armor': z.string(),
      'created-at': z.string(),
      'key-id': z.string(),
      namespace: z.string(),
      source: z.string(),
      'source-url': z.string().nullable(),
      'trust-signature': z.string(),
      'updated-at': z.string(),
    },
    { links: z.looseObject({ self: z.string() }) },
  ),
);

/** `{"data": <resource>}`. */
export function documentOf<T extends z.ZodType>(resource: T) {
  return z.looseObject({ data: resource });
}

/**
 * A list page: its items, top-level links and `meta.pagination`. The pagination is required: without it the
 * client could not tell the last page from a truncated answer.
 */
export function listOf<T extends z.ZodType>(item: T) {
  return z.looseObject({
    data: z.array(item),
    links: z.looseObject({
      self: z.string().optional(),
      first: z.string(),
      prev: z.string().nullable(),
      next: z.string().nullable(),
      last: z.string(),
    }),
    meta: z.looseObject({
      pagination: z.looseObject({
        'current-page': z.number(),
        'page-size': z.number(),
        'prev-page': z.number().nullable(),
        'next-page': z.number().nullable(),
        'total-pages': z.number(),
        'total-count': z.number(),
      }),
    }),
  });
}
