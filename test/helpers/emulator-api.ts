/**
 * Driving the emulator over real HTTP (Node's global fetch, loopback only): requests, the documented paths,
 * payload builders, the fixture release and keys, seeding helpers, a controllable clock and per-test emulators.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import type { FaultRule } from '../../src/emulator/faults.js';
import { ARCHIVIST_PREFIX } from '../../src/emulator/links.js';
import type { RequestRecord } from '../../src/emulator/requestLog.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { arr, isObject, str, type JsonObject } from './json.js';

/** The repository root (where `fixtures/`, `bin/` and `dist/` live). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The JSON:API media type. */
export const JSONAPI = 'application/vnd.api+json';

/** One HTTP answer, read completely. */
export interface Reply {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: unknown;
}

/** What a request may carry. `token: undefined` sends no Authorization header at all. */
export interface CallOptions {
  token?: string | undefined;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Sends one request to `base` + `path` (or to `path` itself when it is an absolute URL). */
export async function call(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { accept: JSONAPI, ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined;
  if (options.body instanceof Uint8Array) {
    body = options.body;
  } else if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= JSONAPI;
  }
  const url = /^https?:\/\//.test(path) ? path : `${base}${path}`;
  const response = await fetch(url, { method, headers, body });
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  if (/json/.test(response.headers.get('content-type') ?? '') && text.length > 0) json = JSON.parse(text);
  return { status: response.status, headers: response.headers, bytes, text, json };
}

/** A client bound to one emulator and one token. */
export class Api {
  constructor(
    readonly base: string,
    readonly token: string | undefined,
  ) {}

  /** GET. */
  get(path: string): Promise<Reply> {
    return call(this.base, 'GET', path, { token: this.token });
  }

  /** POST a JSON:API body. */
  post(path: string, body: unknown): Promise<Reply> {
    return call(this.base, 'POST', path, { token: this.token, body });
  }

