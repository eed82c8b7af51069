/**
 * The consumer view: service discovery and Terraform's provider registry protocol (`providers.v1`), so that
 * what `terraform init` would see can be exercised end to end. A version is available only when both checksum
 * files and at least one platform binary are uploaded; only uploaded platforms are listed. With package hashes
 * on, the download response also carries OpenTofu's `packages`: the lock hashes and size of every platform of
 * the version whose hashes were computed at upload (a `wrongHash` fault alters one).
 */
import type {
  ConsumerDownloadDocument,
  ConsumerPackage,
  ConsumerVersionsDocument,
} from '../../terraform/api.js';
import { sortHashes } from '../../terraform/hashes.js';
import { authenticate, findProvider, isUploaded, type App } from '../app.js';
import { wrongLockHash } from '../faults.js';
import type { WrongHash } from '../http.js';
import { notFound, sendJson, type Router } from '../http.js';
import type { StoredPlatform, StoredVersion } from '../state.js';

/** Where the registry protocol lives, announced by service discovery. */
export const PROVIDERS_V1 = '/api/registry/v1/providers/';

/** Registers service discovery and the provider registry protocol. */
export function registerConsumerRoutes(router: Router, app: App): void {
  router.on('GET', '/.well-known/terraform.json', (ctx) => {
    sendJson(ctx.res, 200, {
      'modules.v1': '/api/registry/v1/modules/',
      'providers.v1': PROVIDERS_V1,
      'tfe.v2': '/api/v2/',
      'tfe.v2.1': '/api/v2/',
      'tfe.v2.2': '/api/v2/',
    });
  });

  const platformsOf = (version: StoredVersion) =>
    app.store.data.platforms.filter((p) => p.versionId === version.id && isUploaded(app, p.binary));

  const available = (version: StoredVersion): boolean =>
    isUploaded(app, version.shasums) &&
    isUploaded(app, version.shasumsSig) &&
    platformsOf(version).length > 0;

  router.on('GET', `${PROVIDERS_V1}:namespace/:name/versions`, (ctx) => {
    // Terraform sends the host's credentials to the registry protocol of a private registry.
    const principal = authenticate(app, ctx.req);
    const provider = findProvider(app, principal.organization, ctx.params.namespace!, ctx.params.name!);
    const versions = app.store.data.versions.filter((v) => v.providerId === provider.id && available(v));
    const document: ConsumerVersionsDocument = {
      versions: versions.map((v) => ({
        version: v.version,
        protocols: v.protocols,
        platforms: platformsOf(v).map((p) => ({ os: p.os, arch: p.arch })),
      })),
      warnings: null,
    };
    sendJson(ctx.res, 200, document);
  });

  router.on('GET', `${PROVIDERS_V1}:namespace/:name/:version/download/:os/:arch`, (ctx) => {
    const principal = authenticate(app, ctx.req);
    const provider = findProvider(app, principal.organization, ctx.params.namespace!, ctx.params.name!);
    const version = app.store.data.versions.find(
      (v) => v.providerId === provider.id && v.version === ctx.params.version,
    );
    if (!version || !available(version)) throw notFound();
    const platform = platformsOf(version).find((p) => p.os === ctx.params.os && p.arch === ctx.params.arch);
    if (!platform) throw notFound();
    const link = (key: string) => app.links.sign(app.baseUrl(), 'get', key, app.now());
    const keys = app.store.data.gpgKeys.filter(
      (k) => k.namespace === provider.namespace && k.keyId === version.keyId,
    );
    const document: ConsumerDownloadDocument = {
      protocols: version.protocols,
      os: platform.os,
      arch: platform.arch,
      filename: platform.filename,
      download_url: link(platform.binary.key),
      shasums_url: link(version.shasums.key),
      shasums_signature_url: link(version.shasumsSig.key),
      shasum: platform.shasum,
      signing_keys: {
        gpg_public_keys: ctx.withoutKeys
          ? null
          : keys.map((k) => ({
              key_id: k.keyId,
              ascii_armor: k.asciiArmor,
              trust_signature: '',
              source: '',
              source_url: null,
            })),
      },
    };
    if (app.settings.packageHashes) {
      document.packages = packagesOf(platformsOf(version), ctx.wrongHash, `${platform.os}_${platform.arch}`);
    }
    sendJson(ctx.res, 200, document);
  });
}

/**
 * OpenTofu's `packages`: every platform given whose lock hashes are known, by `<os>_<arch>` (every platform of the
 * version, as registry.opentofu.org serves it: renovatebot/renovate#43573, updatecli/updatecli#9611), with the
 * zip's size in bytes. A `wrongHash` fault replaces that scheme's hash of one entry (default: the requested one).
 */
function packagesOf(
  platforms: StoredPlatform[],
  wrong: WrongHash | undefined,
  requested: string,
): Record<string, ConsumerPackage> {
  const packages: Record<string, ConsumerPackage> = {};
  for (const p of platforms) {
    if (!p.lockHashes || p.binary.bytes === null) continue;
    const key = `${p.os}_${p.arch}`;
    const altered = wrong !== undefined && (wrong.platform ?? requested) === key;
    const hashes = p.lockHashes.map((h) =>
      altered && h.startsWith(`${wrong.scheme}:`) ? wrongLockHash(h) : h,
    );
    packages[key] = { hashes: sortHashes(hashes), package_size: p.binary.bytes };
  }
  return packages;
}
