/**
 * A release verified but for what its uploads prove: its `h1:` lock hashes put together once every zip was read
 * (by the verification, by the read that uploaded it, or now), and the zips no upload reads checked before any
 * write. What `checkRelease` (./stages.ts) returns.
 */
import * as path from 'node:path';
import { VerificationError } from '../errors.js';
import { failureOf, retrying } from '../net/retry.js';
import { mapPool } from '../pool.js';
import { hashListed, shasumMismatch } from './checks.js';
import { EntryReadError, type HashingSession, type ZipPlan } from './hashing/hashing.js';
import { entryFailure, hash1FromEntries, type ZipHashPlan } from './hashing/lockHashes.js';
import type { FileIdentity, StreamExpectation } from './hashing/streamedRead.js';
import type { ReleaseLayout } from './layout.js';
import type { ShasumEntry } from './shasums.js';
import type { ReleasePlatform, UploadableRelease, VerifiedRelease } from './types.js';

/**
 * A release verified but for what its zips' reads still have to give. Verified first (`--verify-first`), every
 * check is made, and with `storedLater` only the SHA-256 of the zips' stored entries was left out of the
 * verification's read: `withLockHashes` reads those entries again (from the page cache, proven to be the verified
 * bytes). Streamed, each zip is proven by the read that uploads it (its hashes kept by the hashing session), or by
 * `verifyNow` when no upload reads it; `withLockHashes` then puts the `h1:`s together.
 */
export interface StagedRelease {
  release: UploadableRelease;
  /** The release with every platform's `h1:`; fails with FileChangedError (exit 3) when a zip changed since. */
  withLockHashes(signal?: AbortSignal): Promise<VerifiedRelease>;
  /**
   * Reads and checks now, against their lines, the zips at these paths that were left to the reads uploading
   * them (`streamed`): those no upload will read (the registry has them already).
   */
  verifyNow(paths: ReadonlySet<string>, signal?: AbortSignal): Promise<void>;
}

/** The staged release over what its zips' reads gave so far. */
export function stagedRelease(sources: LockSources): StagedRelease {
  const { release, contents } = sources;
  let whole: Promise<VerifiedRelease> | undefined;
  return {
    release,
    withLockHashes: (signal) => (whole ??= completeLockHashes(sources, signal)),
    verifyNow: async (paths, signal) => {
      const held = release.platforms.flatMap((platform, i) =>
        paths.has(platform.path) && contents[i]!.entries === undefined ? [contents[i]!] : [],
      );
      await verifyEntries(sources, held, signal);
    },
  };
}

/** Remote zips proven at once (each one download), as many as the uploads' default. */
const REMOTE_AT_ONCE = 4;

/**
 * Reads zips and checks them against their lines now, a few at once as the verification reads them; each one's
 * entries' content hashes go into its `LockContents`.
 */
async function verifyEntries(
  { session, layout }: LockSources,
  all: LockContents[],
  signal: AbortSignal | undefined,
): Promise<void> {
  // A remote zip is proven by the read that would have uploaded it, retried as an upload would be (the origin's
  // passing trouble; bytes that do not verify are final); the files are hashed a few at once.
  const remote = all.filter((h) => session.isRemote(path.join(layout.dir, h.line.filename)));
  await mapPool(remote, REMOTE_AT_ONCE, async (h) => {
    const { filename } = h.line;
    const prove = () => session.proveStreamed(path.join(layout.dir, filename), filename);
    const proven = await retrying(prove, {
      failure: (error) => (error instanceof VerificationError ? { kind: 'final' } : failureOf(error)),
      signal,
      interrupted: `Interrupted while reading ${filename}`,
    });
    h.entries = proven.entries;
  });
  const held = all.filter((h) => !remote.includes(h));
  if (held.length === 0) return;
  const plans = new Map(held.map(({ plan, line }) => [path.join(layout.dir, line.filename), plan.plan]));
  const lines = held.map((h) => h.line);
  const digests = await hashListed(session, layout, lines, { plans, chunkDigests: false, signal });
  for (const h of held) h.entries = digests.get(h.line.filename)!.entries!;
}

/** What the upload's read of a zip must prove, and the errors it fails with when the file is still the same. */
export function streamExpectation(
  layout: ReleaseLayout,
  line: ShasumEntry,
  plan: ZipPlan,
  identity: FileIdentity,
  zipPath: string,
): StreamExpectation {
  const { filename } = line;
  return {
    filename,
    sha256: line.shasum,
    bytes: Number(identity.size),
    identity,
    plan,
    failures: {
      shasum: (actual) => shasumMismatch(layout.shasums, line, actual),
      entry: (entry, failure) => entryFailure(filename, new EntryReadError(zipPath, entry, failure)),
    },
  };
}

/**
 * A platform's zip plan, its SHA256SUMS line, and its entries' content hashes so far (`''` for those left for
 * later; none when the zip was left to its upload's read).
 */
export interface LockContents {
  plan: ZipHashPlan;
  line: ShasumEntry;
  entries: string[] | undefined;
}

/** What completing the lock hashes reads from. */
export interface LockSources {
  session: HashingSession;
  layout: ReleaseLayout;
  release: UploadableRelease;
  contents: LockContents[];
}

/**
 * The release with every platform's `h1:`, one zip after another: the stored entries left for later hashed now; a
 * zip left to its upload's read takes that read's hashes, or, when nothing uploaded it (the registry had it), is
 * read and verified now against its line, as the verification would have.
 */
async function completeLockHashes(
  sources: LockSources,
  signal: AbortSignal | undefined,
): Promise<VerifiedRelease> {
  const { session, release, contents } = sources;
  const platforms: ReleasePlatform[] = [];
  for (const [i, platform] of release.platforms.entries()) {
    const { plan } = contents[i]!;
    let complete = contents[i]!.entries ?? session.streamedResult(platform.path)?.entries;
    if (complete === undefined) {
      await verifyEntries(sources, [contents[i]!], signal);
      complete = contents[i]!.entries!;
    } else if (complete.includes('')) {
      const expected = { sha256: platform.shasum, bytes: platform.bytes };
      const later = await session.hashStoredEntries(
        platform.path,
        platform.filename,
        plan.plan,
        expected,
        signal,
      );
      const known = complete;
      complete = known.map((hash, j) => hash || later[j]!);
    }
    platforms.push({ ...platform, h1: hash1FromEntries(platform.filename, plan, complete) });
  }
  return { ...release, platforms };
}
