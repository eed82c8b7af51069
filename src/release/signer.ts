/**
 * Who signed SHA256SUMS, and whether the registry and Terraform will accept it: the signing (sub)key must be
 * among the given keys, the primary key RSA or DSA (the registry accepts no ECC keys), neither expired nor
 * revoked, and the signature must hold over the exact bytes. openpgp.js judges a key at signature time, so
 * expiry and revocation are checked here against the clock. A signature that does not hold is named by its
 * shape: goreleaser 2.15.0/2.15.1's checksum file listing its own signature (goreleaser/goreleaser#6508,
 * #6514; opentofu/registry#3974), or a signature made over another checksum file.
 */
import type * as openpgp from 'openpgp';
import { UsageError, VerificationError } from '../errors.js';
import type { CandidateKey, KeySource } from './keySource.js';
import type { ShasumEntry } from './shasums.js';
import { loadOpenpgp, type ReadSignature } from './signature.js';
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
  /** The lines of SHA256SUMS, to recognise goreleaser 2.15.0/2.15.1's listing of the checksum file's own `.sig`. */
  shasumsEntries?: readonly ShasumEntry[] | undefined;
}

/** The way out of a signature that cannot stay: Terraform and the registries never see a changed version. */
const NEW_PATCH =
  'If this version was already published, publish a NEW patch version instead; never overwrite a published one.';

const ACCEPTED = new Set(['rsaEncryptSign', 'rsaSign', 'rsaEncrypt', 'dsa']);
const EXPIRY_WARNING_MS = 30 * 24 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;
/** One armor block with the line end that closes it, exactly as written (CRLF or LF). */
const ARMOR_BLOCK =
  /-----BEGIN PGP (PUBLIC|PRIVATE) KEY BLOCK-----[\s\S]*?-----END PGP \1 KEY BLOCK-----(?:\r?\n)?/g;

