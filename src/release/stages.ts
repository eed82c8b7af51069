/**
 * A release's verification in explicit stages, over one hashing session: `readRelease` (its folder, SHA256SUMS
 * and the zips' entry plans: what the release is becomes known), `startHashing` (every listed file, a few at
 * once), `checkSignature` (the manifest, the signature and its signer, while the files
 * are hashed) and `checkRelease` (the hashes against SHA256SUMS, the zips, artifacts.json: the release as
 * verified, its `h1:` lock hashes to come). `verifyRelease` (src/release/verify.ts) runs them one after another;
 * `publish` puts the registry's reads between them (src/commands/publish.ts). Nothing is verified until
 * `checkRelease` returns: a caller that started work on the strength of the earlier stages must drop it when a
 * stage throws.
 */
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import { VerificationError } from '../errors.js';
import type { Output } from '../ui/output.js';
import { checkArtifacts, readArtifacts } from './artifacts.js';
import { checkManifestAndSignature, hashListed, readReleaseFile, type SignatureOptions } from './checks.js';
import type { FileDigest, HashingSession, HashOptions, ZipPlan } from './hashing/hashing.js';
import { identityOf, type FileIdentity } from './hashing/streamedRead.js';
import { readLayout } from './layout.js';
import { checkListing } from './listing.js';
import { planZipHash } from './hashing/lockHashes.js';
import { checkRecordPlatforms, readMirrorRecord, recordKeyWarning } from './mirrorRecord.js';
import { parseShasums } from './shasums.js';
import { stagedRelease, streamExpectation, type LockContents, type StagedRelease } from './staged.js';
import type { UploadablePlatform, UploadableRelease } from './types.js';
import { checkZip } from './zipCheck.js';
import type { RemoteZip } from './remoteZip.js';

export type { StagedRelease } from './staged.js';

/** What a verification needs. */
export interface VerifyReleaseOptions extends SignatureOptions {
  /** The release directory as the user wrote it (resolved against `cwd`). */
  dir: string;
  cwd: string;
  output: Output;
  /** Provider name to pick (`--name`). */
  name?: string | undefined;
  /** Version to pick (`--version`, already normalised). */
  version?: string | undefined;
  hashing?: HashOptions;
  /** The command running (`verify`, `publish`), named in hints; default `verify`. */
  command?: string | undefined;
  /** The hashing session to hash in; `verifyRelease` opens (and closes) one of its own without it. */
  session?: HashingSession | undefined;
  /**
   * Platform zips that are not in the folder but at links, by file name (a mirror streaming from its origin):
   * they are taken as listed in it, planned and checked by ranges, and proven by the reads that upload them.
   */
  remote?: ReadonlyMap<string, RemoteZip> | undefined;
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

/** A release folder as read, before any file is hashed: the first stage's result. */
export type ReleaseRead = Awaited<ReturnType<typeof readRelease>>;

/** Stage one: the folder's layout, SHA256SUMS and its listing, artifacts.json, and each zip's entry plan. */
export async function readRelease(options: VerifyReleaseOptions) {
  const { output } = options;
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    output.warn(message);
  };
  const dir = path.resolve(options.cwd, options.dir);
  const remote = options.remote ?? new Map<string, RemoteZip>();
  const layout = await readLayout(dir, {
    name: options.name,
    version: options.version,
    command: options.command,
    remote: [...remote.keys()],
  });
  layout.warnings.forEach(warn);
  output.info(`Verifying ${layout.name} ${layout.version} in ${dir}`);
  // A folder `provider mirror` wrote holds every platform its record lists (./mirrorRecord.ts).
  const record = await readMirrorRecord(layout);
  if (record !== undefined) await checkRecordPlatforms(layout, record);
  const zipPaths = layout.platforms.map((platform) => path.join(dir, platform.filename));

