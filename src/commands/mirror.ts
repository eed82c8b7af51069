/**
 * `provider mirror` below the command line: the flags checked before any request, the destination (a folder with
 * `--to-dir`, else the private registry of the run's session, with its organization and token), the origin
 * (`--from`, read with the host's own credentials when there are any, as Terraform does), then the run
 * (src/mirror/run.ts) and its report. A version that fails ends the run with its exit code (3 for what does not
 * verify), after the others were mirrored.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { parseHostname, resolveToken, type ApiHost } from '../config/index.js';
import {
  ApiError,
  HeldError,
  UsageError,
  VerificationError,
  type ProviderError,
  type ProviderErrorOptions,
} from '../errors.js';
import { PolicyRefusal, type MirrorPolicy } from '../mirror/admit.js';
import { sourceChanges } from '../mirror/changes.js';
import { DEFAULT_ORIGIN, type OriginProvider } from '../mirror/origin.js';
import { mirrorDocument, renderMirror, type MirrorDocument } from '../mirror/report.js';
import type { MirrorDestination, MirrorTarget } from '../mirror/run.js';
import { parsePlatforms, parseProviders, versionSelector } from '../mirror/select.js';
import type { PublishTuning } from '../publish/tuning.js';
import { createProgress } from '../ui/progress.js';
import type { RunContext } from './context.js';
import { policyFileOf } from './policyFile.js';
import type { Session, SessionCore } from './session.js';

/** The flags of `provider mirror`. */
export interface MirrorFlags {
  from?: string;
  versions?: string;
  platforms?: string;
  dryRun?: boolean;
  toDir?: string;
  manifest?: string;
  policy?: string;
}

/** What `provider mirror` is asked to do: the flags, the providers named, publish's tuning (from the environment). */
export interface MirrorOptions extends MirrorFlags {
  providers: string[];
  tuning: PublishTuning;
}

/** Runs `provider mirror <namespace>/<type>…`; returns 0, or throws the first failed version's kind of error. */
export const runMirror: SessionCore<MirrorOptions> = async (context, session, options) => {
  const { output } = context;
  const { targets, from } = await mirrorTargets(context, options);
  const providers = targets.map((t) => t.provider);
  const apiHost = parseHostname(options.from ?? from ?? DEFAULT_ORIGIN, '--from');
  const toDir = options.toDir === undefined ? undefined : nonEmpty(options.toDir, '--to-dir');
  const policy = await mirrorPolicy(context, session, options.policy);
  let destination: MirrorDestination | undefined;
  if (toDir === undefined) {
    refuseCollisions(providers, await session.settings().then((s) => s.organization ?? '<organization>'));
    const { privateDestination } = await import('./mirrorDestination.js');
    destination = await privateDestination(context, session, options.tuning);
  }
  const [{ createOrigin }, { createDownloader }, { runMirror: run }] = await Promise.all([
    import('../mirror/origin.js'),
    import('../registry/downloads.js'),
    import('../mirror/run.js'),
  ]);
  // The origin is read, and its files downloaded, with publish's tuning: PROVIDER_HTTP_TIMEOUT for an answer
  // to start, between two bytes and (for a document) to come whole; PROVIDER_RETRY_DELAY for the backoff.
  const { tuning } = options;
  const origin = createOrigin({
    base: new URL(`${apiHost.baseUrl}/`),
    output,
    signal: context.signal,
    token: originToken(context, apiHost),
    retry: tuning.retry,
    timeoutMs: tuning.requestTimeoutMs,
  });
  // Without --to-dir, each version is staged in a scratch folder, published from it, and removed.
  const root = toDir === undefined ? await mkdtemp(path.join(context.tmpDir, 'provider-mirror-')) : toDir;
  const progress = await createProgress(output, {
    stream: context.stderr,
    now: () => context.now().getTime(),
  });
  try {
    const outcome = await run({
      ...{ origin, targets, destination, output, progress, signal: context.signal },
      originUrl: apiHost.baseUrl,
      toDir: path.resolve(context.cwd, root),
      dryRun: options.dryRun === true,
      policy: policy && (await destinationRules(policy, destination)),
      cwd: context.cwd,
      downloader: createDownloader({
        output,
        signal: context.signal,
        baseDelayMs: tuning.retry.baseDelayMs,
        timeoutMs: tuning.requestTimeoutMs,
      }),
      now: context.now,
    });
    const document = mirrorDocument({
      origin: apiHost.host,
      toDir: toDir === undefined ? null : path.resolve(context.cwd, toDir),
      destination: destination === undefined ? null : `${destination.host}/${destination.organization}`,
      dryRun: options.dryRun === true,
      providers: outcome.providers,
      changes: options.dryRun === true ? [] : sourceChanges(outcome.providers, options.versions),
    });
    if (outcome.errors.length > 0) {
      if (!output.json) renderMirror(output, document);
      throw failure(outcome.errors, document);
    }
    if (document.summary.held > 0) {
      if (!output.json) renderMirror(output, document);
      throw heldVersions(document);
    }
    if (output.json) output.resultJson(document);
    else renderMirror(output, document);
    return 0;
  } finally {
    progress.stop();
    if (toDir === undefined) await rm(root, { recursive: true, force: true });
  }
};

