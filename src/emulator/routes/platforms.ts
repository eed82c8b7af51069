/** Provider platform routes: create, list, read, delete, addressed by os and arch under a version. */
import { isKnownOs, isKnownPlatform } from '../../terraform/names.js';
import { findVersion, type App } from '../app.js';
import { platformResource } from '../documents.js';
import { notFound, parseJson, sendDocument, type Router } from '../http.js';
import { paginate } from '../pagination.js';
import { newId, newObject } from '../state.js';
import { Problems, attributesOf, requiredString } from '../validate.js';
import { VERSIONS, providerFromPath } from './versions.js';

const PLATFORMS = `${VERSIONS}/:version/platforms`;

/** Registers the platform routes. */
export function registerPlatformRoutes(router: Router, app: App): void {
  router.on('POST', PLATFORMS, (ctx) => {
    const [principal, provider] = providerFromPath(app, ctx, true);
    const version = findVersion(app, provider, ctx.params.version!);
    // data.type is not checked: the documented sample sends "registry-provider-version-platforms".
    const attrs = attributesOf(parseJson(ctx.body));
    const problems = new Problems();
    const os = requiredString(attrs, 'os', problems);
    const arch = requiredString(attrs, 'arch', problems);
    const shasum = requiredString(attrs, 'shasum', problems);
    const filename = requiredString(attrs, 'filename', problems);
    if (os !== undefined && arch !== undefined && !isKnownPlatform(os, arch)) {
      problems.add(isKnownOs(os) ? 'arch' : 'os', `${os}/${arch} is not a supported os/arch combination`);
    }
    if (app.settings.strict && shasum !== undefined && !/^[0-9a-f]{64}$/.test(shasum)) {
      problems.add('shasum', 'Shasum must be a SHA-256 hash: 64 lower-case hexadecimal digits');
    }
    if (app.settings.strict && filename !== undefined && /[/\\]|^\.\.?$/.test(filename)) {
      problems.add('filename', 'Filename must be a bare file name, without a path');
    }
    const platforms = app.store.data.platforms.filter((p) => p.versionId === version.id);
    if (platforms.some((p) => p.os === os && p.arch === arch)) {
      problems.add('os', `Os has already been taken (${os}/${arch} exists for this version)`);
    }
    problems.throwIfAny();
    const stored = {
      id: newId('provpltfrm'),
      versionId: version.id,
      os: os!,
      arch: arch!,
      filename: filename!,
      shasum: shasum!,
      createdAt: app.now(),
      binary: newObject(),
    };
    app.store.change((data) => data.platforms.push(stored));
    sendDocument(ctx.res, 201, { data: platformResource(app, stored, principal) });
  });

  router.on('GET', PLATFORMS, (ctx) => {
    const [principal, provider] = providerFromPath(app, ctx, false);
    const version = findVersion(app, provider, ctx.params.version!);
    const all = app.store.data.platforms.filter((p) => p.versionId === version.id);
    const page = paginate(all, ctx.query, `${app.baseUrl()}${ctx.path.replace(/\/$/, '')}`);
    sendDocument(ctx.res, 200, {
      data: page.items.map((p) => platformResource(app, p, principal)),
      links: page.links,
      meta: { pagination: page.pagination },
    });
  });

  const findPlatform = (versionId: string, os: string, arch: string) => {
    const found = app.store.data.platforms.find(
      (p) => p.versionId === versionId && p.os === os && p.arch === arch,
    );
    if (!found) throw notFound();
    return found;
  };

  router.on('GET', `${PLATFORMS}/:os/:arch`, (ctx) => {
    const [principal, provider] = providerFromPath(app, ctx, false);
    const version = findVersion(app, provider, ctx.params.version!);
    const platform = findPlatform(version.id, ctx.params.os!, ctx.params.arch!);
    sendDocument(ctx.res, 200, { data: platformResource(app, platform, principal) });
  });

  router.on('DELETE', `${PLATFORMS}/:os/:arch`, (ctx) => {
    const [, provider] = providerFromPath(app, ctx, true);
    const version = findVersion(app, provider, ctx.params.version!);
    const platform = findPlatform(version.id, ctx.params.os!, ctx.params.arch!);
    app.store.change(() => app.store.deletePlatform(platform));
    ctx.res.writeHead(204).end();
  });
}
