/**
 * `verifyRelease`: everything Terraform and the registry will check, done locally before any write. The
 * core takes its world as arguments (cwd, output, clock, key source) and returns plain data.
 */
import * as path from 'node:path';
import { VerificationError } from '../errors.js';
import type { Output } from '../ui/output.js';
import {
  EntryReadError,
  FileReadError,
  hashFiles,
  hashStoredEntries,
  startHashWorkers,
  type FileDigest,
  type HashOptions,
  type ZipPlan,
} from './hashing.js';
import type { KeySource } from './keySource.js';
import { checkArtifacts, readArtifacts } from './artifacts.js';
import { readLayout, type ReleaseLayout } from './layout.js';
import { checkListing } from './listing.js';
import { chooseProtocols, parseManifest } from './protocols.js';
import { parseShasums, type ShasumEntry } from './shasums.js';
import { readSignatureFile } from './signature.js';
import { FileTooLargeError, readCapped, SMALL_FILE_CAPS, tooLargeMessage } from './smallFile.js';
import { checkSigner } from './signer.js';
import type {
  ReleaseFile,
  ReleasePlatform,
  SignerInfo,
  UploadablePlatform,
  UploadableRelease,
  VerifiedRelease,
} from './types.js';
import { entryFailure, hash1FromEntries, planZipHash, type ZipHashPlan } from './lockHashes.js';
import { checkZip } from './zipCheck.js';

/** What `verifyRelease` needs. */
export interface VerifyReleaseOptions {
  /** The release directory as the user wrote it (resolved against `cwd`). */
  dir: string;
  cwd: string;
  output: Output;
  now: () => Date;
  keySource: KeySource;
  /** Provider name to pick (`--name`). */
  name?: string | undefined;
  /** Version to pick (`--version`, already normalised). */
  version?: string | undefined;
  /** `--protocols`, parsed. */
  protocols?: string[] | undefined;
  /** `protocols` from the configuration file. */
  configProtocols?: string[] | undefined;
  /** Convert an ASCII-armored `.sig` to binary in memory instead of failing. */
  dearmorSignature?: boolean | undefined;
  hashing?: HashOptions;
  /** The command running (`verify`, `publish`), named in hints; default `verify`. */
  command?: string | undefined;
  /** Calls made while the release is being verified, for work that may overlap it (see VerifyingHooks). */
  during?: VerifyingHooks | undefined;
}

/**
 * Calls made while a release is being verified, so that a caller can do meanwhile what does not depend on the
 * hashes (`publish` reads the registry's side: reads only). The release is NOT verified when they are called:
 * nothing may be written or reported on the strength of them, and a caller that starts work in them must drop
 * it when `verifyRelease` throws.
 */
export interface VerifyingHooks {
  /** The files are about to be hashed: the release's name, version and small files are known. */
  hashing?: (release: ReleaseIdentity) => void;
  /** The signature over SHA256SUMS verified (the hashing may still be running). */
  signed?: (signer: SignerInfo) => void;
}

/** What a release is, known from its folder before any file is hashed. */
export interface ReleaseIdentity {
  name: string;
  version: string;
  /** The SHA256SUMS file's name. */
  shasumsFile: string;
  /** The signature file's name. */
  signatureFile: string;
}

/** Verifies a release directory; throws UsageError or VerificationError, else returns the release. */
export async function verifyRelease(options: VerifyReleaseOptions): Promise<VerifiedRelease> {
  return (await verifyInStages(options, false)).withLockHashes();
}

/**
 * A verified release whose `h1:` lock hashes may still be to compute: every check `verifyRelease` makes is made
 * (the stored entries' sizes and CRC-32s included), but the SHA-256 of the zips' stored entries is left out of
 * the verification's read. `withLockHashes` reads those entries again (from the page cache, proven to be the
 * verified bytes) and returns the whole release.
 */
