/**
 * The checks the stages of a verification make (src/release/stages.ts): the release's small files read under
 * their caps, the manifest's protocols and the signature with who made it, and every listed file hashed and
 * compared with its SHA256SUMS line.
 */
import * as path from 'node:path';
import { VerificationError } from '../errors.js';
import type { Output } from '../ui/output.js';
import {
  EntryReadError,
  FileReadError,
  type FileDigest,
  type HashingSession,
  type HashOptions,
} from './hashing/hashing.js';
import type { KeySource } from './keySource.js';
import type { ReleaseLayout } from './layout.js';
import { entryFailure } from './hashing/lockHashes.js';
import { chooseProtocols, parseManifest } from './protocols.js';
import type { ShasumEntry } from './shasums.js';
import { readSignatureFile } from './signature.js';
import { FileTooLargeError, readCapped, SMALL_FILE_CAPS, tooLargeMessage } from './smallFile.js';
import { checkSigner } from './signer.js';
import type { ReleaseFile } from './types.js';

/** What the signature check needs from the verification's options. */
export interface SignatureOptions {
  output: Output;
  now: () => Date;
  keySource: KeySource;
  /** `--protocols`, parsed. */
  protocols?: string[] | undefined;
  /** `protocols` from the configuration file. */
  configProtocols?: string[] | undefined;
  /** Convert an ASCII-armored `.sig` to binary in memory instead of failing. */
  dearmorSignature?: boolean | undefined;
}

/** The manifest and protocols, then the signature and who made it (each throws its own error). */
export async function checkManifestAndSignature(
  layout: ReleaseLayout,
  shasumsContent: Uint8Array,
  shasumsEntries: ShasumEntry[],
  options: SignatureOptions,
  warn: (message: string) => void,
) {
  const { output } = options;

  const manifest =
    layout.manifest === undefined ? undefined : await readReleaseFile(layout, layout.manifest, 'manifest');
  const chosen = chooseProtocols({
    flag: options.protocols,
    config: options.configProtocols,
    manifest: manifest === undefined ? undefined : parseManifest(manifest.content, manifest.file.filename),
    manifestFile: layout.manifest,
  });
  chosen.warnings.forEach(warn);

  const sig = await readReleaseFile(layout, layout.signature, 'signature');
  const signature = await readSignatureFile(sig.content, layout.signature, {
    dearmor: options.dearmorSignature === true,
    shasumsFile: layout.shasums,
  });
  if (signature.dearmored)
    output.info(`Converted ${layout.signature} from ASCII armor to binary (in memory only)`);
  output.info(`Checking the signature against ${options.keySource.label}`);
  const signer = await checkSigner({
    signature,
    signatureFile: layout.signature,
    shasumsBytes: shasumsContent,
    shasumsFile: layout.shasums,
    keySource: options.keySource,
    now: options.now(),
    warn,
    shasumsEntries,
  });

  return { manifest, protocols: chosen, sig, signature, signer };
}

/** Each small file's cap, what it is called in messages, and what to do when it is above the cap. */
const SMALL_FILES = {
  shasums: {
    limit: SMALL_FILE_CAPS.shasums,
    what: 'a SHA256SUMS file (one line per file, a few KB)',
    hint: () =>
      'This is not the checksum file goreleaser writes. Rebuild the release (goreleaser release --clean) instead of writing into its folder.',
  },
  signature: {
    limit: SMALL_FILE_CAPS.signature,
    what: 'a detached signature (under 1 KB)',
    hint: (layout: ReleaseLayout) =>
      `Sign ${layout.shasums} again with a binary detached signature: gpg --detach-sign ${layout.shasums}`,
  },
  manifest: {
    limit: SMALL_FILE_CAPS.manifest,
    what: 'a manifest (one line of JSON)',
    hint: () =>
      'Write it as goreleaser copies terraform-registry-manifest.json: {"version":1,"metadata":{"protocol_versions":["6.0"]}}',
  },
} as const;

/** Reads one small file of the release (SHA256SUMS, signature, manifest), refusing one above its cap. */
export async function readReleaseFile(
  layout: ReleaseLayout,
  filename: string,
  kind: keyof typeof SMALL_FILES,
): Promise<{ file: ReleaseFile; content: Uint8Array }> {
  const file = path.join(layout.dir, filename);
  const { limit, what, hint } = SMALL_FILES[kind];
  try {
    const content = new Uint8Array(await readCapped(file, limit));
    return { file: { filename, path: file, bytes: content.length }, content };
  } catch (error) {
    if (error instanceof FileTooLargeError) {
      throw new VerificationError(tooLargeMessage(filename, error, what), {
        hint: hint(layout),
        details: { file: filename, bytes: error.bytes, limit },
      });
    }
    throw new VerificationError(
      `${filename} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: 'Check the file permissions of the release folder.',
        details: { file: filename },
        cause: error,
      },
    );
  }
}

/** Hashes every listed file and compares it with its line; a mismatch names the file and the line. */
export async function hashListed(
  session: HashingSession,
  layout: ReleaseLayout,
  entries: ShasumEntry[],
  options: HashOptions | undefined,
): Promise<Map<string, FileDigest>> {
  const paths = entries.map((e) => path.join(layout.dir, e.filename));
  let digests: Map<string, FileDigest>;
  try {
    digests = await session.hashFiles(paths, options);
  } catch (error) {
    if (error instanceof EntryReadError) throw entryFailure(path.basename(error.path), error);
    if (!(error instanceof FileReadError)) throw error;
    const filename = path.basename(error.path);
    throw new VerificationError(`${filename} cannot be read (${error.code})`, {
      hint: 'Check that the file is a regular, readable file.',
      details: { file: filename },
      cause: error,
    });
  }
  const byName = new Map<string, FileDigest>();
  for (const entry of entries) {
    const digest = digests.get(path.join(layout.dir, entry.filename))!;
    if (digest.sha256 !== entry.shasum) throw shasumMismatch(layout.shasums, entry, digest.sha256);
    byName.set(entry.filename, digest);
  }
  return byName;
}

/** A listed file whose bytes hash to `actual`, not to its line: named with the line. */
export function shasumMismatch(shasumsFile: string, entry: ShasumEntry, actual: string): VerificationError {
  return new VerificationError(
    `${entry.filename} does not match ${shasumsFile} line ${entry.line}: the file hashes to ${actual}, the line says ${entry.shasum}`,
    {
      hint: 'The file changed after SHA256SUMS was written. Rebuild the release (goreleaser release --clean) instead of editing files in it.',
      details: {
        file: entry.filename,
        shasumsFile,
        line: entry.line,
        expected: entry.shasum,
        actual,
      },
    },
  );
}
