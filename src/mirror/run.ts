/**
 * `provider mirror --to-dir`: for each provider, the origin's versions are listed, the ones asked for chosen,
 * and each version either found in its folder already (verified again, every platform asked for there, the same
 * zips and key as the origin serves now: ./present.ts; nothing is written), or staged (./stage.ts), or, with `--dry-run`, only named. A version that fails (it does not
 * hold, a download failed, it cannot be placed) stops alone: the others go on, and the run ends with the first
 * failure's exit code, naming every failed one (src/commands/mirror.ts).
 */
import { rm } from 'node:fs/promises';
import * as path from 'node:path';
import {
  ProviderError,
  UsageError,
  VerificationError,
  toErrorDocument,
  type ErrorDocument,
} from '../errors.js';
import { comparePlatforms, platformName, type PlatformKey } from '../terraform/names.js';
import type { PolicyRule } from '../lockfile/admission.js';
import {
  openGate,
  PolicyRefusal,
  policyAddresses,
  refusedListed,
  verdictOf,
  type MirrorPolicy,
  type PolicyVerdict,
} from './admit.js';
import type { Origin, OriginProvider } from './origin.js';
import {
  admitPlanned,
  destinationSource,
  presentFolder,
  presentRemote,
  type MirrorDestination,
} from './present.js';
import type { SignedList } from './signed.js';
import type { MirrorOrigin } from './record.js';
import type { OriginVersion } from './schemas.js';
import type { RemoteZip } from '../release/remoteZip.js';
import type { VersionSelector } from './select.js';
import { stageVersion, type MirrorRunContext } from './stage.js';

/** One provider to mirror, with the versions and platforms chosen for it (flags, or its manifest entry). */
export interface MirrorTarget {
  provider: OriginProvider;
  select: VersionSelector;
  /** undefined: every platform the origin lists. */
  platforms: PlatformKey[] | undefined;
}

/** What a run is asked to do. */
export interface MirrorRunInput extends MirrorRunContext {
  origin: Origin;
  originUrl: string;
  targets: MirrorTarget[];
  /** `--to-dir`, or without it the scratch folder versions are staged in before they are published. */
  toDir: string;
  /** Without `--to-dir`: the private registry each version is published to (then removed from `toDir`). */
  destination?: MirrorDestination | undefined;
  dryRun: boolean;
  /** `--policy` (or the configuration's `policy`): the versions it does not admit are held or refused. */
  policy?: MirrorPolicy | undefined;
}

export type { MirrorDestination } from './present.js';

/** One version's outcome. */
export interface VersionReport {
  version: string;
  /**
   * `mirrored`: written now; `present`: already there and verified; `planned`: --dry-run; `held`: the policy does not
   * admit it yet (a cooldown, an approval wanting); `refused`: the policy refuses it; `failed`: stopped. Nothing of
   * a held, refused or failed version is written.
   */
  status: 'mirrored' | 'present' | 'planned' | 'held' | 'refused' | 'failed';
  /** The policy's decision, with its rule; null without a policy. */
  policy: PolicyVerdict | null;
  /** Its folder under `--to-dir`; null when it went to a private registry. */
  folder: string | null;
  platforms: string[];
  /** Platforms asked for that the origin does not list for this version, or lists but does not serve. */
  unavailable: string[];
  protocols: string[];
  origin: MirrorOrigin | null;
  /** Without `--to-dir`: the address it has in the private registry, and whether this run wrote to it. */
  destination: { source: string; wrote: boolean } | null;
  error: ErrorDocument | null;
}

/** One provider's outcome. */
export interface ProviderReport {
  source: string;
  versions: VersionReport[];
  /** Why its versions could not be listed (the origin does not have it, or refused); null when they were. */
  error: ErrorDocument | null;
}

/** What a run did: the report, and the errors of the versions that failed, in order. */
export interface MirrorOutcome {
  providers: ProviderReport[];
  errors: ProviderError[];
}

/** Mirrors every provider asked for; returns the report (failed versions included). */
export async function runMirror(input: MirrorRunInput): Promise<MirrorOutcome> {
  const reports: ProviderReport[] = [];
  const errors: ProviderError[] = [];
  for (const target of input.targets) {
    const { provider } = target;
    const source = `${input.origin.host}/${provider.namespace}/${provider.type}`;
    let listed: OriginVersion[];
    try {
      listed = await input.origin.versions(provider);
    } catch (error) {
      // One provider the origin does not have (or refuses) does not stop the others.
      if (!(error instanceof ProviderError) || error.code === 'interrupted') throw error;
      input.output.warn(error.message);
      errors.push(error);
      reports.push({ source, versions: [], error: toErrorDocument(error) });
      continue;
    }
    const chosen = target.select(listed.map((v) => v.version));
    if (chosen.length === 0) input.output.warn(`${source}: no version matches`);
    const versions: VersionReport[] = [];
    for (const version of chosen) {
      const entry = listed.find((v) => v.version === version)!;
      versions.push(await mirrorVersion(input, target, entry, errors));
    }
    reports.push({ source, versions, error: null });
  }
  return { providers: reports, errors };
}

/**
 * The folder of one version under `--to-dir`: `<host>/<namespace>/<type>/<version>`, so that two origins'
 * copies of one address never meet. A port is written after `_` (`127.0.0.1_8080`): `:` is no file name on
 * Windows.
 */