/** Finds the key that made the signature and checks it; throws a VerificationError with the reason. */
export async function checkSigner(input: SignerInput): Promise<SignerInfo> {
  const { now } = input;
  const { key, candidate, block, signingKey } = await findSigningKey(input);
  const keyId = key.getKeyID().toHex().toUpperCase();
  const algorithm = describeAlgorithm(key);
  const expires = await checkKeyUsable(input, key, signingKey);
  const ownSig = input.shasumsEntries?.find((e) => e.filename === input.signatureFile);
  await checkSignedBytes(input, key, signingKey, ownSig);
  if (ownSig !== undefined) {
    input.warn(
      `${input.shasumsFile} line ${ownSig.line} lists its own signature ${input.signatureFile}, as goreleaser 2.15.0 and 2.15.1 wrote it; the signature verifies (it was made again), but the public registry refuses such a listing and lock files record the .sig as a zh: hash — pin goreleaser 2.14.3 or upgrade past 2.15.1 for the next version`,
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
    signingFingerprint: signingKey.getFingerprint().toUpperCase(),
    userId: await primaryUserId(key, now),
    algorithm,
    expires: expires === null ? null : expires.toISOString(),
    origin: candidate.origin,
    originLabel: candidate.label,
    // The user's own block, so that tools matching registered keys by their text recognise it (registered
    // trimmed, as a GitHub Actions input is: src/registry/gpgKeys.ts).
    armoredKey: block ?? key.toPublic().armor(),
  };
}

/** The key of the source that made the signature, with the (sub)key that signed; fails when none did. */
async function findSigningKey(input: SignerInput) {
  const { signature, signatureFile: file, keySource } = input;
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
  return match;
}

/** How the checks of a key fail: `fail(problem, hint)`, a VerificationError about the signature file naming the key. */
function failure(input: SignerInput, key: openpgp.Key) {
  const file = input.signatureFile;
  const keyId = key.getKeyID().toHex().toUpperCase();
  return (problem: string, hint: string): VerificationError =>
    new VerificationError(`${file}: ${problem}`, { hint, details: { file, keyId } });
}

/**
 * The key as the registry and Terraform will judge it: RSA or DSA, not revoked, not expired, able to sign now.
 * Resolves to when it expires (null: never).
 */
async function checkKeyUsable(
  input: SignerInput,
  key: openpgp.Key,
  signingKey: openpgp.Key | openpgp.Subkey,
): Promise<Date | null> {
  const { now } = input;
  const keyId = key.getKeyID().toHex().toUpperCase();
  const fail = failure(input, key);
  const resign = `Sign ${input.shasumsFile} with a valid RSA key (gpg --detach-sign) and use that key.`;
  if (!ACCEPTED.has(key.getAlgorithmInfo().algorithm)) {
    throw fail(
      `key ${keyId} is ${describeAlgorithm(key)}; the registry accepts only RSA and DSA keys, not ECC`,
      `${resign} Create one with: gpg --quick-gen-key "<name> <email>" rsa4096 sign`,
    );
  }
  if (await key.isRevoked(undefined, undefined, now)) throw fail(`key ${keyId} has been revoked`, resign);
  const { expires, which } = await earliestExpiry(key, signingKey);
  if (expires !== null && expires.getTime() <= now.getTime()) {
    if (which === 'subkey') throw expiredSubkey(input, key, signingKey, expires);
    throw fail(
      `key ${keyId} expired on ${day(expires)}; signatures by expired keys fail in Terraform 1.6.0 ("openpgp: key expired", hashicorp/terraform#34004) and in OpenTofu with OPENTOFU_ENFORCE_GPG_EXPIRATION=true, which it warns will become the default`,
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
  return expires;
}

/**
 * The signature over SHA256SUMS's bytes, by the signing key; a failure says why: SHA256SUMS lists its own
 * signature (goreleaser 2.15.0–2.15.1), the signature is over other bytes, or it does not match.
 */
async function checkSignedBytes(
  input: SignerInput,
  key: openpgp.Key,
  signingKey: openpgp.Key | openpgp.Subkey,
  ownSig: ShasumEntry | undefined,
): Promise<void> {
  const keyId = key.getKeyID().toHex().toUpperCase();
  const pgp = await loadOpenpgp();
  const message = await pgp.createMessage({ binary: input.shasumsBytes });
  const result = await pgp.verify({
    message,
    signature: input.signature.signature,
    verificationKeys: [key],
    date: input.now,
  });
  const verdict = result.signatures.find((s) => s.keyID.equals(signingKey.getKeyID()));
  try {
    if (verdict === undefined) throw new Error(`no signature by ${keyId} was found`);
    await verdict.verified;
  } catch (error) {
    const reason = (error as Error).message;
    if (ownSig !== undefined) throw await listsOwnSignature(input, key, ownSig, reason);
    // openpgp.js compares the digest's first two bytes, kept in the signature packet, before the RSA/DSA check:
    // a mismatch there means the signature was made over other bytes, not that it is damaged.
    if (reason === 'Signed digest did not match') throw overOtherBytes(input, keyId);
    throw failure(input, key)(
      `the signature does not match the bytes of ${input.shasumsFile} (${reason})`,
      `${input.shasumsFile} changed after it was signed, or the signature belongs to another file. Sign it again: gpg --detach-sign ${input.shasumsFile}. ${NEW_PATCH}`,
    );
  }
}

/** The signing subkey expired (before or after it signed): name it, its expiry, and how to extend it. */
function expiredSubkey(
  input: SignerInput,
  key: openpgp.Key,
  subkey: openpgp.Key | openpgp.Subkey,
  expires: Date,
): VerificationError {
  const file = input.signatureFile;
  const keyId = key.getKeyID().toHex().toUpperCase();
  const subkeyId = subkey.getKeyID().toHex().toUpperCase();
  const fingerprint = key.getFingerprint().toUpperCase();
  const signed = signatureDate(input.signature);
  const when =
    signed === undefined
      ? ''
      : signed.getTime() >= expires.getTime()
        ? `, before it made this signature on ${day(signed)}`
        : ` (it made this signature on ${day(signed)}, while it was valid)`;
  return new VerificationError(
    `${file}: the signing subkey ${subkeyId} of key ${keyId} expired on ${day(expires)}${when}; signatures by expired keys fail in Terraform 1.6.0 ("openpgp: key expired", hashicorp/terraform#34004) and in OpenTofu with OPENTOFU_ENFORCE_GPG_EXPIRATION=true, which it warns will become the default`,
    {
      hint:
        `Extend the subkey: gpg --quick-set-expire ${fingerprint} 1y '*', export the public key again (gpg --armor --export ${fingerprint} > key.asc), ` +
        `register it (provider gpg-keys add key.asc) and sign again: gpg --detach-sign ${input.shasumsFile}. ${NEW_PATCH}`,
      details: {
        file,
        keyId,
        subkeyId,
        expires: expires.toISOString(),
        signed: signed?.toISOString() ?? null,
      },
    },
  );
}

/**
 * goreleaser 2.15.0 and 2.15.1 signed the checksum file, then added the signature's own line to it
 * (goreleaser/goreleaser#6508 "checksums.txt.sig hash is added back into checksums.txt", #6514 for
 * `signs.artifacts: checksum`), so the signature cannot verify. When the signature holds over the file without
 * its `.sig` lines, that is said too: it is exactly this.
 */
async function listsOwnSignature(
  input: SignerInput,
  key: openpgp.Key,
  own: ShasumEntry,
  reason: string,
): Promise<VerificationError> {
  const file = input.signatureFile;
  const text = new TextDecoder().decode(input.shasumsBytes);
  const without = text
    .split('\n')
    .filter((l) => !l.endsWith('.sig'))
    .join('\n');
  const before = await holdsOver(input.signature, key, new TextEncoder().encode(without), input.now);
  return new VerificationError(
    `${input.shasumsFile} lists its own signature ${file} (line ${own.line}), so it was rewritten after it was signed and the signature cannot verify (${reason}): ` +
      `goreleaser 2.15.0 and 2.15.1 rewrote the checksum file after signing it` +
      (before ? `; the signature does verify over the file without its .sig lines` : ''),
    {
      hint: `Pin goreleaser 2.14.3 or upgrade past 2.15.1 (2.15.2 fixed it), rebuild and publish a NEW patch version; never overwrite a published one (registries and lock files keep the first checksums).`,
      details: {
        file,
        shasumsFile: input.shasumsFile,
        line: own.line,
        goreleaser: '2.15.0-2.15.1',
        verifiesWithoutSigLines: before,
      },
    },
  );
}

/** A valid signature by the right key over other bytes: another run's or version's SHA256SUMS. */
function overOtherBytes(input: SignerInput, keyId: string): VerificationError {
  const file = input.signatureFile;
  const signed = signatureDate(input.signature);
  return new VerificationError(
    `${file} was made by key ${keyId}${signed === undefined ? '' : ` on ${signed.toISOString()}`}, but over a different checksum file than ${input.shasumsFile}: the signed digest does not match its bytes`,
    {
      hint: `Sign this ${input.shasumsFile} again (gpg --detach-sign ${input.shasumsFile}); never mix the dist folders of two runs (goreleaser release --clean). ${NEW_PATCH}`,
      details: { file, keyId, shasumsFile: input.shasumsFile, signed: signed?.toISOString() ?? null },
    },
  );
}

/** True when the signature verifies over `bytes` with `key`. */
async function holdsOver(
  signature: ReadSignature,
  key: openpgp.Key,
  bytes: Uint8Array,
  now: Date,
): Promise<boolean> {
  const pgp = await loadOpenpgp();
  const result = await pgp.verify({
    message: await pgp.createMessage({ binary: bytes }),
    signature: signature.signature,
    verificationKeys: [key],
    date: now,
  });
  return Promise.all(result.signatures.map((s) => s.verified)).then(
    () => result.signatures.length > 0,
    () => false,
  );
}

/** When the signature says it was made. */
function signatureDate(signature: ReadSignature): Date | undefined {
  const created = signature.signature.packets[0]?.created;
  return created instanceof Date ? created : undefined;
}

/** `2026-01-02`. */
function day(date: Date): string {
  return date.toISOString().slice(0, 10);
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
    if (candidate.origin === 'registry' || candidate.origin === 'origin') {
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
