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
import * as path from 'node:path';
import type { Output } from '../ui/output.js';
import { checkArtifacts, readArtifacts } from './artifacts.js';
import { checkManifestAndSignature, hashListed, readReleaseFile, type SignatureOptions } from './checks.js';
import type { FileDigest, HashingSession, HashOptions, ZipPlan } from './hashing/hashing.js';
import { readLayout } from './layout.js';
import { checkListing } from './listing.js';
import { hash1FromEntries, planZipHash, type ZipHashPlan } from './hashing/lockHashes.js';
import { checkRecordPlatforms, readMirrorRecord, recordKeyWarning } from './mirrorRecord.js';
import { parseShasums } from './shasums.js';
import type { ReleasePlatform, UploadablePlatform, UploadableRelease, VerifiedRelease } from './types.js';
import { checkZip } from './zipCheck.js';

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
  const layout = await readLayout(dir, {
    name: options.name,
    version: options.version,
    command: options.command,
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
  // Each zip's central directory (a few small reads), so that its entries are hashed for the h1: lock hash in
  // the same read of the file as its SHA-256. A zip that cannot be planned is hashed whole; the zip check then
  // says what is wrong with it.
  const planned = await Promise.all(
    layout.platforms.map((platform, i) =>
      planZipHash(zipPaths[i]!, platform.filename).catch((error: unknown) => error as Error),
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
    warnings,
    warn,
    record,
  };
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
  options: { hashing?: HashOptions | undefined; storedLater: boolean; uploads: boolean },
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
  const digests = hashListed(session, read.layout, read.listing.present, {
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
 * A verified release whose `h1:` lock hashes may still be to compute: every check is made (the stored entries'
 * sizes and CRC-32s included), but with `storedLater` the SHA-256 of the zips' stored entries was left out of the
 * verification's read. `withLockHashes` reads those entries again (from the page cache, proven to be the
 * verified bytes) and returns the whole release.
 */
export interface StagedRelease {
  release: UploadableRelease;
  /** The release with every platform's `h1:`; fails with FileChangedError (exit 3) when a zip changed since. */
  withLockHashes(signal?: AbortSignal): Promise<VerifiedRelease>;
}

/** Stage four: the zips checked, the hashes against SHA256SUMS, artifacts.json: the release as verified. */
export async function checkRelease(
  read: ReleaseRead,
  hashing: Hashing,
  signed: SignatureChecked,
  session: HashingSession,
): Promise<StagedRelease> {
  const { layout, zipPaths, warn } = read;
  const zips = layout.platforms.map((platform, i) => {
    const check = checkZip(zipPaths[i]!, platform.filename, { name: layout.name, os: platform.os });
    check.catch(noop);
    return check;
  });
  const digests = await hashing.digests;
  const byName = new Map(read.entries.map((e) => [e.filename, e]));
  const artifacts =
    read.artifactsJson &&
    checkArtifacts(read.artifactsJson, {
      layout,
      entries: read.entries,
      sha256Of: (f) => digests.get(f)?.sha256,
      warn,
    });
  const platforms: UploadablePlatform[] = [];
  /** Each platform's zip plan and content hashes so far (`''` for the stored entries left for later). */
  const contents: LockContents[] = [];
  for (const [i, platform] of layout.platforms.entries()) {
    const digest = digests.get(platform.filename)!;
    const zip = await zips[i]!;
    zip.warnings.forEach(warn);
    const plan = read.planned[i]!;
    if (plan instanceof Error) throw plan;
    platforms.push({
      ...platform,
      path: zipPaths[i]!,
      shasum: byName.get(platform.filename)!.shasum,
      bytes: digest.bytes,
      executable: zip.executable,
    });
    contents.push({ plan, entries: digest.entries! });
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
  let whole: Promise<VerifiedRelease> | undefined;
  return {
    release,
    withLockHashes: (signal) => (whole ??= completeLockHashes(session, release, contents, signal)),
  };
}

/** A platform's zip plan and its entries' content hashes so far (`''` for those left for later). */
interface LockContents {
  plan: ZipHashPlan;
  entries: string[];
}

/** The release with every platform's `h1:`, the stored entries left for later hashed now, one zip after another. */
async function completeLockHashes(
  session: HashingSession,
  release: UploadableRelease,
  contents: LockContents[],
  signal: AbortSignal | undefined,
): Promise<VerifiedRelease> {
  const platforms: ReleasePlatform[] = [];
  for (const [i, platform] of release.platforms.entries()) {
    const { plan, entries } = contents[i]!;
    let complete = entries;
    if (entries.includes('')) {
      const expected = { sha256: platform.shasum, bytes: platform.bytes };
      const later = await session.hashStoredEntries(
        platform.path,
        platform.filename,
        plan.plan,
        expected,
        signal,
      );
      complete = entries.map((hash, j) => hash || later[j]!);
    }
    platforms.push({ ...platform, h1: hash1FromEntries(platform.filename, plan, complete) });
  }
  return { ...release, platforms };
}