/**
 * The providers to mirror, each with its versions and platforms: from the arguments and `--versions`/`--platforms`,
 * or from `--manifest` (which then holds them all: giving both is refused, before any request).
 */
async function mirrorTargets(
  context: RunContext,
  options: MirrorOptions,
): Promise<{ targets: MirrorTarget[]; from: string | undefined }> {
  if (options.manifest === undefined) {
    const select = versionSelector(options.versions);
    const platforms = parsePlatforms(options.platforms);
    const targets = parseProviders(options.providers).map((provider) => ({ provider, select, platforms }));
    return { targets, from: undefined };
  }
  const given = [
    ...(options.providers.length > 0 ? ['provider arguments'] : []),
    ...(options.versions === undefined ? [] : ['--versions']),
    ...(options.platforms === undefined ? [] : ['--platforms']),
  ];
  if (given.length > 0) {
    throw new UsageError(
      `--manifest names the providers, their versions and platforms: ${given.join(', ')} too is ambiguous`,
      {
        hint: 'Put every provider in the manifest (versions:, latest:, platforms: per entry), or leave --manifest out.',
      },
    );
  }
  const manifest = nonEmpty(options.manifest, '--manifest');
  const { readManifest } = await import('../mirror/manifest.js');
  return readManifest(path.resolve(context.cwd, manifest), manifest);
}

function nonEmpty(value: string, flag: string): string {
  if (value.trim() === '')
    throw new UsageError(`${flag} was given an empty value`, { hint: `Name a folder: ${flag} ./mirror` });
  return value;
}

/** Two origins' providers of one type would be one provider in the organization: refused, with the reason. */
function refuseCollisions(providers: OriginProvider[], organization: string): void {
  const byType = new Map<string, OriginProvider>();
  for (const p of providers) {
    const other = byType.get(p.type);
    if (other !== undefined) {
      throw new UsageError(
        `${other.namespace}/${p.type} and ${p.namespace}/${p.type} would both become ${organization}/${p.type}: a private registry holds one provider per type in an organization`,
        {
          hint: 'Mirror one of them here, and the other into another organization (or to a folder with --to-dir).',
        },
      );
    }
    byType.set(p.type, p);
  }
}

