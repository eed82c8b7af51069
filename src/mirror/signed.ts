/**
 * The origin's signed list of one version, checked before any zip is fetched: every platform's document names
 * the same SHA256SUMS and signature, the origin serves at least one signing key, the signature over the exact
 * SHA256SUMS bytes is by one of those keys (the checks `provider verify` makes: src/release/signer.ts), and each
 * platform's `filename` is the provider's own zip name, listed in SHA256SUMS with the `shasum` the origin states.
 * Anything else stops the version with exit 3.
 */
import { VerificationError } from '../errors.js';
import type { Downloader } from '../registry/downloads.js';
import { parseReleaseFileName, releaseFileNames } from '../release/filenames.js';
import type { CandidateKey, KeySource } from '../release/keySource.js';
import { parseShasums } from '../release/shasums.js';
import { readSignatureFile } from '../release/signature.js';
import { SMALL_FILE_CAPS } from '../release/smallFile.js';
import { checkSigner } from '../release/signer.js';
import type { SignerInfo } from '../release/types.js';
import { fromOrigin } from './failures.js';
import type { OriginDownload, OriginKey } from './schemas.js';

/** HashiCorp's short key ids, as its signature file names carry them, and the long ids they stand for. */
export const HASHICORP_KEYS: Readonly<Record<string, string>> = {
  '72D7468F': '34365D9472D7468F',
  '348FFC4C': '51852D87348FFC4C',
};

/** One version's signed list, checked. */
export interface SignedList {
  shasumsBytes: Uint8Array;
  signatureBytes: Uint8Array;
  signer: SignerInfo;
  /** The origin's key that made the signature, its armor byte for byte as served. */
  key: OriginKey;
}

/** What the check needs. */
export interface SignedInput {
  /** `hashicorp/random 3.6.0` in messages. */
  label: string;
  type: string;
  version: string;
  host: string;
  documents: OriginDownload[];
  downloader: Downloader;
  now: Date;
  warn: (message: string) => void;
}

/** Checks the signed list of one version; throws a VerificationError naming what does not hold. */
export async function checkSignedList(input: SignedInput): Promise<SignedList> {
  const { label, documents, host } = input;
  const first = documents[0]!;
  const keys = servedKeys(documents, label, host);
  const names = releaseFileNames(input.type, input.version);
  const { shasumsBytes, signatureBytes } = await sameSignedList(input);
  const entries = parseShasums(shasumsBytes, names.shasums);
  const signature = await readSignatureFile(signatureBytes, names.signature, {
    dearmor: false,
    shasumsFile: names.shasums,
  });
  const signer = await checkSigner({
    signature,
    signatureFile: names.signature,
    shasumsBytes,
    shasumsFile: names.shasums,
    keySource: originKeySource(keys, host),
    now: input.now,
    warn: input.warn,
    shasumsEntries: entries,
  });
  checkShortId(first.shasums_signature_url, signer, label);
  const listed = new Map(entries.map((e) => [e.filename, e.shasum]));
  for (const document of documents) checkListed(document, listed, input);
  const key =
    keys.find((k) => k.key_id.toUpperCase() === signer.keyId) ??
    keys.find((k) => k.ascii_armor === signer.armoredKey);
  return {
    shasumsBytes,
    signatureBytes,
    signer,
    key: key ?? { key_id: signer.keyId, ascii_armor: signer.armoredKey },
  };
}

/**
 * The SHA256SUMS and signature every platform's document names, which must be the same bytes (a registry that
 * signs its links names them by other URLs in each document: each distinct pair is read and compared).
 */