export interface StagedRelease {
  release: UploadableRelease;
  /** The release with every platform's `h1:`; fails with FileChangedError (exit 3) when a zip changed since. */
  withLockHashes(signal?: AbortSignal): Promise<VerifiedRelease>;
}

/**
 * `verifyRelease` for `publish`: the release as soon as it is verified, its `h1:` hashes to come
 * (`StagedRelease`). The stored entries' SHA-256 is some third of the hashing's CPU time; done while the files
 * upload, it is off the path to the first upload.
 */
export async function verifyReleaseStaged(options: VerifyReleaseOptions): Promise<StagedRelease> {
  return verifyInStages(options, true);
}

/** Settles a race without a value or an error of its own. */
const noop = (): void => undefined;

async function verifyInStages(options: VerifyReleaseOptions, storedLater: boolean): Promise<StagedRelease> {
  const { output } = options;
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    output.warn(message);
  };
  const dir = path.resolve(options.cwd, options.dir);
  const layout = await readLayout(dir, {
    name: options.name,
    version: options.version,
    command: options.command,
  });
  layout.warnings.forEach(warn);
  output.info(`Verifying ${layout.name} ${layout.version} in ${dir}`);
  // The hashing workers start now, while SHA256SUMS is read and the zips are planned.
  const zipPaths = layout.platforms.map((platform) => path.join(dir, platform.filename));
  void startHashWorkers(zipPaths, options.hashing);

  const shasums = await readReleaseFile(layout, layout.shasums, 'shasums');
  const entries = parseShasums(shasums.content, layout.shasums);
  const listing = checkListing(layout, entries);
  listing.warnings.forEach(warn);
  const artifactsJson = await readArtifacts(layout, warn);

  // Hashing (the long part, on the worker threads) starts now; the main thread checks the manifest, the
  // signature and the zips meanwhile. Failures are still reported in the same order: signature, hashes, zips.
  const stopHashing = new AbortController();
  const outer = options.hashing?.signal;
  const hashSignal = outer ? AbortSignal.any([outer, stopHashing.signal]) : stopHashing.signal;
  // Each zip's central directory first (a few small reads), so that its entries are hashed for the h1: lock hash
  // in the same read of the file as its SHA-256. A zip that cannot be planned is hashed whole; the zip check
  // below then says what is wrong with it.
  const planned = await Promise.all(
    layout.platforms.map((platform, i) =>
      planZipHash(zipPaths[i]!, platform.filename).catch((error: unknown) => error as Error),
    ),
  );
  const plans = new Map<string, ZipPlan>();
  planned.forEach((plan, i) => {
    if (!(plan instanceof Error)) plans.set(zipPaths[i]!, plan.plan);
  });
  let started: () => void = () => undefined;
  const dispatched = new Promise<void>((resolve) => (started = resolve));
  const hashing = hashListed(layout, listing.present, {
    ...options.hashing,
    signal: hashSignal,
    plans,
    storedEntriesLater: storedLater,
    started,
  });
  hashing.catch(() => undefined);
  // Every thread has its files before anything more loads on this one (the signature check's openpgp, the
  // caller's network side): the bundle's modules are CommonJS, each loaded in one synchronous block.
  await Promise.race([dispatched, hashing.then(noop, noop)]);
  options.during?.hashing?.({
    name: layout.name,
    version: layout.version,
    shasumsFile: layout.shasums,
    signatureFile: layout.signature,
  });
  const signer = await checkManifestAndSignature(layout, shasums.content, entries, options, warn).catch(
    (error: unknown) => {
      stopHashing.abort();
      throw error;
    },
  );
  options.during?.signed?.(signer.signer);
  const zips = layout.platforms.map((platform, i) => {
    const check = checkZip(zipPaths[i]!, platform.filename, { name: layout.name, os: platform.os });
    check.catch(() => undefined);
    return check;
  });
  const digests = await hashing;
  const byName = new Map(entries.map((e) => [e.filename, e]));
  const artifacts =
    artifactsJson &&
    checkArtifacts(artifactsJson, { layout, entries, sha256Of: (f) => digests.get(f)?.sha256, warn });
  const platforms: UploadablePlatform[] = [];
  /** Each platform's zip plan and content hashes so far (`''` for the stored entries left for later). */
  const contents: { plan: ZipHashPlan; entries: string[] }[] = [];
  for (const [i, platform] of layout.platforms.entries()) {
    const entry = byName.get(platform.filename)!;
    const digest = digests.get(platform.filename)!;
    const zip = await zips[i]!;
    zip.warnings.forEach(warn);
    const plan = planned[i]!;
    if (plan instanceof Error) throw plan;
    platforms.push({
      ...platform,
      path: path.join(dir, platform.filename),
      shasum: entry.shasum,
      bytes: digest.bytes,
      executable: zip.executable,
    });
    contents.push({ plan, entries: digest.entries! });
  }

  const release: UploadableRelease = {
    dir,
    name: layout.name,
    version: layout.version,
    protocols: signer.protocols.protocols,
    protocolsSource: signer.protocols.source,
    shasums: shasums.file,
    shasumsBytes: shasums.content,
    signature: { ...signer.sig.file, dearmored: signer.signature.dearmored },
    signatureBytes: signer.signature.binary,
    platforms,
    signer: signer.signer,
    warnings,
  };
  if (signer.manifest !== undefined) release.manifest = signer.manifest.file;
  if (artifacts !== undefined) release.artifactsJson = artifacts;
  let whole: Promise<VerifiedRelease> | undefined;
  return {
    release,
    withLockHashes: (signal) => (whole ??= completeLockHashes(release, contents, signal)),
  };
}

