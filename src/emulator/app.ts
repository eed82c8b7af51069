/**
 * What every route shares: the store, the link signer, the clock, the options, and the access rules
 * (401 without a known token, 404 for anything the caller may not see or change, 403 for `public`).
 */
import type { IncomingMessage } from 'node:http';
import { HttpProblem, notFound } from './http.js';
import type { LinkSigner } from './links.js';
import type { Shaper } from './shaping.js';
import type { Store, StoredObject, StoredProvider, StoredToken, StoredVersion } from './state.js';

/** The emulator's behaviour switches, after defaults. */
export interface AppSettings {
  /** Milliseconds between a completed upload and its flag turning true. */
  flagDelayMs: number;
  /** Apply the checks the real registry does not do but Terraform later fails on (see docs/emulator.md). */
  strict: boolean;
  /**
   * Compute each zip's lock hashes when its upload completes and serve them as `packages` in the consumer
   * download response, as OpenTofu's registry does (HCP Terraform does not).
   */
  packageHashes: boolean;
  /** Answer one byte range of a download (206), as object storage does; the platform documents none. */
  ranges: boolean;
}

/** Shared state and helpers of the routes. */
export interface App {
  store: Store;
  links: LinkSigner;
  settings: AppSettings;
  now(): number;
  baseUrl(): string;
  /** Paces archivist bodies when the emulator shapes its network (`--bandwidth`). */
  shaper: Shaper;
}

/** Who is calling: the token's organization and role. */
export type Principal = StoredToken;

/** The caller, from `Authorization: Bearer`; 401 when missing or unknown. */
export function authenticate(app: App, req: IncomingMessage): Principal {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  const found = match ? app.store.data.tokens.find((t) => t.token === match[1]) : undefined;
  if (!found) {
    throw new HttpProblem(401, [{ status: '401', title: 'unauthorized' }]);
  }
  return found;
}

/** The organization in the path, when the caller belongs to it; 404 otherwise (unknown or not theirs). */
export function requireOrganization(principal: Principal, organization: string): void {
  if (principal.organization !== organization) throw notFound();
}

/** Only owners may write; the platform answers 404 to a member, to hide what exists. */
export function requireWriter(principal: Principal): void {
  if (principal.role !== 'owner') throw notFound();
}

/** `:registry_name` must be `private`: `public` is refused with 403, anything else is unknown (404). */
export function requirePrivateRegistry(registryName: string): void {
  if (registryName === 'public') {
    throw new HttpProblem(403, [
      {
        status: '403',
        title: 'forbidden',
        detail: 'public provider curation disabled: this endpoint serves private providers only',
      },
    ]);
  }
  if (registryName !== 'private') throw notFound();
}

/** Looks up a provider by its address; 404 when absent. */
export function findProvider(
  app: App,
  organization: string,
  namespace: string,
  name: string,
): StoredProvider {
  const provider = app.store.data.providers.find(
    (p) =>
      p.organization === organization &&
      p.registryName === 'private' &&
      p.namespace === namespace &&
      p.name === name,
  );
  if (!provider) throw notFound();
  return provider;
}

/** Looks up a version of a provider; 404 when absent. */
export function findVersion(app: App, provider: StoredProvider, version: string): StoredVersion {
  const found = app.store.data.versions.find((v) => v.providerId === provider.id && v.version === version);
  if (!found) throw notFound();
  return found;
}

/** True when a file's upload is complete and its flag has flipped (after the configured delay). */
export function isUploaded(app: App, object: StoredObject): boolean {
  return object.flagAt !== null && app.now() >= object.flagAt;
}

/** Millisecond ISO 8601, as providers, versions and platforms use. */
export function isoMillis(ms: number): string {
  return new Date(ms).toISOString();
}

/** Whole-second ISO 8601, as GPG keys use. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