/** The run's error: of the first failed version's kind (exit 3 for verification, 5 for a conflict…), with the report. */
function failure(errors: ProviderError[], document: MirrorDocument): ProviderError {
  const first = errors[0]!;
  const versions = document.providers.flatMap((p) => p.versions);
  const failed = document.providers.flatMap((p) =>
    p.error !== null
      ? [p.source]
      : p.versions
          .filter((v) => v.status === 'failed' || v.status === 'refused')
          .map((v) => `${p.source} ${v.version}${v.status === 'refused' ? ' (refused by the policy)' : ''}`),
  );
  const message = `${failed.length === 1 ? 'One' : failed.length} failed and nothing of ${failed.length === 1 ? 'it' : 'them'} was written: ${failed.join(', ')}`;
  // What the rest of the run did, as it is: nothing is mirrored by a dry run, and a refusal is not retried.
  const done = versions.filter((v) => v.status === 'mirrored' || v.status === 'present').length;
  const { held, planned } = document.summary;
  const others = [
    ...(done > 0 ? [`${done} other version${done === 1 ? '' : 's'} mirrored or already there`] : []),
    ...(planned > 0 ? [`${planned} planned`] : []),
    ...(held > 0 ? [`${held} held by the policy`] : []),
    ...(errors.some((e) => !(e instanceof PolicyRefusal))
      ? ['the same command again mirrors what is missing']
      : []),
  ];
  const options: ProviderErrorOptions = {
    hint: `${first.message}${first.hint === undefined ? '' : ` — ${first.hint}`}${others.length === 0 ? '' : ` (${others.join('; ')})`}`,
    details: { report: document },
  };

  if (first instanceof ApiError) return new ApiError(message, { ...options, status: first.status });
  if (first instanceof VerificationError) return new VerificationError(message, options);
  const Kind = first.constructor as new (message: string, options: ProviderErrorOptions) => ProviderError;
  return new Kind(message, options);
}

/** The run's policy file (`--policy`, else the configuration's `policy`), read before any request. */
async function mirrorPolicy(
  context: RunContext,
  session: Session,
  flag: string | undefined,
): Promise<MirrorPolicy | undefined> {
  const named = policyFileOf(flag, await session.settings(), context.cwd);
  if (named === undefined) return undefined;
  const { readPolicyFile } = await import('../lockfile/policy.js');
  const read = await readPolicyFile(named.shown, context.cwd, named.file);
  return { file: named.shown, rules: read.providers };
}

/** The rules as the destination reads them: `localterraform.com/<org>` is the organization's registry too. */
async function destinationRules(
  policy: MirrorPolicy,
  destination: MirrorDestination | undefined,
): Promise<MirrorPolicy> {
  if (destination === undefined) return policy;
  // Loaded already: the policy file was read with it.
  const { registrySpellings } = await import('../lockfile/policy.js');
  return { ...policy, rules: registrySpellings(destination.lockPrefix).rules(policy.rules) };
}

/** Versions the policy holds, and nothing failed: exit 7, with the report and the dates they become eligible. */
function heldVersions(document: MirrorDocument): HeldError {
  const held = document.providers.flatMap((p) =>
    p.versions
      .filter((v) => v.status === 'held')
      .map((v) => {
        const until = v.policy?.eligibleAt;
        return `${p.source} ${v.version}${until === null || until === undefined ? '' : ` (eligible ${until})`}`;
      }),
  );
  return new HeldError(
    `The policy holds ${held.length === 1 ? 'one version' : `${held.length} versions`}, and nothing of ${held.length === 1 ? 'it' : 'them'} was written: ${held.join(', ')}`,
    {
      hint: 'Nothing failed: a version in a cooldown is mirrored by a run after the date it becomes eligible, and one that wants an approval once provider approve records it (docs/supply-chain.md).',
      details: { report: document },
    },
  );
}

/**
 * The origin host's own credentials (`TF_TOKEN_<host>`, credentials.tfrc.json), sent to its registry as
 * Terraform sends them; TFE_TOKEN is the destination's and is not sent. None: anonymous reads.
 */
export function originToken(context: RunContext, apiHost: ApiHost): string | undefined {
  const env = { ...context.env, TFE_TOKEN: undefined };
  try {
    return resolveToken({ apiHost, env, homeDir: context.homeDir }).token;
  } catch (error) {
    if (error instanceof UsageError) return undefined;
    throw error;
  }
}
