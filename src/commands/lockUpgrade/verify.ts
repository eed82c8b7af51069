/**
 * One version a lock file moves to, verified and hashed as `provider lock --registry` does it (the consumer check
 * with downloads and lock hashes: src/commands/lock.ts `hashServedPackages`), with the hash cache (./cache.ts)
 * in front: once the check has verified the signature and read the signed SHA256SUMS, a cache holding an `h1:` for
 * each of its zips under that SHA256SUMS's hash spares every download (every filename and shasum is still held
 * against the signed list). Otherwise every zip is downloaded, once, and the `h1:`s are kept.
 */
import { keyIdsOf } from '../../lockfile/admission.js';
import { VerificationError } from '../../errors.js';
import type { ConsumerCheckReport } from '../../consumer/check.js';
import type { ConsumerCheckInput } from '../../consumer/types.js';
import type { LockMaterial } from '../../lockfile/source.js';
import type { RegistryClient } from '../../registry/http.js';
import type { ProviderAddress } from '../../registry/paths.js';
import type { RunContext } from '../context.js';
import { hashServedPackages } from '../lock.js';
import type { HashCache } from './cache.js';

/** What verification proved of a version's signed bytes: the keys of its signature, the SHA-256 of SHA256SUMS. */
export interface SignedFacts {
  keyIds: string[];
  sha256sums: string;
}

/**
 * A version verified (its lock material, whether its hashes came from the cache, what its signature proved), or
 * why it does not verify.
 */
export type Verified =
  | {
      material: LockMaterial;
      cached: boolean;
      signed: SignedFacts;
      /** With a policy: why it admitted the version. */
      admitted?: string;
    }
  | { error: VerificationError };

/** Verifies and hashes one version (see above). */
export async function verifyVersion(
  context: RunContext,
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
  cache: HashCache | undefined,
  /** Where the downloads are shown, and what the run knows of each host's ranges. */
  run: Pick<ConsumerCheckInput, 'progress' | 'ranges'>,
): Promise<Verified> {
  const shown = `${address.namespace}/${address.name}`;
  try {
    const knownH1 = cache === undefined ? undefined : (sums: string) => cache.get(sums);
    const report = await hashServedPackages(context, client, address, version, shown, { ...run, knownH1 });
    if (report.h1Known === true)
      context.output.info(`Hashes of ${shown} ${version} from the cache (${cache!.dir}): no zip downloaded`);
    else if (cache !== undefined) await keep(context, cache, report);
    return {
      material: material(address.name, version, report),
      cached: report.h1Known === true,
      signed: { keyIds: keyIdsOf(report.signature), sha256sums: report.shasums.sha256 },
    };
  } catch (error) {
    if (error instanceof VerificationError) return { error };
    throw error;
  }
}

/** Keeps each zip's `h1:` under the SHA256SUMS's hash; a cache that cannot be written is a warning. */
async function keep(context: RunContext, cache: HashCache, report: ConsumerCheckReport): Promise<void> {
  const h1 = Object.fromEntries(
    report.platforms.flatMap((p) => {
      const hash = p.hashes.find((h) => h.startsWith('h1:'));
      return hash === undefined ? [] : [[p.filename, hash]];
    }),
  );
  if (!(await cache.set(report.shasums.sha256, h1)))
    context.output.warn(
      `The hash cache in ${cache.dir} cannot be written: the next run downloads the zips again`,
    );
}

function material(
  name: string,
  version: string,
  report: Pick<ConsumerCheckReport, 'platforms' | 'shasums'>,
): LockMaterial {
  return {
    name,
    version,
    platforms: report.platforms.map((p) => ({ os: p.os, arch: p.arch, hashes: p.hashes })),
    shasums: report.shasums.zh.map((hash) => hash.slice('zh:'.length)),
  };
}