/** The release with every platform's `h1:`, the stored entries left for later hashed now, one zip after another. */
async function completeLockHashes(
  release: UploadableRelease,
  contents: { plan: ZipHashPlan; entries: string[] }[],
  signal: AbortSignal | undefined,
): Promise<VerifiedRelease> {
  const platforms: ReleasePlatform[] = [];
  for (const [i, platform] of release.platforms.entries()) {
    const { plan, entries } = contents[i]!;
    let complete = entries;
    if (entries.includes('')) {
      const later = await hashStoredEntries(
        platform.path,
        platform.filename,
        plan.plan,
        {
          sha256: platform.shasum,
          bytes: platform.bytes,
        },
        signal,
      );
      complete = entries.map((hash, j) => hash || later[j]!);
    }
    platforms.push({ ...platform, h1: hash1FromEntries(platform.filename, plan, complete) });
  }
  return { ...release, platforms };
}

/** The manifest and protocols, then the signature and who made it (each throws its own error). */
async function checkManifestAndSignature(
  layout: ReleaseLayout,
  shasumsContent: Uint8Array,
  shasumsEntries: ShasumEntry[],
  options: VerifyReleaseOptions,
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
async function readReleaseFile(
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
async function hashListed(
  layout: ReleaseLayout,
  entries: ShasumEntry[],
  options: HashOptions | undefined,
): Promise<Map<string, FileDigest>> {
  const paths = entries.map((e) => path.join(layout.dir, e.filename));
  let digests: Map<string, FileDigest>;
  try {
    digests = await hashFiles(paths, options);
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
    if (digest.sha256 !== entry.shasum) {
      throw new VerificationError(
        `${entry.filename} does not match ${layout.shasums} line ${entry.line}: the file hashes to ${digest.sha256}, the line says ${entry.shasum}`,
        {
          hint: 'The file changed after SHA256SUMS was written. Rebuild the release (goreleaser release --clean) instead of editing files in it.',
          details: {
            file: entry.filename,
            shasumsFile: layout.shasums,
            line: entry.line,
            expected: entry.shasum,
            actual: digest.sha256,
          },
        },
      );
    }
    byName.set(entry.filename, digest);
  }
  return byName;
}
