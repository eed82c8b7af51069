/**
 * Provider version routes: create, list, read, delete (a delete takes the platforms and files with it), and the
 * version tags of HCP Terraform (2026): the PATCH that replaces a version's tag bindings, the GET of them by
 * version id (providers/version-tags.mdx) and the tag-filtered versions list (providers/index.mdx).
 */
import { PROTOCOL_VERSIONS } from '../../terraform/names.js';
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
import { providerPath, tagBindingResource, taggedVersionItem, versionResource } from '../documents.js';
import {
  HttpProblem,
  invalidMany,
  notFound,
  parseJson,
  sendDocument,
  type Handler,
  type RequestContext,
  type Router,
} from '../http.js';
import { paginate } from '../pagination.js';
import {
  newId,
  newObject,
  type StoredProvider,
  type StoredTagBinding,
  type StoredVersion,
} from '../state.js';
import { isStrictSemver } from '../../terraform/names.js';
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
  router.on('POST', VERSIONS, createVersion(app));

  router.on('GET', VERSIONS, listVersions(app));

  router.on('PATCH', `${VERSIONS}/:version`, updateVersionTags(app));

  router.on('GET', '/api/v2/registry-provider-versions/:id/tag-bindings', (ctx) => {
    const principal = authenticate(app, ctx.req);
    const version = app.store.data.versions.find((v) => v.id === ctx.params.id);
    const provider = app.store.data.providers.find((p) => p.id === version?.providerId);
    if (version === undefined || provider === undefined) throw notFound();
    requireOrganization(principal, provider.organization);
    sendDocument(ctx.res, 200, {
      data: (version.tags ?? []).map(tagBindingResource),
      links: {
        target: `${providerPath(provider)}/versions?version=${encodeURIComponent(version.version)}`,
      },
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

/** `POST …/versions`: a new version, its attributes checked as the platform checks them (422 naming each). */
function createVersion(app: App): Handler {
  return (ctx) => {
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
  };
}

/** `GET …/versions`: the versions, a page at a time; with `filter[…]` the tag-aware list items. */
function listVersions(app: App): Handler {
  return (ctx) => {
    const [principal, provider] = providerFromPath(app, ctx, false);
    const all = app.store.data.versions.filter((v) => v.providerId === provider.id);
    const linkBase = `${app.baseUrl()}${ctx.path.replace(/\/$/, '')}`;
    const filters = tagFilters(ctx.query);
    if (filters === undefined) {
      const page = paginate(all, ctx.query, linkBase);
      sendDocument(ctx.res, 200, {
        data: page.items.map((v) => versionResource(app, provider, v, principal)),
        links: page.links,
        meta: { pagination: page.pagination },
      });
      return;
    }
    // The tag-filtered list answers HCP Terraform's tag-aware items, the filter kept in its links.
    const kept = new URLSearchParams([...ctx.query].filter(([name]) => name.startsWith('filter[')));
    const page = paginate(
      all.filter((v) => matchesFilters(v, filters)),
      ctx.query,
      linkBase,
      kept,
    );
    sendDocument(ctx.res, 200, {
      data: page.items.map((v) => taggedVersionItem(provider, v)),
      links: page.links,
      meta: { pagination: page.pagination },
    });
  };
}

/** `PATCH …/versions/:version`: the version's tag bindings replaced (a binding kept keeps its id). */
function updateVersionTags(app: App): Handler {
  return (ctx) => {
    const [principal, provider] = providerFromPath(app, ctx, true);
    const version = findVersion(app, provider, ctx.params.version!);
    const wanted = readTagBindings(parseJson(ctx.body));
    if (wanted !== undefined) {
      const now = app.now();
      app.store.change(() => {
        version.tags = wanted.map(
          ({ key, value }): StoredTagBinding =>
            version.tags?.find((t) => t.key === key && t.value === value) ?? {
              id: newId('tb'),
              key,
              value,
              createdAt: now,
            },
        );
      });
    }
    // providers/version-tags.mdx, sample response: the version document, its platforms relationship named
    // `registry-provider-platforms`.
    const doc = versionResource(app, provider, version, principal);
    const { platforms, ...relationships } = doc.relationships;
    sendDocument(ctx.res, 200, {
      data: { ...doc, relationships: { ...relationships, 'registry-provider-platforms': platforms } },
    });
  };
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

/** A `filter[tagged][INDEX]` condition: a key, a value, or both (AND); conditions of different indexes are ORed. */
interface TagCondition {
  key?: string;
  value?: string;
}

const TAGGED = /^filter\[tagged\]\[(\d+)\]\[(key|value)\]$/;

/** The `filter[tagged]` conditions of the query (providers/index.mdx), or undefined when there are none. */
function tagFilters(query: URLSearchParams): TagCondition[] | undefined {
  const byIndex = new Map<string, TagCondition>();
  for (const [name, value] of query) {
    if (!name.startsWith('filter[tagged]')) continue;
    const match = TAGGED.exec(name);
    if (!match) {
      throw new HttpProblem(400, [
        {
          status: '400',
          title: 'bad request',
          detail: 'Tag filters are filter[tagged][INDEX][key] and filter[tagged][INDEX][value]',
          source: { parameter: name },
        },
      ]);
    }
    const condition = byIndex.get(match[1]!) ?? {};
    condition[match[2] as 'key' | 'value'] = value;
    byIndex.set(match[1]!, condition);
  }
  return byIndex.size === 0 ? undefined : [...byIndex.values()];
}

function matchesFilters(v: StoredVersion, filters: TagCondition[]): boolean {
  return filters.some((f) =>
    (v.tags ?? []).some(
      (t) => (f.key === undefined || t.key === f.key) && (f.value === undefined || t.value === f.value),
    ),
  );
}

// The emulator's own copy of the format rule (registry_tagging.mdx: keys up to 128, values up to 256
// characters, of letters, digits, spaces and `_.=+-@:`); the client checks the same before sending.
const TAG_TEXT = /^[A-Za-z0-9 _.=+\-@:]+$/;

/**
 * The tag bindings a PATCH asks for, without repeats; undefined when it names no `tag-bindings` relationship
 * (the tags are then left as they are). 400 for a body that is not a JSON:API document, 422 for a wrong type
 * or a key or value of the wrong format, every problem listed (providers/version-tags.mdx: 400 and 422).
 */
function readTagBindings(body: unknown): { key: string; value: string }[] | undefined {
  const data = isObject(body) ? body.data : undefined;
  if (!isObject(data)) {
    throw new HttpProblem(400, [
      { status: '400', title: 'bad request', detail: 'Request body cannot be parsed: no data object' },
    ]);
  }
  const problems: { pointer: string; detail: string }[] = [];
  if (data.type !== 'registry-provider-versions') {
    problems.push({ pointer: '/data/type', detail: 'Type must be "registry-provider-versions"' });
  }
  const relationships = isObject(data.relationships) ? data.relationships : {};
  const bindings = relationships['tag-bindings'];
  if (bindings === undefined && problems.length === 0) return undefined;
  const list = isObject(bindings) ? bindings.data : undefined;
  const base = '/data/relationships/tag-bindings/data';
  if (!Array.isArray(list)) {
    problems.push({ pointer: base, detail: 'Tag bindings must be an array of tag-bindings' });
    throw invalidMany(problems);
  }
  const wanted = new Map<string, { key: string; value: string }>();
  list.forEach((item: unknown, i) => {
    const attributes = isObject(item) && isObject(item.attributes) ? item.attributes : {};
    const key = checkTagText(attributes.key, 'key', 128, `${base}/${i}/attributes/key`, problems);
    const value = checkTagText(attributes.value, 'value', 256, `${base}/${i}/attributes/value`, problems);
    if (key !== undefined && value !== undefined) wanted.set(JSON.stringify([key, value]), { key, value });
  });
  if (problems.length > 0) throw invalidMany(problems);
  return [...wanted.values()];
}

function checkTagText(
  text: unknown,
  part: 'key' | 'value',
  max: number,
  pointer: string,
  problems: { pointer: string; detail: string }[],
): string | undefined {
  const label = part === 'key' ? 'Tag key' : 'Tag value';
  if (typeof text !== 'string' || text === '') {
    problems.push({ pointer, detail: `${label} can't be blank` });
    return undefined;
  }
  if (text.length > max) {
    problems.push({ pointer, detail: `${label} is too long (maximum is ${max} characters)` });
    return undefined;
  }
  if (!TAG_TEXT.test(text) || text.trim() !== text) {
    problems.push({
      pointer,
      detail: `${label} has an invalid format: use letters, numbers, spaces and _.=+-@: only`,
    });
    return undefined;
  }
  return text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
