/**
 * The `.sig` file: a binary OpenPGP detached signature. Terraform reads it with Go's
 * `openpgp.CheckDetachedSignature`, which takes binary packets only; an ASCII-armored file fails at
 * `terraform init` with "openpgp: invalid data: tag byte does not have MSB set". `--dearmor-signature`
 * converts an armored file in memory (the user's file is never rewritten).
 */
import type * as openpgp from 'openpgp';
import { VerificationError } from '../errors.js';

let loadingOpenpgp: Promise<typeof openpgp> | undefined;

/**
 * openpgp.js, imported on first use. It is the biggest module of a verification (tens of milliseconds to load),
 * so `verifyRelease` starts hashing first and the library loads while the files are being hashed.
 */
export function loadOpenpgp(): Promise<typeof openpgp> {
  loadingOpenpgp ??= import('openpgp');
  return loadingOpenpgp;
}

/** The signature, parsed, with the binary bytes that were verified (and will be uploaded). */
export interface ReadSignature {
  signature: openpgp.Signature;
  binary: Uint8Array;
  dearmored: boolean;
  /** Long key ids (upper-case hex) of the (sub)keys that made it. */
  issuerKeyIds: string[];
}

const ARMOR_HEADER = '-----BEGIN PGP';

/** True when the bytes look like ASCII armor rather than binary OpenPGP packets. */
export function isArmored(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 256)).trimStart();
  return head.startsWith(ARMOR_HEADER);
}

/** Reads the signature file's bytes; throws a VerificationError naming the file when Terraform would reject it. */
export async function readSignatureFile(
  bytes: Uint8Array,
  file: string,
  options: { dearmor: boolean; shasumsFile: string },
): Promise<ReadSignature> {
  let binary = bytes;
  let dearmored = false;
  if (isArmored(bytes)) {
    if (!options.dearmor) {
      throw new VerificationError(
        `${file} is ASCII-armored; Terraform accepts only a binary signature and would fail with "openpgp: invalid data: tag byte does not have MSB set"`,
        {
          hint: `Sign without --armor (gpg --detach-sign ${options.shasumsFile}), or pass --dearmor-signature to convert it to binary in memory for verification and upload (your file is left as it is).`,
          details: { file },
        },
      );
    }
    binary = await dearmor(bytes, file);
    dearmored = true;
  } else if (bytes.length === 0 || ((bytes[0] ?? 0) & 0x80) === 0) {
    throw new VerificationError(`${file} is not an OpenPGP signature (its first byte is not a packet tag)`, {
      hint: `Sign SHA256SUMS again with a binary detached signature: gpg --detach-sign ${options.shasumsFile}`,
      details: { file },
    });
  }
  let signature: openpgp.Signature;
  try {
    signature = await (await loadOpenpgp()).readSignature({ binarySignature: binary });
  } catch (error) {
    throw new VerificationError(`${file} is not a readable OpenPGP signature (${(error as Error).message})`, {
      hint: `Sign SHA256SUMS again with a binary detached signature: gpg --detach-sign ${options.shasumsFile}`,
      details: { file },
    });
  }
  const issuerKeyIds = signature.getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
  if (issuerKeyIds.length === 0) {
    throw new VerificationError(`${file} holds no signature packet`, {
      hint: `Sign SHA256SUMS again: gpg --detach-sign ${options.shasumsFile}`,
      details: { file },
    });
  }
  return { signature, binary, dearmored, issuerKeyIds };
}

/** The binary packets inside an armored signature, byte for byte (not re-serialised). */
async function dearmor(bytes: Uint8Array, file: string): Promise<Uint8Array> {
  try {
    const pgp = await loadOpenpgp();
    // The declared type of `data` needs openpgp's optional peer @openpgp/web-stream-tools (its stream types); it
    // is checked below, so the shape read here is all that is assumed.
    const { type, data } = (await pgp.unarmor(new TextDecoder().decode(bytes))) as {
      type: openpgp.enums.armor;
      data: unknown;
    };
    if (type !== pgp.enums.armor.signature) throw new Error('the armor does not hold a signature');
    if (!(data instanceof Uint8Array)) throw new Error('unexpected stream');
    return data;
  } catch (error) {
    throw new VerificationError(
      `${file} cannot be converted from ASCII armor (${(error as Error).message})`,
      {
        hint: 'Sign SHA256SUMS again with gpg --detach-sign (binary output).',
        details: { file },
      },
    );
  }
}
