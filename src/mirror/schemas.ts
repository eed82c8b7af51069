/**
 * The documents of the provider registry protocol, as a mirror reads them from its origin
 * (hashicorp/terraform: website/docs/internals/provider-registry-protocol.mdx). Loose objects: registries add
 * members (OpenTofu's `packages`), which are ignored. `gpg_public_keys` may be null (registry.opentofu.org does
 * that for some providers): read as no key, which stops the version.
 */
import * as z from 'zod';

/** `/.well-known/terraform.json`. */
export const discoverySchema = z.looseObject({ 'providers.v1': z.string().optional() });

const platformSchema = z.looseObject({ os: z.string(), arch: z.string() });

/** `GET <providers.v1><namespace>/<type>/versions`. */
export const versionsSchema = z.looseObject({
  versions: z.array(
    z.looseObject({
      version: z.string(),
      protocols: z.array(z.string()).nullish(),
      platforms: z.array(platformSchema).nullish(),
    }),
  ),
});

const keySchema = z.looseObject({
  key_id: z.string(),
  ascii_armor: z.string(),
  trust_signature: z.string().nullish(),
  source: z.string().nullish(),
  source_url: z.string().nullish(),
});

/** `GET <providers.v1><namespace>/<type>/<version>/download/<os>/<arch>`. */
export const downloadSchema = z.looseObject({
  protocols: z.array(z.string()).nullish(),
  os: z.string(),
  arch: z.string(),
  filename: z.string(),
  download_url: z.string(),
  shasums_url: z.string(),
  shasums_signature_url: z.string(),
  shasum: z.string(),
  signing_keys: z.looseObject({ gpg_public_keys: z.array(keySchema).nullish() }).nullish(),
});

/**
 * `GET <providers.v1><namespace>/<type>/<version>`: the registry's provider details, as registry.terraform.io serves
 * them (and Renovate reads them); only `published_at` (RFC 3339) is read, for a policy's cooldown. The protocol
 * does not require the document: a registry without it gives no date.
 */
export const detailsSchema = z.looseObject({ published_at: z.string().nullish() });

/** One version as the origin lists it. */
export type OriginVersion = z.output<typeof versionsSchema>['versions'][number];
/** One platform's download document, its URLs made absolute. */
export type OriginDownload = z.output<typeof downloadSchema>;
/** One signing key the origin serves. */
export type OriginKey = z.output<typeof keySchema>;
