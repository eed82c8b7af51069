/** Provider version routes: create, list, read, delete (a delete takes the platforms and files with it). */
import { PROTOCOL_VERSIONS } from '../../terraform.js';
import {
  authenticate,
  findProvider,
  findVersion,
  requireOrganization,
  requirePrivateRegistry,
  requireWriter,
  type App,
  type Principal,
} from '../app.js';
import { versionResource } from '../documents.js';
import { parseJson, sendDocument, type RequestContext, type Router } from '../http.js';
import { paginate } from '../pagination.js';
import { newId, newObject, type StoredProvider } from '../state.js';
import { isStrictSemver } from '../../registry/version.js';
import { Problems, attributesOf, requiredString } from '../validate.js';

/** Path of the versions collection of a provider. */
export const VERSIONS = '/api/v2/organizations/:org/registry-providers/:registry/:namespace/:name/versions';

/** Authenticates and resolves the provider in the path (401, 404, 403 in the platform's order). */
export function providerFromPath(app: App, ctx: RequestContext, write: boolean): [Principal, StoredProvider] {
  const principal = authenticate(app, ctx.req);
  requireOrganization(principal, ctx.params.org!);
  requirePrivateRegistry(ctx.params.registry!);
  if (write) requireWriter(principal);
  return [principal, findProvider(app, ctx.params.org!, ctx.params.namespace!, ctx.params.name!)];
}

/** Registers the version routes. */
export function registerVersionRoutes(router: Router, app: App): void {
  router.on('POST', VERSIONS, (ctx) => {
    const [principal, provider] = providerFromPath(app, ctx, true);
    const attrs = attributesOf(parseJson(ctx.body));
    const problems = new Problems();
    const version = requiredString(attrs, 'version', problems);
    if (version !== undefined && !isStrictSemver(version)) {
      problems.add(
        'version',
        `Version "${version}" is not a valid semantic version (e.g. 1.2.3 or 1.2.3-beta.1)`,
      );
    }
    const keyId = requiredString(attrs, 'key-id', problems);
    if (keyId !== undefined && app.settings.strict && !/^[0-9A-F]{16}$/.test(keyId)) {
      problems.add('key-id', 'Key id must be a long key id: 16 upper-case hexadecimal digits');
    }
    const protocols = readProtocols(attrs, problems, app.settings.strict);
    if (
      version !== undefined &&
      app.store.data.versions.some((v) => v.providerId === provider.id && v.version === version)
    ) {
      problems.add('version', 'Version has already been taken');
    }
    problems.throwIfAny();
    const now = app.now();
    const stored = {
      id: newId('provver'),
      providerId: provider.id,
      version: version!,
      keyId: keyId!,
      protocols,
      createdAt: now,
      updatedAt: now,
      shasums: newObject(),
      shasumsSig: newObject(),
    };
    app.store.change((data) => data.versions.push(stored));
    sendDocument(ctx.res, 201, { data: versionResource(app, provider, stored, principal) });
  });

  router.on('GET', VERSIONS, (ctx) => {
    const [principal, provider] = providerFromPath(app, ctx, false);
    const all = app.store.data.versions.filter((v) => v.providerId === provider.id);
    const page = paginate(all, ctx.query, `${app.baseUrl()}${ctx.path.replace(/\/$/, '')}`);
    sendDocument(ctx.res, 200, {
      data: page.items.map((v) => versionResource(app, provider, v, principal)),
      links: page.links,
      meta: { pagination: page.pagination },
    });
  });

  router.on('GET', `${VERSIONS}/:version`, (ctx) => {
    const [principal, provider] = providerFromPath(app, ctx, false);
    const version = findVersion(app, provider, ctx.params.version!);
    sendDocument(ctx.res, 200, { data: versionResource(app, provider, version, principal) });
  });

  router.on('DELETE', `${VERSIONS}/:version`, (ctx) => {
    const [, provider] = providerFromPath(app, ctx, true);
    const version = findVersion(app, provider, ctx.params.version!);
    app.store.change(() => app.store.deleteVersion(version));
    ctx.res.writeHead(204).end();
  });
}

/**
 * `protocols`: each value must be 4.0, 5.0 or 6.0. The real registry accepts a version without protocols
 * (go-tfe's integration test creates one), so absence is a problem only in strict mode.
 */
function readProtocols(attrs: Record<string, unknown>, problems: Problems, strict: boolean): string[] {
  const value = attrs.protocols;
  if (value === undefined || value === null) {
    if (strict) problems.add('protocols', "Protocols can't be blank: give one or more of 4.0, 5.0, 6.0");
    return [];
  }
  if (!Array.isArray(value) || !value.every((p): p is string => typeof p === 'string')) {
    problems.add('protocols', 'Protocols must be an array of strings');
    return [];
  }
  const allowed: readonly string[] = PROTOCOL_VERSIONS;
  const bad = value.filter((p) => !allowed.includes(p));
  if (bad.length > 0) {
    problems.add('protocols', `Protocols must be one or more of 4.0, 5.0, 6.0 (got ${bad.join(', ')})`);
  }
  if (strict && value.length === 0) problems.add('protocols', "Protocols can't be blank");
  return [...new Set(value)];
}
