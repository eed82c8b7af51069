/**
 * What the private registry serves for a locked version, as `provider lock check` holds a lock block against it:
 * read and checked as `provider lock --registry` reads it (`provider check --download`'s consumer check: the
 * signature, SHA256SUMS against every platform, every zip downloaded to a temporary file and hashed for its
 * `h1:`, the registry protocol's `packages` read and checked where served), with what the policy decides with:
 * the keys the signature proved, the SHA-256 of SHA256SUMS, and (for a run whose policy has a min-age) the
 * version's `created-at`, read once more from the version's resource. GETs only. A version the registry does not
 * have is an answer (`unknown`), and so is one terraform init would refuse (`refused`); any other failure (the
 * API unreachable, a token refused) is thrown as it is.
 */
import { keyIdsOf } from '../../lockfile/admission.js';
import { ApiError, VerificationError } from '../../errors.js';
import type { ServedAnswer } from '../../lockfile/audit.js';
import { getVersion } from '../../registry/versions.js';
import type { RegistryClient } from '../../registry/http.js';
import type { ProviderAddress } from '../../registry/paths.js';
import { normalizeVersion } from '../../release/version.js';
import { platformName } from '../../terraform/names.js';
import type { RunContext } from '../context.js';
import { hashServedPackages } from '../lock.js';
import type { RegistrySession } from '../session.js';

/** Reads what the registry serves for a provider type's version; each (type, version) read once per run. */
export type ServedReader = (type: string, version: string) => Promise<ServedAnswer>;

/**
 * The reader of one run, over its registry session; `dated` reads each version's `created-at` too (a policy with a
 * min-age counts the version's age from it).
 */
export function servedReader(
  context: RunContext,
  registry: () => Promise<RegistrySession>,
  options: { dated: boolean } = { dated: false },
): ServedReader {
  const answers = new Map<string, Promise<ServedAnswer>>();
  return (type, version) => {
    const key = `${type}\n${version}`;
    let answer = answers.get(key);
    if (answer === undefined) {
      answer = readServed(context, registry, type, version, options.dated);
      answers.set(key, answer);
    }
    return answer;
  };
}

async function readServed(
  context: RunContext,
  registry: () => Promise<RegistrySession>,
  type: string,
  version: string,
  dated: boolean,
): Promise<ServedAnswer> {
  if (normalizeVersion(version) !== version) {
    return { state: 'unknown', why: `"${version}" is not a version the registry could serve` };
  }
  const session = await registry();
  const address = { organization: session.organization, namespace: session.namespace, name: type };
  try {
    const shown = `${session.namespace}/${type}`;
    const report = await hashServedPackages(context, session.client, address, version, shown);
    const createdAt = dated ? await createdAtOf(session.client, address, version) : undefined;
    return {
      state: 'served',
      served: {
        platforms: report.platforms.map((p) => ({
          platform: platformName(p),
          h1: p.hashes.filter((hash) => hash.startsWith('h1:')),
        })),
        zh: report.shasums.zh,
        packages: report.platforms.flatMap((p) => p.packages?.hashes ?? []),
        keyIds: keyIdsOf(report.signature),
        sha256sums: report.shasums.sha256,
        createdAt,
      },
    };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404)
      return { state: 'unknown', why: error.messageLines[0] ?? error.message };
    if (error instanceof VerificationError) {
      return { state: 'refused', why: error.messageLines.map((line) => line.trim()).join(' ') };
    }
    throw error;
  }
}

/**
 * The version's `created-at` in the registry; undefined when it is gone or has none (a cooldown then holds it:
 * src/lockfile/admission.ts fails closed).
 */
async function createdAtOf(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
): Promise<Date | undefined> {
  const created = (await getVersion(client, address, version))?.attributes['created-at'];
  return created === undefined ? undefined : new Date(created);
}
