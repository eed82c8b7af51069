/** Registry provider routes: create, list, read (by address or id), delete. */
import type { App } from '../app.js';
import {
  authenticate,
  findProvider,
  requireOrganization,
  requirePrivateRegistry,
  requireWriter,
} from '../app.js';
import { providerResource } from '../documents.js';
import { notFound, parseJson, sendDocument, type Router } from '../http.js';
import { paginate } from '../pagination.js';
import { newId } from '../state.js';
import { Problems, attributesOf, requiredString } from '../validate.js';

const PROVIDER_NAME = /^[a-z0-9][a-z0-9-]*$/;
const BASE = '/api/v2/organizations/:org/registry-providers';
const ONE = `${BASE}/:registry/:namespace/:name`;

/** Registers the provider routes. */
export function registerProviderRoutes(router: Router, app: App): void {
  router.on('POST', BASE, (ctx) => {
    const principal = authenticate(app, ctx.req);
    requireOrganization(principal, ctx.params.org!);
    requireWriter(principal);
    const attrs = attributesOf(parseJson(ctx.body));
    const problems = new Problems();
    const name = requiredString(attrs, 'name', problems);
    const namespace = requiredString(attrs, 'namespace', problems);
    const registryName = attrs['registry-name'];
    if (registryName === undefined || registryName === null || registryName === '') {
      problems.add('registry-name', "Registry name can't be blank");
      problems.add('registry-name', 'Registry name is not included in the list');
    } else if (registryName !== 'private' && registryName !== 'public') {
      problems.add('registry-name', 'Registry name is not included in the list');
    }
    if (name !== undefined && !PROVIDER_NAME.test(name)) {
      problems.add('name', 'Name is invalid: use lower-case letters, digits and dashes');
    }
    if (registryName === 'private' && namespace !== undefined && namespace !== ctx.params.org) {
      problems.add('namespace', 'Namespace must be the organization name for a private provider');
    }
    problems.throwIfAny();
    if (registryName === 'public') requirePrivateRegistry('public');
    const org = ctx.params.org!;
    if (
      app.store.data.providers.some(
        (p) =>
          p.organization === org &&
          p.registryName === 'private' &&
          p.namespace === namespace &&
          p.name === name,
      )
    ) {
      const taken = new Problems();
      taken.add('name', 'Name has already been taken');
      taken.throwIfAny();
    }
    const now = app.now();
    const provider = {
      id: newId('prov'),
      organization: org,
      registryName: 'private' as const,
      namespace: namespace!,
      name: name!,
      createdAt: now,
      updatedAt: now,
    };
    app.store.change((data) => data.providers.push(provider));
    sendDocument(ctx.res, 201, { data: providerResource(app, provider, principal) });
  });

  router.on('GET', BASE, (ctx) => {
    const principal = authenticate(app, ctx.req);
    const org = ctx.params.org!;
    requireOrganization(principal, org);
    const registryFilter = ctx.query.get('filter[registry_name]');
    const search = ctx.query.get('q');
    const all = app.store.data.providers.filter(
      (p) =>
        p.organization === org &&
        (registryFilter === null || p.registryName === registryFilter) &&
        (search === null || p.name.includes(search) || p.namespace.includes(search)),
    );
    const filters = new URLSearchParams();
    if (registryFilter !== null) filters.set('filter[registry_name]', registryFilter);
    if (search !== null) filters.set('q', search);
    const page = paginate(all, ctx.query, `${app.baseUrl()}${ctx.path.replace(/\/$/, '')}`, filters);
    sendDocument(ctx.res, 200, {
      data: page.items.map((p) => providerResource(app, p, principal)),
      links: page.links,
      meta: { pagination: page.pagination },
    });
  });

  router.on('GET', ONE, (ctx) => {
    const principal = authenticate(app, ctx.req);
    requireOrganization(principal, ctx.params.org!);
    requirePrivateRegistry(ctx.params.registry!);
    const provider = findProvider(app, ctx.params.org!, ctx.params.namespace!, ctx.params.name!);
    sendDocument(ctx.res, 200, { data: providerResource(app, provider, principal) });
  });

  router.on('GET', '/api/v2/registry-providers/:id', (ctx) => {
    const principal = authenticate(app, ctx.req);
    const provider = app.store.data.providers.find((p) => p.id === ctx.params.id);
    if (!provider || provider.organization !== principal.organization) throw notFound();
    sendDocument(ctx.res, 200, { data: providerResource(app, provider, principal) });
  });

  router.on('DELETE', ONE, (ctx) => {
    const principal = authenticate(app, ctx.req);
    requireOrganization(principal, ctx.params.org!);
    requirePrivateRegistry(ctx.params.registry!);
    requireWriter(principal);
    const provider = findProvider(app, ctx.params.org!, ctx.params.namespace!, ctx.params.name!);
    app.store.change(() => app.store.deleteProvider(provider));
    ctx.res.writeHead(204).end();
  });
}
