/**
 * Serializers from stored records to the documented JSON:API shapes. Version and platform `links` are upload
 * links while a file is missing and download links once it has arrived, file by file.
 */
import type {
  AssetPermissions,
  GpgKeyResource,
  PlatformLinks,
  PlatformResource,
  ProviderResource,
  TagBindingResource,
  TaggedVersionItem,
  VersionLinks,
  VersionResource,
} from '../terraform/api.js';
import { createHash } from 'node:crypto';
import { isUploaded, isoMillis, isoSeconds, type App, type Principal } from './app.js';
import type {
  StoredGpgKey,
  StoredObject,
  StoredPlatform,
  StoredProvider,
  StoredTagBinding,
  StoredVersion,
} from './state.js';

/** The relative path of a provider, as the samples' `links` use. */
export function providerPath(p: StoredProvider): string {
  const seg = encodeURIComponent;
  return `/api/v2/organizations/${seg(p.organization)}/registry-providers/${p.registryName}/${seg(p.namespace)}/${seg(p.name)}`;
}

function permissions(principal: Principal): AssetPermissions {
  const owner = principal.role === 'owner';
  return { 'can-delete': owner, 'can-upload-asset': owner };
}

/** A provider resource. */
export function providerResource(app: App, p: StoredProvider, principal: Principal): ProviderResource {
  const versions = app.store.data.versions.filter((v) => v.providerId === p.id);
  return {
    id: p.id,
    type: 'registry-providers',
    attributes: {
      name: p.name,
      namespace: p.namespace,
      'registry-name': p.registryName,
      'created-at': isoMillis(p.createdAt),
      'updated-at': isoMillis(p.updatedAt),
      permissions: { 'can-delete': principal.role === 'owner' },
    },
    relationships: {
      organization: { data: { id: p.organization, type: 'organizations' } },
      versions: {
        data: versions.map((v) => ({ id: v.id, type: 'registry-provider-versions' as const })),
        links: { related: providerPath(p) },
      },
    },
    links: { self: providerPath(p) },
  };
}

/**
 * Upload link while the file is missing, download link once it is there. Only callers who may upload get
 * upload links (a member token sees the state but cannot upload).
 */
function fileLink(
  app: App,
  object: StoredObject,
  uploaded: boolean,
  principal: Principal,
  upload: string,
  download: string,
): Record<string, string> {
  if (uploaded) {
    return { [download]: app.links.sign(app.baseUrl(), 'get', object.key, app.now()) };
  }
  if (principal.role !== 'owner') return {};
  return { [upload]: app.links.sign(app.baseUrl(), 'put', object.key, app.now()) };
}

/** A version resource. */
export function versionResource(
  app: App,
  provider: StoredProvider,
  v: StoredVersion,
  principal: Principal,
): VersionResource {
  const platforms = app.store.data.platforms.filter((p) => p.versionId === v.id);
  // Judged once each: a flag flipping between two reads of the clock must not give a document whose flag says
  // uploaded and whose links say missing.
  const shasums = isUploaded(app, v.shasums);
  const signature = isUploaded(app, v.shasumsSig);
  const links: VersionLinks = {
    ...fileLink(app, v.shasums, shasums, principal, 'shasums-upload', 'shasums-download'),
    ...fileLink(app, v.shasumsSig, signature, principal, 'shasums-sig-upload', 'shasums-sig-download'),
  };
  return {
    id: v.id,
    type: 'registry-provider-versions',
    attributes: {
      version: v.version,
      'created-at': isoMillis(v.createdAt),
      'updated-at': isoMillis(v.updatedAt),
      'key-id': v.keyId,
      protocols: v.protocols,
      permissions: permissions(principal),
      'shasums-uploaded': shasums,
      'shasums-sig-uploaded': signature,
    },
    relationships: {
      'registry-provider': { data: { id: provider.id, type: 'registry-providers' } },
      platforms: {
        data: platforms.map((p) => ({ id: p.id, type: 'registry-provider-platforms' as const })),
        links: { related: `${providerPath(provider)}/versions/${encodeURIComponent(v.version)}/platforms` },
      },
      // providers/version-tags.mdx, sample response: the version names its tag bindings by link only.
      'tag-bindings': { links: { related: versionTagBindingsPath(v) } },
    },
    links,
  };
}

/** `/api/v2/registry-provider-versions/:id/tag-bindings`, the version's tag bindings. */
export function versionTagBindingsPath(v: StoredVersion): string {
  return `/api/v2/registry-provider-versions/${encodeURIComponent(v.id)}/tag-bindings`;
}

/** A tag binding resource (providers/version-tags.mdx: key, value, created-at). */
export function tagBindingResource(b: StoredTagBinding): TagBindingResource {
  return {
    id: b.id,
    type: 'tag-bindings',
    attributes: { key: b.key, value: b.value, 'created-at': isoMillis(b.createdAt) },
  };
}

/**
 * An item of the tag-filtered versions list (providers/index.mdx, "Versions List for a Registry Provider"):
 * the documented items have a UUID-shaped id, not the version's `provver-` id, so one is derived from it.
 */
export function taggedVersionItem(provider: StoredProvider, v: StoredVersion): TaggedVersionItem {
  const hex = createHash('sha1').update(v.id).digest('hex');
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  return {
    id,
    type: 'ephemeral-registry-provider-versions',
    attributes: {
      version: v.version,
      tags: (v.tags ?? []).map((t) => ({ key: t.key, value: t.value })),
      status: '',
      name: provider.name,
      namespace: provider.namespace,
    },
  };
}

/** A platform resource. */
export function platformResource(app: App, p: StoredPlatform, principal: Principal): PlatformResource {
  const uploaded = isUploaded(app, p.binary);
  const links: PlatformLinks = fileLink(
    app,
    p.binary,
    uploaded,
    principal,
    'provider-binary-upload',
    'provider-binary-download',
  );
  return {
    id: p.id,
    type: 'registry-provider-platforms',
    attributes: {
      os: p.os,
      arch: p.arch,
      filename: p.filename,
      shasum: p.shasum,
      permissions: permissions(principal),
      'provider-binary-uploaded': uploaded,
    },
    relationships: {
      'registry-provider-version': { data: { id: p.versionId, type: 'registry-provider-versions' } },
    },
    links,
  };
}

/** A GPG key resource (whole-second timestamps, relative `self` link, as documented). */
export function gpgKeyResource(k: StoredGpgKey): GpgKeyResource {
  return {
    id: k.id,
    type: 'gpg-keys',
    attributes: {
      'ascii-armor': k.asciiArmor,
      'created-at': isoSeconds(k.createdAt),
      'key-id': k.keyId,
      namespace: k.namespace,
      source: '',
      'source-url': null,
      'trust-signature': '',
      'updated-at': isoSeconds(k.updatedAt),
    },
    links: { self: `/v2/gpg-keys/${k.id}` },
  };
}
