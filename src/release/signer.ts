/**
 * Who signed SHA256SUMS, and whether the registry and Terraform will accept it: the signing (sub)key must be
 * among the given keys, the primary key RSA or DSA (the registry accepts no ECC keys), neither expired nor
 * revoked, and the signature must hold over the exact bytes. openpgp.js judges a key at signature time, so
 * expiry and revocation are checked here against the clock.
 */
import type * as openpgp from 'openpgp';
import { UsageError, VerificationError } from '../errors.js';
import type { CandidateKey, KeySource } from './keySource.js';
import { loadOpenpgp } from './openpgp.js';
import type { ReadSignature } from './signature.js';
import type { SignerInfo } from './types.js';

/** What finding and checking the signer needs. */
export interface SignerInput {
  signature: ReadSignature;
  signatureFile: string;
  shasumsBytes: Uint8Array;
  shasumsFile: string;
  keySource: KeySource;
  now: Date;
  warn: (message: string) => void;
}

const ACCEPTED = new Set(['rsaEncryptSign', 'rsaSign', 'rsaEncrypt', 'dsa']);
const EXPIRY_WARNING_MS = 30 * 24 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;
/** One armor block with the line end that closes it, exactly as written (CRLF or LF). */
const ARMOR_BLOCK =
  /-----BEGIN PGP (PUBLIC|PRIVATE) KEY BLOCK-----[\s\S]*?-----END PGP \1 KEY BLOCK-----(?:\r?\n)?/g;

/** Finds the key that made the signature and checks it; throws a VerificationError with the reason. */
export async function checkSigner(input: SignerInput): Promise<SignerInfo> {
  const { signature, signatureFile: file, keySource, now } = input;
  const candidates = await keySource.load();
  if (candidates.length === 0) {
    throw new VerificationError(`Found no public key to check ${file} with (looked in ${keySource.label})`, {
      hint: keySource.missingKeyHint,
      details: { file },
    });
  }
  const keys = (await Promise.all(candidates.map((c) => readCandidate(c, input.warn)))).flat();
  const issuers = signature.signature.getSigningKeyIDs();
  const match = keys.flatMap(({ key, candidate, block }) =>
    issuers.flatMap((issuer) =>
      key.getKeys(issuer).map((signingKey) => ({ key, candidate, block, signingKey })),
    ),
  )[0];
  if (match === undefined) {
    const known = keys.map(({ key }) => key.getKeyID().toHex().toUpperCase());
    throw new VerificationError(
      `${file} was made by key ${signature.issuerKeyIds.join(', ')}, which is not among ${keySource.label} (${known.join(', ') || 'none readable'})`,
      { hint: keySource.missingKeyHint, details: { file, issuers: signature.issuerKeyIds, keys: known } },
    );
  }
  const { key, candidate, block, signingKey } = match;
  const keyId = key.getKeyID().toHex().toUpperCase();
  const algorithm = describeAlgorithm(key);
  const fail = (problem: string, hint: string): VerificationError =>
    new VerificationError(`${file}: ${problem}`, { hint, details: { file, keyId } });
  const resign = `Sign ${input.shasumsFile} with a valid RSA key (gpg --detach-sign) and use that key.`;

  if (!ACCEPTED.has(key.getAlgorithmInfo().algorithm)) {
    throw fail(
      `key ${keyId} is ${algorithm}; the registry accepts only RSA and DSA keys, not ECC`,
      `${resign} Create one with: gpg --quick-gen-key "<name> <email>" rsa4096 sign`,
    );
  }
  if (await key.isRevoked(undefined, undefined, now)) throw fail(`key ${keyId} has been revoked`, resign);
  const { expires, which } = await earliestExpiry(key, signingKey);
  if (expires !== null && expires.getTime() <= now.getTime()) {
    const what = which === 'subkey' ? `the signing subkey of key ${keyId}` : `key ${keyId}`;
    throw fail(
      `${what} expired on ${expires.toISOString().slice(0, 10)}; terraform init refuses signatures by expired keys`,
      `Extend the key (gpg --quick-set-expire <fingerprint> 2y) and export it again, or: ${resign}`,
    );
  }
  try {
    await key.getSigningKey(signingKey.getKeyID(), now);
  } catch (error) {
    throw fail(
      `key ${signingKey.getKeyID().toHex().toUpperCase()} cannot sign now (${(error as Error).message})`,
      resign,
    );
  }
  const pgp = await loadOpenpgp();
  const message = await pgp.createMessage({ binary: input.shasumsBytes });
  const result = await pgp.verify({
    message,
    signature: signature.signature,
    verificationKeys: [key],
    date: now,
  });
  const verdict = result.signatures.find((s) => s.keyID.equals(signingKey.getKeyID()));
  try {
    if (verdict === undefined) throw new Error(`no signature by ${keyId} was found`);
    await verdict.verified;
  } catch (error) {
    throw fail(
      `the signature does not match the bytes of ${input.shasumsFile} (${(error as Error).message})`,
      `${input.shasumsFile} changed after it was signed, or the signature belongs to another file. Sign it again: gpg --detach-sign ${input.shasumsFile}`,
    );
  }
  if (expires !== null && expires.getTime() - now.getTime() < EXPIRY_WARNING_MS) {
    const days = Math.max(0, Math.floor((expires.getTime() - now.getTime()) / DAY_MS));
    input.warn(
      `key ${keyId} expires in ${days} day${days === 1 ? '' : 's'} (${expires.toISOString().slice(0, 10)}); consumers' terraform init will then refuse this release — extend it (gpg --quick-set-expire) and update the registered key`,
    );
  }
  return {
    keyId,
    fingerprint: key.getFingerprint().toUpperCase(),
    signingKeyId: signingKey.getKeyID().toHex().toUpperCase(),
    userId: await primaryUserId(key, now),
    algorithm,
    expires: expires === null ? null : expires.toISOString(),
    origin: candidate.origin,
    originLabel: candidate.label,
    // The user's own text, so that tools matching registered keys by their text recognise it.
    armoredKey: block ?? key.toPublic().armor(),
  };
}

