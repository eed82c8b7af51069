/**
 * Terraform's signature check, replayed with openpgp.js (`internal/getproviders/package_authentication.go`):
 * each served key is read as a key ring and tried on the detached signature over the exact SHA256SUMS bytes;
 * a key that did not issue it is skipped, any other failure is terminal, and no issuing key at all is
 * "authentication signature from unknown issuer".
 */
import * as openpgp from 'openpgp';
import type { ConsumerProblem } from './checksums.js';

/** A key the registry serves for the version (its `key-id` key), with where it came from. */
export interface ServedKey {
  asciiArmor: string;
  /** The registry's id of the key (a small number). */
  id: string;
  keyId: string;
}

/** Who signed, when the signature holds. */
export interface SignatureVerdict {
  /** Long id of the registered (primary) key. */
  keyId: string;
  /** Long id of the (sub)key that made the signature. */
  signingKeyId: string;
  /** The fingerprints (40 hex digits, upper case) of the registered key and of the (sub)key that signed. */
  fingerprints: string[];
  /** The registry's id of the key. */
  gpgKeyId: string;
  userId: string;
}

/** Terraform's wording when no served key issued the signature. */
export const UNKNOWN_ISSUER = 'authentication signature from unknown issuer';

/** Checks the signature as Terraform does; a problem (ours and Terraform's words) or the signer. */
export async function authenticateSignature(input: {
  document: Uint8Array;
  signature: Uint8Array;
  keys: ServedKey[];
  subject: string;
  now: Date;
}): Promise<SignatureVerdict | ConsumerProblem> {
  const { subject } = input;
  const problem = (message: string, terraform: string, hint: string): ConsumerProblem => ({
    subject,
    message,
    terraform,
    hint,
  });
  let signature: openpgp.Signature;
  try {
    signature = await openpgp.readSignature({ binarySignature: input.signature });
  } catch (error) {
    const armored = new TextDecoder().decode(input.signature.subarray(0, 64)).includes('-----BEGIN PGP');
    return problem(
      `the signature the registry serves is not a binary OpenPGP signature (${armored ? 'it is ASCII-armored' : (error as Error).message})`,
      armored
        ? 'error checking signature: openpgp: invalid data: tag byte does not have MSB set'
        : 'error checking signature: openpgp: …',
      'Delete the version (provider delete <version>) and publish it again with a binary detached signature (gpg --detach-sign).',
    );
  }
  const issuers = signature.getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
  for (const served of input.keys) {
    let ring: openpgp.Key[];
    try {
      ring = await openpgp.readKeys({ armoredKeys: served.asciiArmor });
    } catch (error) {
      return problem(
        `registered key ${served.keyId} (id ${served.id}) is not a readable OpenPGP public key`,
        `error decoding signing key: ${(error as Error).message}`,
        'Delete the registered key and add it again from gpg --armor --export <key id>.',
      );
    }
    const match = ring.flatMap((key) =>
      signature
        .getSigningKeyIDs()
        .flatMap((id) => key.getKeys(id).map((signingKey) => ({ key, signingKey }))),
    )[0];
    if (match === undefined) continue; // ErrUnknownIssuer: Terraform tries the next key.
    const { key, signingKey } = match;
    const signingKeyId = signingKey.getKeyID().toHex().toUpperCase();
    try {
      await key.getSigningKey(signingKey.getKeyID(), input.now);
    } catch (error) {
      return problem(
        `key ${signingKeyId} that made the signature cannot sign now (${(error as Error).message})`,
        'error checking signature: openpgp: key expired',
        'Extend the key (gpg --quick-set-expire), register the updated public key, and publish again.',
      );
    }
    const result = await openpgp.verify({
      message: await openpgp.createMessage({ binary: input.document }),
      signature,
      verificationKeys: [key],
      date: input.now,
    });
    try {
      const verdict = result.signatures.find((s) => s.keyID.equals(signingKey.getKeyID()));
      if (verdict === undefined) throw new Error(`no signature by ${signingKeyId}`);
      await verdict.verified;
    } catch (error) {
      return problem(
        `the signature by ${signingKeyId} does not hold over the SHA256SUMS the registry serves (${(error as Error).message})`,
        'error checking signature: openpgp: invalid signature: …',
        'The stored SHA256SUMS or its signature changed after signing: delete the version (provider delete <version>) and publish it again.',
      );
    }
    return {
      keyId: key.getKeyID().toHex().toUpperCase(),
      signingKeyId,
      fingerprints: [...new Set([key.getFingerprint(), signingKey.getFingerprint()])].map((f) =>
        f.toUpperCase(),
      ),
      gpgKeyId: served.id,
      userId: key.getUserIDs()[0] ?? '(no user id)',
    };
  }
  const served = input.keys.map((k) => k.keyId).join(', ');
  return problem(
    input.keys.length === 0
      ? `no key is registered under the version's key-id, so Terraform gets no key to check the signature with (the signature is by ${issuers.join(', ')})`
      : `the signature was made by key ${issuers.join(', ')}, not by the registered key ${served} the version names`,
    UNKNOWN_ISSUER,
    input.keys.length === 0
      ? 'Register the public key that signed SHA256SUMS: provider gpg-keys add <public-key.asc>.'
      : 'Register the key that signed SHA256SUMS and publish the version with its key id, or sign SHA256SUMS with the registered key; delete the version first (provider delete <version>).',
  );
}
