/**
 * GPG key routes under `/api/registry/:registry_name/v2/gpg-keys`: add, list by namespace, read, delete.
 * Only RSA and DSA public keys are accepted, as on the real registry.
 */
import { authenticate, requirePrivateRegistry, requireWriter, type App, type Principal } from '../app.js';
import { gpgKeyResource } from '../documents.js';
import { HttpProblem, notFound, parseJson, sendDocument, type Router } from '../http.js';
import { paginate } from '../pagination.js';
import { Problems, attributesOf, requiredString } from '../validate.js';

const BASE = '/api/registry/:registry/v2/gpg-keys';
const ACCEPTED_ALGORITHMS = new Set(['rsaEncryptSign', 'rsaSign', 'rsaEncrypt', 'dsa']);

/** What the emulator needs to know of an armored public key. */
interface KeyFacts {
  keyId: string;
  algorithm: string;
  isPrivate: boolean;
}

async function readKeyFacts(armored: string): Promise<KeyFacts | undefined> {
  const openpgp = await import('openpgp');
  try {
    const key = await openpgp.readKey({ armoredKey: armored });
    return {
      keyId: key.getKeyID().toHex().toUpperCase(),
      algorithm: key.getAlgorithmInfo().algorithm,
      isPrivate: key.isPrivate(),
    };
  } catch {
    return undefined;
  }
}

/** A namespace the caller may use: in this emulator, the caller's own organization. */
function requireNamespace(principal: Principal, namespace: string): void {
  if (principal.organization !== namespace) throw notFound();
}

/** Registers the GPG key routes. */
export function registerGpgKeyRoutes(router: Router, app: App): void {
  router.on('POST', BASE, async (ctx) => {
    const principal = authenticate(app, ctx.req);
    requirePrivateRegistry(ctx.params.registry!);
    requireWriter(principal);
    const attrs = attributesOf(parseJson(ctx.body));
    const problems = new Problems();
    const namespace = requiredString(attrs, 'namespace', problems);
    const armor = requiredString(attrs, 'ascii-armor', problems);
    problems.throwIfAny();
    requireNamespace(principal, namespace!);
    const facts = await readKeyFacts(armor!);
    if (!facts) {
      problems.add('ascii-armor', 'ASCII armor is invalid: expected an armored OpenPGP public key block');
    } else if (facts.isPrivate) {
      problems.add('ascii-armor', 'ASCII armor contains a private key: upload only the public key');
    } else if (!ACCEPTED_ALGORITHMS.has(facts.algorithm)) {
      problems.add(
        'ascii-armor',
        `Only RSA and DSA keys are supported; this key uses ${facts.algorithm} (ECC keys are not accepted)`,
      );
    } else if (app.store.data.gpgKeys.some((k) => k.namespace === namespace && k.keyId === facts.keyId)) {
      problems.add('key-id', 'Key has already been taken');
    }
    problems.throwIfAny();
    const now = app.now();
    const stored = app.store.change((data) => {
      const key = {
        id: String(data.nextGpgKeyId++),
        namespace: namespace!,
        keyId: facts!.keyId,
        asciiArmor: armor!,
        createdAt: now,
        updatedAt: now,
      };
      data.gpgKeys.push(key);
      return key;
    });
    sendDocument(ctx.res, 201, { data: gpgKeyResource(stored) });
  });

  router.on('GET', BASE, (ctx) => {
    const principal = authenticate(app, ctx.req);
    requirePrivateRegistry(ctx.params.registry!);
    const filter = ctx.query.get('filter[namespace]');
    if (filter === null || filter.trim() === '') {
      throw new HttpProblem(400, [
        { status: '400', title: 'bad request', detail: 'missing namespaces in request' },
      ]);
    }
    const namespaces = filter.split(',').filter((n) => n === principal.organization);
    if (namespaces.length === 0) {
      throw new HttpProblem(403, [
        { status: '403', title: 'forbidden', detail: 'no authorized namespaces specified in request' },
      ]);
    }
    const all = app.store.data.gpgKeys.filter((k) => namespaces.includes(k.namespace));
    // The documented list uses relative links without the /api/registry/private prefix, and no `self`.
    const page = paginate(
      all,
      ctx.query,
      '/v2/gpg-keys',
      new URLSearchParams({ 'filter[namespace]': filter }),
      {
        withSelf: false,
      },
    );
    sendDocument(ctx.res, 200, {
      data: page.items.map(gpgKeyResource),
      links: page.links,
      meta: { pagination: page.pagination },
    });
  });

  const findKey = (namespace: string, keyId: string) => {
    const found = app.store.data.gpgKeys.find((k) => k.namespace === namespace && k.keyId === keyId);
    if (!found) throw notFound();
    return found;
  };

  router.on('GET', `${BASE}/:namespace/:keyId`, (ctx) => {
    const principal = authenticate(app, ctx.req);
    requirePrivateRegistry(ctx.params.registry!);
    requireNamespace(principal, ctx.params.namespace!);
    sendDocument(ctx.res, 200, { data: gpgKeyResource(findKey(ctx.params.namespace!, ctx.params.keyId!)) });
  });

  router.on('DELETE', `${BASE}/:namespace/:keyId`, (ctx) => {
    const principal = authenticate(app, ctx.req);
    requirePrivateRegistry(ctx.params.registry!);
    requireNamespace(principal, ctx.params.namespace!);
    requireWriter(principal);
    const key = findKey(ctx.params.namespace!, ctx.params.keyId!);
    app.store.change((data) => {
      data.gpgKeys = data.gpgKeys.filter((k) => k.id !== key.id);
    });
    ctx.res.writeHead(204).end();
  });
}