  /** DELETE. */
  delete(path: string): Promise<Reply> {
    return call(this.base, 'DELETE', path, { token: this.token });
  }
}

/** Clients for the emulator's three tokens and for no token at all. */
export function clients(emulator: Emulator): { owner: Api; member: Api; outsider: Api; anonymous: Api } {
  return {
    owner: new Api(emulator.url, emulator.ownerToken),
    member: new Api(emulator.url, emulator.memberToken),
    outsider: new Api(emulator.url, emulator.outsiderToken),
    anonymous: new Api(emulator.url, undefined),
  };
}

/** The documented paths of one private provider of `org`. */
export function providerPaths(org: string, name: string, registry = 'private') {
  const providers = `/api/v2/organizations/${org}/registry-providers`;
  const provider = `${providers}/${registry}/${org}/${name}`;
  const versions = `${provider}/versions`;
  return {
    providers,
    provider,
    versions,
    version: (version: string) => `${versions}/${version}`,
    platforms: (version: string) => `${versions}/${version}/platforms`,
    platform: (version: string, os: string, arch: string) => `${versions}/${version}/platforms/${os}/${arch}`,
  };
}

/** The GPG key endpoints (under the registry API, not /api/v2). */
export function gpgKeyPaths(registry = 'private') {
  const keys = `/api/registry/${registry}/v2/gpg-keys`;
  return {
    keys,
    list: (namespaces: string, query = '') =>
      `${keys}?filter%5Bnamespace%5D=${encodeURIComponent(namespaces)}${query}`,
    key: (namespace: string, keyId: string) => `${keys}/${namespace}/${keyId}`,
  };
}

/** Provider create body. */
export function providerPayload(org: string, name: string, registryName = 'private'): JsonObject {
  return {
    data: { type: 'registry-providers', attributes: { name, namespace: org, 'registry-name': registryName } },
  };
}

/** Version create body; `attributes` replaces the defaults wholesale when given. */
export function versionPayload(attributes: JsonObject): JsonObject {
  return { data: { type: 'registry-provider-versions', attributes } };
}

/** Platform create body (the documented sample's `data.type`). */
export function platformPayload(attributes: JsonObject): JsonObject {
  return { data: { type: 'registry-provider-version-platforms', attributes } };
}

/** GPG key add body. */
export function gpgKeyPayload(namespace: string, armor: string): JsonObject {
  return { data: { type: 'gpg-keys', attributes: { namespace, 'ascii-armor': armor } } };
}

/** Names of the fixture keys. */
export type FixtureKey = 'signer' | 'other' | 'subkey' | 'expired' | 'ecc';

/** A fixture key's armored public key. */
export function publicKey(name: FixtureKey): string {
  return readFileSync(join(REPO_ROOT, 'fixtures', 'keys', `${name}.pub.asc`), 'utf8');
}

/** A fixture key's armored secret key. */
export function secretKey(name: FixtureKey): string {
  return readFileSync(join(REPO_ROOT, 'fixtures', 'keys', `${name}.sec.asc`), 'utf8');
}

/** A fixture key's long key id (16 upper-case hex digits). */
export function keyIdOf(name: FixtureKey): string {
  return readFileSync(join(REPO_ROOT, 'fixtures', 'keys', `${name}.keyid`), 'utf8').trim();
}

/** One platform zip of the fixture release. */
export interface ReleaseZip {
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  bytes: Buffer;
}

/** The fixture release (`fixtures/release/`): terraform-provider-example 1.2.3, protocol 6.0, signed by `signer`. */
export interface FixtureRelease {
  name: string;
  version: string;
  protocols: string[];
  keyId: string;
  sums: Buffer;
  sig: Buffer;
  zips: ReleaseZip[];
  zip(os: string, arch: string): ReleaseZip;
}

/** Reads the fixture release, taking each zip's shasum from SHA256SUMS (and checking it against the bytes). */
export function loadRelease(): FixtureRelease {
  const dir = join(REPO_ROOT, 'fixtures', 'release');
  const prefix = 'terraform-provider-example_1.2.3';
  const sums = readFileSync(join(dir, `${prefix}_SHA256SUMS`));
  const zips: ReleaseZip[] = [];
  for (const line of sums.toString('utf8').split('\n')) {
    const match =
      /^([0-9a-f]{64}) {2}(terraform-provider-example_1\.2\.3_([a-z0-9]+)_([a-z0-9]+)\.zip)$/.exec(line);
    if (!match) continue;
    const [, shasum, filename, os, arch] = match as unknown as [string, string, string, string, string];
    const bytes = readFileSync(join(dir, filename));
    if (createHash('sha256').update(bytes).digest('hex') !== shasum)
      throw new Error(`${filename}: shasum mismatch`);
    zips.push({ os, arch, filename, shasum, bytes });
  }
  return {
    name: 'example',
    version: '1.2.3',
    protocols: ['6.0'],
    keyId: keyIdOf('signer'),
    sums,
    sig: readFileSync(join(dir, `${prefix}_SHA256SUMS.sig`)),
    zips,
    zip(os, arch) {
      const found = zips.find((z) => z.os === os && z.arch === arch);
      if (!found) throw new Error(`the fixture release has no ${os}_${arch} zip`);
      return found;
    },
  };
}

/** PUT bytes to an archivist link exactly as a publisher does: octet-stream, a Content-Length, no token. */
export function upload(link: string, bytes: Uint8Array): Promise<Reply> {
  return call('', 'PUT', link, { body: bytes, headers: { 'content-type': 'application/octet-stream' } });
}

/** GET an archivist link without a token. */
export function download(link: string): Promise<Reply> {
  return call('', 'GET', link, { headers: { accept: '*/*' } });
}

/** Fails with the answer's body in the message when the status is not the expected one. */
export function expectStatus(reply: Reply, status: number): void {
  expect({ status: reply.status, body: reply.json ?? reply.text }).toMatchObject({ status });
}

/** Fails unless the answer is a success (2xx): archivist's answer to an upload is undocumented beyond that. */
export function expectSuccess(reply: Reply): void {
  expect(reply.status, `a 2xx answer, got ${reply.status}: ${reply.text}`).toBeGreaterThanOrEqual(200);
  expect(reply.status, `a 2xx answer, got ${reply.status}: ${reply.text}`).toBeLessThan(300);
}

/** One JSON:API error object as the tests read it. */
export interface ErrorObjectView {
  status: unknown;
  title: unknown;
  detail: unknown;
  pointer: unknown;
}

/**
 * Checks a JSON:API error document (D5, the documented error sample): the status, the media type, a non-empty
 * `errors` array of objects whose `status` is the status as a string; with `pointer`, one error must point at it.
 */
export function expectErrorDocument(
  reply: Reply,
  status: number,
  expected: { pointer?: string; detail?: RegExp } = {},
): ErrorObjectView[] {
  expectStatus(reply, status);
  expect(reply.headers.get('content-type') ?? '').toContain(JSONAPI);
  const errors = arr(reply.json, 'errors');
  expect(errors.length).toBeGreaterThan(0);
  const views = errors.map((e): ErrorObjectView => {
    if (!isObject(e)) throw new Error(`errors: ${JSON.stringify(e)} is not an object`);
    const source = e.source;
    return {
      status: e.status,
      title: e.title,
      detail: e.detail,
      pointer: isObject(source) ? source.pointer : undefined,
    };
  });
  for (const view of views) {
    expect(view.status).toBe(String(status));
    expect(typeof view.title === 'string' || typeof view.detail === 'string').toBe(true);
  }
  if (expected.pointer !== undefined) {
    const matching = views.filter((v) => v.pointer === expected.pointer);
    expect(matching, `an error pointing at ${expected.pointer} in ${reply.text}`).not.toHaveLength(0);
    if (expected.detail) {
      const details = matching.map((v) => v.detail);
      expect(details, `a detail matching ${String(expected.detail)}`).toContainEqual(
        expect.stringMatching(expected.detail),
      );
    }
  } else if (expected.detail) {
    const details = views.map((v) => v.detail);
    expect(details, `a detail matching ${String(expected.detail)}`).toContainEqual(
      expect.stringMatching(expected.detail),
    );
  }
  return views;
}

/** A clock the test moves by hand (milliseconds). */
export interface ManualClock {
  t: number;
  now: () => number;
  advance(ms: number): void;
}

/** A manual clock starting at a fixed instant with non-zero milliseconds. */
export function manualClock(start = 1_700_000_000_123): ManualClock {
  const clock: ManualClock = {
    t: start,
    now: () => clock.t,
    advance(ms) {
      clock.t += ms;
    },
  };
  return clock;
}

/** Starts emulators that are closed after each test of the calling file. */
export function emulatorPerTest(): (options?: EmulatorOptions) => Promise<Emulator> {
  const running: Emulator[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.close()));
  });
  return async (options = {}) => {
    const emulator = await startEmulator(options);
    running.push(emulator);
    return emulator;
  };
}

