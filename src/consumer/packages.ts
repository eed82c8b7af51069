/**
 * The lock hashes a registry serves, checked against the package: the provider registry protocol's download
 * response (`GET <providers.v1>:namespace/:type/:version/download/:os/:arch`, found by service discovery on the
 * same host and read with the token, as `terraform init` and `tofu init` read it) may carry OpenTofu's
 * `packages` object (RFC `opentofu/opentofu: rfc/20251027-provider-registry-hashes.md`):
 * `{"packages":{"<os>_<arch>":{"hashes":["h1:…","zh:…"],"package_size":N}}}`, every platform of the version in
 * every platform's response. OpenTofu records all those hashes in `.terraform.lock.hcl`, so each must be the
 * package's: every `zh:` the signed SHA256SUMS line and the platform's shasum; with the zip downloaded, every
 * `h1:` the zip's and `package_size` its bytes. HCP Terraform serves no `packages` (hashicorp/terraform#32809):
 * absent is normal.
 */
import * as z from 'zod';
import { ApiError } from '../errors.js';
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import { sortHashes, zipHash } from '../terraform/hashes.js';
import type { ConsumerProblem } from './checksums.js';
import { mapPool } from '../pool.js';

/** One platform's entry of `packages`, as served. */
export interface ServedPackage {
  hashes: string[];
  /** Bytes of the zip, when the entry gives them. */
  packageSize: number | null;
}

/** What one platform's download response serves: `packages` by `<os>_<arch>`, or undefined when it has none. */
export type ServedPackages = Map<string, ServedPackage> | undefined;

/** What the check knows of one platform to compare `packages` with. */
export interface KnownPackage {
  /** `<os>_<arch>`. */
  platform: string;
  /** The registry's shasum for the platform. */
  shasum: string;
  /** The hash SHA256SUMS lists for the platform's filename, when it lists one. */
  listed: string | undefined;
  /** With the zip downloaded (and hashing to its shasum): its size and its `h1:`. */
  downloaded?: { bytes: number; h1: string | undefined };
  /** Not downloaded, its `h1:` known all the same (computed by an earlier run for the same signed SHA256SUMS). */
  knownH1?: string;
}

/** What `packages` gives for one platform once checked (for the report). */
export interface PackageVerdict {
  /** The hashes served for the platform (in its own download response when it has the entry). */
  hashes: string[];
  packageSize: number | null;
  /** What was compared: `zh` always, `h1` and `package_size` with the zip downloaded. */
  checked: ('zh' | 'h1' | 'package_size')[];
}

const discoverySchema = z.looseObject({ 'providers.v1': z.string() });
const downloadSchema = z.looseObject({
  packages: z
    .record(
      z.string(),
      z.looseObject({ hashes: z.array(z.string()), package_size: z.number().int().nonnegative().optional() }),
    )
    .nullish(),
});

const HINT =
  "The registry serves a lock hash that does not match the package; consumers' .terraform.lock.hcl would pin the wrong value (OpenTofu records every hash in packages) and refuse the real package. The registry computes these hashes from the stored zips: report it to whoever runs the registry, or delete the version (provider delete <version>) and publish it again.";

/**
 * Reads every platform's download response through the registry protocol (service discovery first); a platform
 * the protocol does not serve (404) is a problem, any other failure is thrown as it is (exit 4).
 */