async function sameSignedList(
  input: SignedInput,
): Promise<{ shasumsBytes: Uint8Array; signatureBytes: Uint8Array }> {
  const { label, downloader, host } = input;
  const pairs = new Map<string, OriginDownload>();
  for (const d of input.documents) pairs.set(`${d.shasums_url} ${d.shasums_signature_url}`, d);
  let first: { shasumsBytes: Uint8Array; signatureBytes: Uint8Array; platform: string } | undefined;
  // Each under the cap `provider verify` gives the file, counted as it streams in.
  const read = (link: string, file: string, limit: number): Promise<Uint8Array> =>
    fromOrigin(
      { label, file, link, limit },
      async () => new Uint8Array(await downloader.bytes(link, `the ${file} of ${label}`, limit)),
    );
  for (const d of pairs.values()) {
    const shasumsBytes = await read(d.shasums_url, 'SHA256SUMS', SMALL_FILE_CAPS.shasums);
    const signatureBytes = await read(
      d.shasums_signature_url,
      'SHA256SUMS signature',
      SMALL_FILE_CAPS.signature,
    );
    const platform = `${d.os}_${d.arch}`;
    if (first === undefined) first = { shasumsBytes, signatureBytes, platform };
    else if (
      !sameBytes(first.shasumsBytes, shasumsBytes) ||
      !sameBytes(first.signatureBytes, signatureBytes)
    ) {
      throw stop(
        `${label}: ${host} serves another SHA256SUMS or signature for ${platform} than for ${first.platform}`,
        'One version has one signed list; the origin serves an inconsistent version, and nothing of it was written.',
      );
    }
  }
  return first!;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

/** The platform's file is the provider's zip for that platform, listed with the origin's shasum. */
function checkListed(document: OriginDownload, listed: Map<string, string>, input: SignedInput): void {
  const { filename, os, arch, shasum } = document;
  const parsed = parseReleaseFileName(filename);
  const own =
    parsed?.kind === 'platform' &&
    parsed.name === input.type &&
    parsed.version.replace(/^v/, '') === input.version &&
    parsed.os === os &&
    parsed.arch === arch;
  if (!own || filename.includes('/') || filename.includes('\\')) {
    throw stop(
      `${input.label} ${os}_${arch}: ${input.host} names the file ${JSON.stringify(filename)}, not terraform-provider-${input.type}_${input.version}_${os}_${arch}.zip`,
      "The origin serves a file that is not this provider's zip for this platform; nothing of the version was written.",
    );
  }
  const line = listed.get(filename);
  if (line === undefined) {
    throw stop(
      `${input.label}: the signed SHA256SUMS does not list ${filename}`,
      'Terraform could not install it either; nothing of the version was written.',
    );
  }
  if (line !== shasum.toLowerCase()) {
    throw stop(
      `${input.label}: ${input.host} states shasum ${shasum} for ${filename}, the signed SHA256SUMS says ${line}`,
      'The origin contradicts its own signed list; nothing of the version was written.',
    );
  }
}

/** A signature file named `…_SHA256SUMS.<short id>.sig` (HashiCorp's releases) must be by that key. */
function checkShortId(url: string, signer: SignerInfo, label: string): void {
  const short = /\.([0-9A-F]{8})\.sig$/i.exec(new URL(url).pathname)?.[1]?.toUpperCase();
  if (short === undefined) return;
  const long = HASHICORP_KEYS[short];
  const ids = [signer.keyId, signer.signingKeyId];
  if (ids.some((id) => id.endsWith(short) || id === long)) return;
  throw stop(
    `${label}: the signature file is named for key ${short}${long === undefined ? '' : ` (${long})`}, but key ${signer.keyId} made it`,
    'The origin serves a signature by another key than its file name says; nothing of the version was written.',
  );
}

/**
 * The keys of every document, each once by key id; none is a VerificationError (exit 3): without a key the
 * signature cannot be checked, nor a copy already there be compared with what the origin signs.
 */
export function servedKeys(documents: OriginDownload[], label: string, host: string): OriginKey[] {
  const byId = new Map<string, OriginKey>();
  for (const d of documents) {
    for (const key of d.signing_keys?.gpg_public_keys ?? []) {
      if (!byId.has(key.key_id.toUpperCase())) byId.set(key.key_id.toUpperCase(), key);
    }
  }
  if (byId.size === 0) {
    throw stop(
      `${label}: ${host} serves no signing key, so the signature over SHA256SUMS cannot be checked (nothing of this version was written)`,
      'Mirror from a registry that serves the provider\'s signing keys (registry.opentofu.org answers "gpg_public_keys": null for some providers).',
    );
  }
  return [...byId.values()];
}

/** The origin's keys as candidates for the signature check (an unreadable one is skipped with a warning). */
function originKeySource(keys: OriginKey[], host: string): KeySource {
  const label = `the keys ${host} serves`;
  return {
    origin: 'origin',
    label,
    missingKeyHint: `${host} serves no key that made this signature; nothing of the version was written.`,
    load: () =>
      Promise.resolve(
        keys.map((k): CandidateKey => ({
          armored: k.ascii_armor,
          origin: 'origin',
          label: `key ${k.key_id} from ${host}`,
        })),
      ),
  };
}

function stop(message: string, hint: string): VerificationError {
  return new VerificationError(message, { hint });
}
