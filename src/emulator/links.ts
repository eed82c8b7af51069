/**
 * Archivist links: unguessable, signed, expiring URLs on the emulator itself, like the platform's blob
 * storage links. The secret carries the operation, the object and the expiry, sealed with an HMAC, so that
 * links need no stored state and survive a restart with the same data folder.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The path prefix of every archivist link. */
export const ARCHIVIST_PREFIX = '/_archivist/v1/object/';

export type LinkOperation = 'put' | 'get';

/** What a valid link grants. */
export interface LinkGrant {
  op: LinkOperation;
  key: string;
  expiresAt: number;
}

/** Signs and checks archivist links with one key. */
export class LinkSigner {
  constructor(
    private readonly key: string,
    private readonly ttlMs: number,
  ) {}

  /** A link allowing `op` on object `key` until now + TTL. */
  sign(baseUrl: string, op: LinkOperation, key: string, now: number): string {
    const payload = Buffer.from(`${op}:${key}:${now + this.ttlMs}`).toString('base64url');
    return `${baseUrl}${ARCHIVIST_PREFIX}${payload}.${this.mac(payload)}`;
  }

  /** The grant of a secret from a link's path, or `undefined` when forged, malformed or expired. */
  verify(secret: string, now: number): LinkGrant | undefined {
    const dot = secret.indexOf('.');
    if (dot <= 0) return undefined;
    const payload = secret.slice(0, dot);
    const given = Buffer.from(secret.slice(dot + 1));
    const expected = Buffer.from(this.mac(payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const [op, key, expires] = Buffer.from(payload, 'base64url').toString('utf8').split(':');
    if ((op !== 'put' && op !== 'get') || !key || !expires) return undefined;
    const expiresAt = Number(expires);
    if (!(expiresAt > now)) return undefined;
    return { op, key, expiresAt };
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}

/** Replaces the secret part of archivist paths and URLs in a text, for logs. */
export function redactLinks(text: string): string {
  return text.replace(/(\/_archivist\/v1\/object\/)[^\s"'?#]+/g, '$1[secret]');
}