/** A key read from a candidate, with its armor block as given when that block holds only this public key. */
interface ReadKey {
  key: openpgp.Key;
  candidate: CandidateKey;
  block: string | undefined;
}

/** Reads the keys of one candidate; a bad user-given key is a UsageError, a bad registry key only a warning. */
async function readCandidate(candidate: CandidateKey, warn: (message: string) => void): Promise<ReadKey[]> {
  let keys: { key: openpgp.Key; block: string | undefined }[];
  try {
    // A file may hold several armor blocks (`cat a.asc b.asc`); openpgp.js reads only the first of a text.
    const blocks = candidate.armored.match(ARMOR_BLOCK) ?? [candidate.armored];
    const pgp = await loadOpenpgp();
    const read = await Promise.all(
      blocks.map(async (block) => {
        const inBlock = await pgp.readKeys({ armoredKeys: block });
        // Registered as given only when the block is this one public key: a block holding several keys
        // (`gpg --armor --export a b`) or a secret key is armored anew from the signing key's public part.
        const own = inBlock.length === 1 && !inBlock[0]!.isPrivate() ? block : undefined;
        return inBlock.map((key) => ({ key, block: own }));
      }),
    );
    keys = read.flat();
  } catch (error) {
    const problem = `${candidate.label} is not an ASCII-armored OpenPGP public key (${(error as Error).message})`;
    if (candidate.origin === 'registry') {
      warn(`skipping ${problem}`);
      return [];
    }
    throw new UsageError(problem, { hint: 'Export it with: gpg --armor --export <key id> > key.asc' });
  }
  return keys.map(({ key, block }) => {
    if (key.isPrivate()) {
      warn(
        `${candidate.label} holds a SECRET key; only its public part is used. Keep secret keys out of release jobs (gpg --armor --export gives the public key).`,
      );
    }
    return { key: key.toPublic(), candidate, block };
  });
}

/** The earliest of the primary key's and the signing subkey's expiry, and whose it is; null when neither expires. */
async function earliestExpiry(
  key: openpgp.Key,
  signingKey: openpgp.Key | openpgp.Subkey,
): Promise<{ expires: Date | null; which: 'primary' | 'subkey' }> {
  const primary = await key.getExpirationTime().catch(() => null);
  const sub =
    signingKey === key ? null : await (signingKey as openpgp.Subkey).getExpirationTime().catch(() => null);
  const p = primary instanceof Date ? primary : null;
  const s = sub instanceof Date ? sub : null;
  if (s !== null && (p === null || s.getTime() < p.getTime())) return { expires: s, which: 'subkey' };
  return { expires: p, which: 'primary' };
}

async function primaryUserId(key: openpgp.Key, now: Date): Promise<string> {
  try {
    const primary = await key.getPrimaryUser(now);
    if (primary.user.userID?.userID) return primary.user.userID.userID;
  } catch {
    // An expired self-signature still leaves the user id readable below.
  }
  return key.getUserIDs()[0] ?? '(no user id)';
}

function describeAlgorithm(key: openpgp.Key): string {
  const info = key.getAlgorithmInfo();
  if (info.algorithm.startsWith('rsa')) return `RSA ${info.bits ?? ''}`.trim();
  if (info.algorithm === 'dsa') return `DSA ${info.bits ?? ''}`.trim();
  return `ECC (${info.algorithm}${info.curve ? `, ${info.curve}` : ''})`;
}