/** Creates the provider (201 expected) and returns its document. */
export async function createProvider(api: Api, org: string, name: string): Promise<unknown> {
  const reply = await api.post(providerPaths(org, name).providers, providerPayload(org, name));
  expectStatus(reply, 201);
  return reply.json;
}

/** Creates a version (201 expected) and returns its document. */
export async function createVersion(
  api: Api,
  org: string,
  name: string,
  attributes: JsonObject,
): Promise<unknown> {
  const reply = await api.post(providerPaths(org, name).versions, versionPayload(attributes));
  expectStatus(reply, 201);
  return reply.json;
}

/** Creates the platform of a fixture zip (201 expected) and returns its document. */
export async function createPlatform(
  api: Api,
  org: string,
  name: string,
  version: string,
  zip: ReleaseZip,
): Promise<unknown> {
  const reply = await api.post(
    providerPaths(org, name).platforms(version),
    platformPayload({ os: zip.os, arch: zip.arch, shasum: zip.shasum, filename: zip.filename }),
  );
  expectStatus(reply, 201);
  return reply.json;
}

/** Adds a fixture key (201 expected) and returns its document. */
export async function addGpgKey(api: Api, namespace: string, key: FixtureKey): Promise<unknown> {
  const reply = await api.post(gpgKeyPaths().keys, gpgKeyPayload(namespace, publicKey(key)));
  expectStatus(reply, 201);
  return reply.json;
}

/** The link named `name` in a document's `data.links`. */
export function linkOf(document: unknown, name: string): string {
  return str(document, `data.links.${name}`);
}

/** What `publishFixture` did: the version document at creation and each platform document at creation. */
export interface Published {
  version: unknown;
  platforms: Map<string, unknown>;
}

/**
 * Publishes (part of) the fixture release through the API, as a publisher would: provider, signer key,
 * version, then each platform; uploads only what `uploads` names (`sums`, `sig`, `os_arch`).
 */