  const shasums = await readReleaseFile(layout, layout.shasums, 'shasums');
  const entries = parseShasums(shasums.content, layout.shasums);
  const listing = checkListing(layout, entries);
  listing.warnings.forEach(warn);
  const artifactsJson = await readArtifacts(layout, warn);
  // Each zip's size and identity before anything of it is read: a read that streams it for upload later tells
  // by them a file changed during the run from one that never matched its line (./hashing/streamedRead.ts).
  const identities = await Promise.all(
    zipPaths.map((zip, i) => {
      const link = remote.get(layout.platforms[i]!.filename);
      if (link !== undefined) return Promise.resolve(remoteIdentity(link));
      return stat(zip, { bigint: true }).then(identityOf, () => undefined);
    }),
  );
  // Each zip's central directory (a few small reads), so that its entries are hashed for the h1: lock hash in
  // the same read of the file as its SHA-256. A zip that cannot be planned is hashed whole; the zip check then
  // says what is wrong with it.
  const planned = await Promise.all(
    layout.platforms.map((platform, i) =>
      planZipHash(zipPaths[i]!, platform.filename, remote.get(platform.filename)).catch(
        (error: unknown) => error as Error,
      ),
    ),
  );
  const identity: ReleaseIdentity = {
    name: layout.name,
    version: layout.version,
    shasumsFile: layout.shasums,
    signatureFile: layout.signature,
  };
  return {
    dir,
    layout,
    identity,
    zipPaths,
    shasums,
    entries,
    listing,
    artifactsJson,
    planned,
    identities,
    remote,
    warnings,
    warn,
    record,
  };
}

/** A remote zip's identity: its size; nothing of it can change under a read as a file's inode can. */
function remoteIdentity(remote: RemoteZip): FileIdentity {
  return { dev: 0n, ino: 0n, size: BigInt(remote.bytes), mtimeNs: 0n, ctimeNs: 0n };
}

/** The hashing under way: the digests to come, and how to stop it (a check failed before it ended). */
export interface Hashing {
  digests: Promise<Map<string, FileDigest>>;
  stop(): void;
}

/** Settles a race without a value or an error of its own. */
const noop = (): void => undefined;

/**
 * Stage two: hashes every listed file (the long part: SHA-256 on this thread, inflating on Node's zlib thread
 * pool), the zips' planned entries in the same read; with `storedLater`, the stored entries' SHA-256 is left to
 * `withLockHashes`; with `uploads`, each file's chunk digests are taken for the uploads' checks. Resolves once the first reads are under way: the bundle's modules are CommonJS, each loaded
 * in one synchronous block, so nothing more loads on this thread (the signature check's openpgp, the caller's
 * network side) before that.
 */
export async function startHashing(
  read: ReleaseRead,
  session: HashingSession,
  options: {
    hashing?: HashOptions | undefined;
    storedLater: boolean;
    uploads: boolean;
    /** Leave the zips to the reads that upload them (`publish`'s default order): only the other files now. */
    streamed?: boolean;
  },
): Promise<Hashing> {
  const stopping = new AbortController();
  const outer = options.hashing?.signal;
  const signal = outer ? AbortSignal.any([outer, stopping.signal]) : stopping.signal;
  const plans = new Map<string, ZipPlan>();
  read.planned.forEach((plan, i) => {
    if (!(plan instanceof Error)) plans.set(read.zipPaths[i]!, plan.plan);
  });
  let started: () => void = noop;
  const dispatched = new Promise<void>((resolve) => (started = resolve));
  const zips = new Set(read.layout.platforms.map((p) => p.filename));
  const listed =
    options.streamed === true
      ? read.listing.present.filter((entry) => !zips.has(entry.filename))
      : read.listing.present;
  const digests = hashListed(session, read.layout, listed, {
    ...options.hashing,
    signal,
    plans,
    storedEntriesLater: options.storedLater,
    chunkDigests: options.uploads,
    started,
  });
  digests.catch(noop);
  await Promise.race([dispatched, digests.then(noop, noop)]);
  return { digests, stop: () => stopping.abort() };
}

/** The manifest, protocols, signature and signer: the third stage's result. */
export type SignatureChecked = Awaited<ReturnType<typeof checkManifestAndSignature>>;

