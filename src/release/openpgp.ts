/**
 * openpgp.js, loaded on first use. It is the biggest module of a verification (tens of milliseconds to load),
 * so `verifyRelease` starts hashing first and the library loads while the files are being hashed.
 */
import type * as Openpgp from 'openpgp';

let loading: Promise<typeof Openpgp> | undefined;

/** The openpgp module (imported once). */
export function loadOpenpgp(): Promise<typeof Openpgp> {
  loading ??= import('openpgp');
  return loading;
}