export async function readServedPackages(
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
  platforms: { os: string; arch: string }[],
  concurrency: number,
): Promise<{ served: Map<string, ServedPackages>; problems: ConsumerProblem[] }> {
  const discovery = await client.get('/.well-known/terraform.json', discoverySchema);
  const base = new URL(discovery['providers.v1'], client.baseUrl);
  // The namespace of a private provider in the registry protocol is its organization.
  const prefix = [address.organization, address.name, version].map(encodeURIComponent).join('/');
  const problems: ConsumerProblem[] = [];
  const served = new Map<string, ServedPackages>();
  await mapPool(platforms, concurrency, async ({ os, arch }) => {
    const platform = `${os}_${arch}`;
    const url = new URL(`${prefix}/download/${encodeURIComponent(os)}/${encodeURIComponent(arch)}`, base);
    try {
      const document = await client.get(url.toString(), downloadSchema);
      served.set(
        platform,
        document.packages
          ? new Map(
              Object.entries(document.packages).map(([key, entry]) => [
                key,
                { hashes: entry.hashes, packageSize: entry.package_size ?? null },
              ]),
            )
          : undefined,
      );
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
      problems.push({
        subject: platform,
        message: `the registry protocol serves no download for this platform (${url.pathname} answered 404)`,
        terraform: null,
        hint: 'Run the same provider publish command again to upload what is missing, or delete the version (provider delete <version>) and publish it again.',
      });
      served.set(platform, undefined);
    }
  });
  return { served, problems };
}

/**
 * Checks every `packages` entry of every download response against what is known of its platform. The same wrong
 * value served in several responses is one problem naming them. Returns the problems and, per platform served,
 * what was served and checked.
 */
export function packageProblems(
  served: Map<string, ServedPackages>,
  known: KnownPackage[],
): { problems: ConsumerProblem[]; verdicts: Map<string, PackageVerdict> } {
  const mismatches = new Map<string, { subject: string; message: string; responses: string[] }>();
  const verdicts = new Map<string, PackageVerdict>();
  const requested = [...served.keys()].sort();
  for (const platform of known) {
    const entries = requested.flatMap((from) => {
      const entry = served.get(from)?.get(platform.platform);
      return entry ? [{ from, entry }] : [];
    });
    // The report shows the platform's own response's entry, else the first one served.
    const shown = entries.find((e) => e.from === platform.platform) ?? entries[0];
    if (shown) {
      verdicts.set(platform.platform, {
        hashes: sortHashes(shown.entry.hashes),
        packageSize: shown.entry.packageSize,
        checked: platform.downloaded
          ? ['zh', 'h1', 'package_size']
          : platform.knownH1 === undefined
            ? ['zh']
            : ['zh', 'h1'],
      });
    }
    for (const { from, entry } of entries) {
      for (const message of entryMismatches(entry, platform)) {
        const key = `${platform.platform}\n${message}`;
        const found = mismatches.get(key) ?? { subject: platform.platform, message, responses: [] };
        found.responses.push(from);
        mismatches.set(key, found);
      }
    }
  }
  const problems = [...mismatches.values()].map(({ subject, message, responses }) => ({
    subject,
    message: `${message} (${responses.length === requested.length && requested.length > 1 ? 'in every download response' : `in the download response of ${responses.join(', ')}`})`,
    terraform: null,
    hint: HINT,
  }));
  return { problems, verdicts };
}

/** What is wrong with one served entry, in words naming the served value and the computed one. */
function entryMismatches(entry: ServedPackage, known: KnownPackage): string[] {
  const found: string[] = [];
  const shasum = zipHash(known.shasum);
  const listed = known.listed === undefined ? undefined : zipHash(known.listed);
  const source =
    listed === undefined || listed === shasum
      ? `SHA256SUMS and the platform's shasum give ${shasum}`
      : `SHA256SUMS lists ${listed} and the platform's shasum is ${shasum}`;
  for (const hash of entry.hashes) {
    if (hash.startsWith('zh:') && (hash !== shasum || (listed !== undefined && hash !== listed))) {
      found.push(`the registry serves ${hash} in packages, but ${source}`);
    }
    const h1 = known.downloaded?.h1 ?? known.knownH1;
    if (hash.startsWith('h1:') && h1 !== undefined && hash !== h1) {
      const whose = known.downloaded === undefined ? "the zip's known h1:" : "the downloaded zip's h1:";
      found.push(`the registry serves ${hash} in packages, but ${whose} is ${h1}`);
    }
  }
  const bytes = known.downloaded?.bytes;
  if (bytes !== undefined && entry.packageSize !== null && entry.packageSize !== bytes) {
    found.push(
      `the registry serves package_size ${entry.packageSize} in packages, but the downloaded zip is ${bytes} bytes`,
    );
  }
  return found;
}