export async function publishFixture(
  emulator: Emulator,
  options: {
    name?: string;
    version?: string;
    platforms?: string[];
    uploads?: string[];
    createProvider?: boolean;
    addKey?: boolean;
  } = {},
): Promise<Published> {
  const release = loadRelease();
  const { owner } = clients(emulator);
  const org = emulator.organization;
  const name = options.name ?? release.name;
  const version = options.version ?? release.version;
  if (options.createProvider !== false) await createProvider(owner, org, name);
  if (options.addKey !== false) await addGpgKey(owner, org, 'signer');
  const versionDoc = await createVersion(owner, org, name, {
    version,
    'key-id': release.keyId,
    protocols: release.protocols,
  });
  const uploads = new Set(options.uploads ?? []);
  if (uploads.has('sums')) expectSuccess(await upload(linkOf(versionDoc, 'shasums-upload'), release.sums));
  if (uploads.has('sig')) expectSuccess(await upload(linkOf(versionDoc, 'shasums-sig-upload'), release.sig));
  const platforms = new Map<string, unknown>();
  for (const pair of options.platforms ?? []) {
    const [os = '', arch = ''] = pair.split('_');
    const zip = release.zip(os, arch);
    const doc = await createPlatform(owner, org, name, version, zip);
    platforms.set(pair, doc);
    if (uploads.has(pair)) expectSuccess(await upload(linkOf(doc, 'provider-binary-upload'), zip.bytes));
  }
  return { version: versionDoc, platforms };
}

/** A request as a start listener sees it: for an archivist link, also the key of the object it names. */
export interface RequestStart {
  method: string;
  path: string;
  objectKey: string | undefined;
}

const startListeners = new WeakMap<Emulator, Set<(request: RequestStart) => FaultRule | void>>();

/**
 * Calls `listener` at the start of every request the emulator receives, before it is handled and in the same
 * turn (the emulator runs in the test's process): a test changes the world there at an exact moment between
 * two requests, for instance a release file after verification and before its upload. A listener that returns
 * a fault rule makes this one request fail that way. Returns the function that removes the listener.
 */
export function onRequestStart(
  emulator: Emulator,
  listener: (request: RequestStart) => FaultRule | void,
): () => void {
  let listeners = startListeners.get(emulator);
  if (listeners === undefined) {
    const all = new Set<(request: RequestStart) => FaultRule | void>();
    listeners = all;
    startListeners.set(emulator, all);
    const decide = emulator.faults.decide.bind(emulator.faults);
    emulator.faults.decide = (method, urlPath) => {
      const request = { method, path: urlPath, objectKey: objectKeyOf(urlPath) };
      let injected: FaultRule | undefined;
      for (const f of all) injected = f(request) ?? injected;
      if (injected === undefined) return decide(method, urlPath);
      return { rule: injected, index: emulator.faults.fired.length };
    };
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The object key an archivist link's path names (its payload is `op:key:expiry`, sealed but not hidden). */
function objectKeyOf(urlPath: string): string | undefined {
  if (!urlPath.startsWith(ARCHIVIST_PREFIX)) return undefined;
  const payload = urlPath.slice(ARCHIVIST_PREFIX.length).split('.')[0] ?? '';
  return Buffer.from(payload, 'base64url').toString('utf8').split(':')[1];
}

/**
 * Resolves once the emulator has logged a request matching `match` (a request is logged when its answer is
 * complete or its connection closes, which for a client that gave up can come after the client's error).
 */
export async function loggedRequest(
  emulator: Emulator,
  match: (record: RequestRecord) => boolean,
): Promise<RequestRecord> {
  for (;;) {
    const found = emulator.requestLog.records.find(match);
    if (found !== undefined) return found;
    await sleep(5);
  }
}

/**
 * Counts the requests the emulator starts and logs from now on; `settled()` resolves once every started one is
 * logged (answered, or its connection closed: a client that gave up is logged after its own error).
 */
export function trackRequests(emulator: Emulator): { settled: () => Promise<void> } {
  let started = 0;
  let ended = 0;
  onRequestStart(emulator, () => {
    started++;
  });
  const add = emulator.requestLog.add.bind(emulator.requestLog);
  emulator.requestLog.add = (record) => {
    add(record);
    ended++;
  };
  return {
    async settled() {
      while (ended < started) await sleep(5);
    },
  };
}
