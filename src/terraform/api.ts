/**
 * Wire types of the private registry API, as documented (JSON:API documents with kebab-case attributes).
 * Shared by the client and the emulator; nothing else is shared between the two sides of the wire.
 */

/** JSON:API resource identifier. */
export interface ResourceIdentifier<T extends string = string> {
  id: string;
  type: T;
}

/** The `permissions` object of versions and platforms. */
export interface AssetPermissions {
  'can-delete': boolean;
  'can-upload-asset': boolean;
}

/** `registry-providers` resource. */
export interface ProviderResource {
  id: string;
  type: 'registry-providers';
  attributes: {
    name: string;
    namespace: string;
    'registry-name': 'private' | 'public';
    'created-at': string;
    'updated-at': string;
    permissions: { 'can-delete': boolean };
  };
  relationships: {
    organization: { data: ResourceIdentifier<'organizations'> };
    versions: { data: ResourceIdentifier<'registry-provider-versions'>[]; links: { related: string } };
  };
  links: { self: string };
}

/** Upload links of a version (present while the matching file is not uploaded). */
export interface VersionLinks {
  'shasums-upload'?: string;
  'shasums-sig-upload'?: string;
  'shasums-download'?: string;
  'shasums-sig-download'?: string;
}

/** `registry-provider-versions` resource. */
export interface VersionResource {
  id: string;
  type: 'registry-provider-versions';
  attributes: {
    version: string;
    'created-at': string;
    'updated-at': string;
    'key-id': string;
    protocols: string[];
    permissions: AssetPermissions;
    'shasums-uploaded': boolean;
    'shasums-sig-uploaded': boolean;
  };
  relationships: {
    'registry-provider': { data: ResourceIdentifier<'registry-providers'> };
    platforms: { data: ResourceIdentifier<'registry-provider-platforms'>[]; links: { related: string } };
    /** HCP Terraform's version tags (2026); absent where the registry has none (Terraform Enterprise). */
    'tag-bindings'?: { links: { related: string } };
  };
  links: VersionLinks;
}

/** `tag-bindings` resource: one tag of a provider version (providers/version-tags.mdx). */
export interface TagBindingResource {
  id: string;
  type: 'tag-bindings';
  attributes: { key: string; value: string; 'created-at': string };
}

/** `GET /api/v2/registry-provider-versions/:id/tag-bindings`: the bindings and a link back to the version. */
export interface TagBindingListDocument {
  data: TagBindingResource[];
  links: { target: string };
}

/**
 * An item of HCP Terraform's tag-aware versions list (providers/index.mdx, "Versions List for a Registry
 * Provider"): its `type` differs between the documented samples and its `id` is not a `provver-` id.
 */
export interface TaggedVersionItem {
  id: string;
  type: string;
  attributes: {
    version: string;
    tags: { key: string; value: string }[];
    status: string;
    name: string;
    namespace: string;
  };
}

/** Links of a platform: an upload link until the binary arrives, a download link after. */
export interface PlatformLinks {
  'provider-binary-upload'?: string;
  'provider-binary-download'?: string;
}

/** `registry-provider-platforms` resource. */
export interface PlatformResource {
  id: string;
  type: 'registry-provider-platforms';
  attributes: {
    os: string;
    arch: string;
    filename: string;
    shasum: string;
    permissions: AssetPermissions;
    'provider-binary-uploaded': boolean;
  };
  relationships: {
    'registry-provider-version': { data: ResourceIdentifier<'registry-provider-versions'> };
  };
  links: PlatformLinks;
}

/** `gpg-keys` resource (timestamps in whole seconds, ids are small numeric strings). */
export interface GpgKeyResource {
  id: string;
  type: 'gpg-keys';
  attributes: {
    'ascii-armor': string;
    'created-at': string;
    'key-id': string;
    namespace: string;
    source: string;
    'source-url': string | null;
    'trust-signature': string;
    'updated-at': string;
  };
  links: { self: string };
}

/** `meta.pagination` of list documents. */
export interface Pagination {
  'current-page': number;
  'page-size': number;
  'prev-page': number | null;
  'next-page': number | null;
  'total-pages': number;
  'total-count': number;
}

/** Top-level `links` of list documents. */
export interface ListLinks {
  /** Absent from the GPG key list, present on the `/api/v2` lists. */
  self?: string;
  first: string;
  prev: string | null;
  next: string | null;
  last: string;
}

/** A single-resource document. */
export interface Document<T> {
  data: T;
}

/** A list document with pagination. */
export interface ListDocument<T> {
  data: T[];
  links: ListLinks;
  meta: { pagination: Pagination };
}

/** A JSON:API error object (`status` is a string in most answers, a number in the documented 429 sample). */
export interface ErrorObject {
  status: string | number;
  title?: string;
  detail?: string;
  source?: { pointer?: string; parameter?: string };
}

/** An error document. */
export interface ErrorDocument {
  errors: ErrorObject[];
}

/** Terraform's provider registry protocol: `GET :namespace/:type/versions`. */
export interface ConsumerVersionsDocument {
  versions: { version: string; protocols: string[]; platforms: { os: string; arch: string }[] }[];
  warnings?: string[] | null;
}

/** Terraform's provider registry protocol: `GET :namespace/:type/:version/download/:os/:arch`. */
export interface ConsumerDownloadDocument {
  protocols: string[];
  os: string;
  arch: string;
  filename: string;
  download_url: string;
  shasums_url: string;
  shasums_signature_url: string;
  shasum: string;
  signing_keys: {
    gpg_public_keys:
      | {
          key_id: string;
          ascii_armor: string;
          trust_signature: string;
          source: string;
          source_url: string | null;
        }[]
      /** No key at all: some public registries answer so for some providers (a `withoutKeys` fault). */
      | null;
  };
  /**
   * OpenTofu's extension (registry hashes RFC, `opentofu/opentofu: rfc/20251027-provider-registry-hashes.md`):
   * every platform of the version by `<os>_<arch>`, with its lock hashes and the zip's size in bytes. Optional:
   * HCP Terraform does not serve it; the emulator does with `--package-hashes`.
   */
  packages?: Record<string, ConsumerPackage>;
}

/** One platform's entry in `packages`: what a lock file records for it, and the zip's size in bytes. */
export interface ConsumerPackage {
  hashes: string[];
  package_size: number;
}
