/**
 * The run task signature (run-tasks.md §2): `X-TFC-Task-Signature` is the lowercase hex HMAC-SHA512 of the raw
 * request body, keyed with the HMAC key's UTF-8 bytes — what `openssl dgst -sha512 -hmac "$KEY"` prints.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header the platform puts the signature in (names are case-insensitive; Node lowercases them). */
export const SIGNATURE_HEADER = 'x-tfc-task-signature';

/** Signs a body as the platform does: lowercase hex HMAC-SHA512. */
export function signBody(key: string, body: Buffer | string): string {
  return createHmac('sha512', Buffer.from(key, 'utf8')).update(body).digest('hex');
}

/**
 * True when `header` is exactly the lowercase hex signature of `body`. The comparison is constant-time over
 * the expected length; uppercase hex is refused, as the reference integrators (byte comparison against
 * Go's `hex.EncodeToString`, Python's `hexdigest()`) refuse it.
 */
export function verifySignature(key: string, body: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || header === '') return false;
  const expected = Buffer.from(signBody(key, body), 'ascii');
  const given = Buffer.from(header, 'utf8');
  // timingSafeEqual needs equal lengths; comparing against itself keeps the work the same on a length mismatch.
  const same = given.length === expected.length && timingSafeEqual(given, expected);
  if (given.length !== expected.length) timingSafeEqual(expected, expected);
  return same;
}