/**
 * Stage three, while the files are hashed: the manifest and protocols, then the signature over SHA256SUMS and
 * who made it. A failure stops the hashing; failures are reported in the order signature, hashes, zips.
 */
export async function checkSignature(
  read: ReleaseRead,
  options: SignatureOptions,
  hashing: Hashing,
): Promise<SignatureChecked> {
  try {
    const signed = await checkManifestAndSignature(
      read.layout,
      read.shasums.content,
      read.entries,
      options,
      read.warn,
    );
    const keyWarning = read.record && recordKeyWarning(read.record, signed.signer);
    if (keyWarning !== undefined) read.warn(keyWarning);
    return signed;
  } catch (error) {
    hashing.stop();
    throw error;
  }
}

/**
 * Stage four: the zips checked, the hashes against SHA256SUMS, artifacts.json: the release as verified. A zip left
 * to its upload's read (`startHashing` with `streamed`) is planned for it here: its size and identity from the
 * first stage, its hash its signed line, which that read proves before the upload can complete.
 */
export async function checkRelease(
  read: ReleaseRead,
  hashing: Hashing,
  signed: SignatureChecked,
  session: HashingSession,
): Promise<StagedRelease> {
  const { layout, zipPaths, warn } = read;
  const zips = layout.platforms.map((platform, i) => {
    const expect = { name: layout.name, os: platform.os };
    const check = checkZip(zipPaths[i]!, platform.filename, expect, read.remote.get(platform.filename));
    check.catch(noop);
    return check;
  });
  const digests = await hashing.digests;
  const byName = new Map(read.entries.map((e) => [e.filename, e]));
  const zipNames = new Set(layout.platforms.map((p) => p.filename));
  const artifacts =
    read.artifactsJson &&
    checkArtifacts(read.artifactsJson, {
      layout,
      entries: read.entries,
      // A zip left to its upload's read is taken for its line here; that read proves it.
      sha256Of: (f) => digests.get(f)?.sha256 ?? (zipNames.has(f) ? byName.get(f)?.shasum : undefined),
      warn,
    });
  const platforms: UploadablePlatform[] = [];
  /** Each platform's zip plan and content hashes so far (`''` for the stored entries left for later). */
  const contents: LockContents[] = [];
  for (const [i, platform] of layout.platforms.entries()) {
    const digest = digests.get(platform.filename);
    const zip = await zips[i]!;
    zip.warnings.forEach(warn);
    const plan = read.planned[i]!;
    if (plan instanceof Error) throw plan;
    const line = byName.get(platform.filename)!;
    const zipPath = zipPaths[i]!;
    let bytes = digest?.bytes;
    if (bytes === undefined) {
      const identity = read.identities[i];
      if (identity === undefined) throw unreadableZip(platform.filename);
      bytes = Number(identity.size);
      const expectation = streamExpectation(layout, line, plan.plan, identity, zipPath);
      expectation.remote = read.remote.get(platform.filename);
      session.expectStreamed(zipPath, expectation);
    }
    platforms.push({ ...platform, path: zipPath, shasum: line.shasum, bytes, executable: zip.executable });
    contents.push({ plan, line, entries: digest?.entries });
  }
  const release: UploadableRelease = {
    dir: read.dir,
    name: layout.name,
    version: layout.version,
    protocols: signed.protocols.protocols,
    protocolsSource: signed.protocols.source,
    shasums: read.shasums.file,
    shasumsBytes: read.shasums.content,
    signature: { ...signed.sig.file, dearmored: signed.signature.dearmored },
    signatureBytes: signed.signature.binary,
    platforms,
    signer: signed.signer,
    warnings: read.warnings,
  };
  if (signed.manifest !== undefined) release.manifest = signed.manifest.file;
  if (artifacts !== undefined) release.artifactsJson = artifacts;
  return stagedRelease({ session, layout: read.layout, release, contents });
}

/** A zip whose size could not be read when the release was read. */
function unreadableZip(filename: string): VerificationError {
  return new VerificationError(`${filename} cannot be read`, {
    hint: 'Check that the file is a regular, readable file.',
    details: { file: filename },
  });
}