export function versionFolder(
  toDir: string,
  host: string,
  provider: OriginProvider,
  version: string,
): string {
  return path.join(toDir, host.replaceAll(':', '_'), provider.namespace, provider.type, version);
}

async function mirrorVersion(
  input: MirrorRunInput,
  target: MirrorTarget,
  entry: OriginVersion,
  errors: ProviderError[],
): Promise<VersionReport> {
  const { output } = input;
  const { provider } = target;
  const version = entry.version;
  const folder = versionFolder(input.toDir, input.origin.host, provider, version);
  const listed = (entry.platforms ?? []).map((p) => ({ os: p.os, arch: p.arch })).sort(comparePlatforms);
  // The protocol only recommends `platforms`: without it, each platform asked for is asked of the download
  // endpoint (a 404 is "not available"), and a run that asks for none cannot know what to copy.
  const unlisted = listed.length === 0;
  const listedNames = new Set(listed.map(platformName));
  const wanted = target.platforms ?? listed;
  const platforms = unlisted ? wanted : wanted.filter((p) => listedNames.has(platformName(p)));
  const unavailable = wanted.filter((p) => !unlisted && !listedNames.has(platformName(p))).map(platformName);
  const base: VersionReport = {
    version,
    status: 'planned',
    folder: input.destination ? null : folder,
    platforms: platforms.map(platformName),
    unavailable,
    protocols: entry.protocols ?? [],
    origin: null,
    destination: null,
    error: null,
    policy: null,
  };
  const label = `${provider.namespace}/${provider.type} ${version}`;
  if (unavailable.length > 0)
    output.warn(`${label}: ${input.origin.host} does not list ${unavailable.join(', ')}`);
  const addresses = policyAddresses(
    input.origin.host,
    provider,
    input.destination && `${input.destination.lockPrefix}/${provider.type}`,
  );
  try {
    const gate =
      input.policy && (await openGate(input.policy, input.origin, provider, version, addresses, input.now));
    // Every door of the version (already there, a dry run, staged) decides with its signed facts too.
    const admit = gate && ((signed: SignedList): void => void (base.policy = gate.signed(signed)));
    if (gate !== undefined) {
      const decision = gate.listed;
      base.policy = verdictOf(decision);
      if (decision.outcome === 'held') {
        output.warn(`${label}: held by the policy (${decision.rule}): ${decision.reason}`);
        return { ...base, status: 'held' };
      }
      if (decision.outcome === 'refused') throw refusedListed(input.policy!, label, decision);
    }
    if (platforms.length === 0) throw nothingToCopy(label, input.origin.host, unlisted);
    const present = input.destination
      ? await presentRemote(input, input.destination, provider, version, platforms, admit)
      : await presentFolder(input, provider, version, folder, platforms, admit);
    if (present !== undefined) return { ...base, ...present, status: 'present' };
    if (input.dryRun) {
      if (admit !== undefined) await admitPlanned(input, provider, version, platforms, admit);
      return base;
    }
    const staged = await stageVersion({
      ...input,
      provider,
      version,
      protocols: entry.protocols ?? [],
      platforms,
      unlisted,
      folder,
      root: input.toDir,
      verify: input.destination === undefined,
      stream: input.destination !== undefined,
      admit,
    });
    const published =
      input.destination && (await publishStaged(input, input.destination, provider, folder, staged.remote));
    return {
      ...base,
      status: 'mirrored',
      platforms: staged.platforms.map(platformName),
      unavailable: [...unavailable, ...staged.missing],
      protocols: staged.protocols,
      origin: staged.origin,
      ...(published ? { destination: published } : {}),
    };
  } catch (error) {
    if (!(error instanceof ProviderError) || error.code === 'interrupted') throw error;
    output.warn(error.message.startsWith(label) ? error.message : `${label}: ${error.message}`);
    errors.push(error);
    if (error instanceof PolicyRefusal) {
      const rule = (error.details?.rule as PolicyRule | undefined) ?? null;
      const policy = { outcome: 'refused' as const, rule, reason: error.message, eligibleAt: null };
      return { ...failed(base, error), status: 'refused', policy };
    }
    return failed(base, error);
  }
}

/** A version none of whose platforms can be copied: none asked for is listed, or none is listed nor asked for. */
function nothingToCopy(label: string, host: string, unlisted: boolean): ProviderError {
  if (unlisted) {
    return new UsageError(`${label}: ${host} lists no platforms for this version, and none was asked for`, {
      hint: 'The protocol does not require the list: name the platforms to copy with --platforms (or platforms: in the manifest), and each is asked of the origin.',
    });
  }
  return new VerificationError(`${label}: none of the platforms asked for is published`, {
    hint: 'Choose platforms the version is published for (--platforms).',
  });
}

/**
 * Publishes a staged folder (its zips in it, or at the origin: `remote`), then removes it (it was only a
 * scratch copy).
 */
async function publishStaged(
  input: MirrorRunInput,
  destination: MirrorDestination,
  provider: OriginProvider,
  folder: string,
  remote: ReadonlyMap<string, RemoteZip> | undefined,
): Promise<{ source: string; wrote: boolean }> {
  try {
    const { wrote } = await destination.publish(folder, input.progress, remote);
    return { source: destinationSource(destination, provider), wrote };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

function failed(base: VersionReport, error: unknown): VersionReport {
  return { ...base, status: 'failed', error: toErrorDocument(error) };
}
