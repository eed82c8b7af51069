/**
 * `provider lock upgrade [path…]` below the command line: moves every lock file's blocks of providers the private
 * registry serves to the newest version the rules admit (./plan.ts, ./choose.ts), with the hashes `terraform init`
 * and `provider lock --registry` record: every version verified as `provider check --download` verifies it (the
 * signature against the registered key, every zip downloaded once and against the signed SHA256SUMS, served
 * `packages`), each version once however many lock files name it. Every lock file is read and every version
 * verified before the first file is written; a version that does not verify leaves its blocks as they are in every
 * file and ends the run with exit 3. Files are written atomically, and one with nothing to change is not touched.
 */
import * as path from 'node:path';
import { writeFileAtomically } from '../../atomicWrite.js';
import { UsageError, VerificationError } from '../../errors.js';
import { parseAge } from '../../config/duration.js';
import { registryPrefix } from '../../lockfile/address.js';
import { canonicalConstraints } from '../../lockfile/constraints.js';
import { lineDiff } from '../../lockfile/diff.js';
import { mergeLock } from '../../lockfile/merge.js';
import { parseLockFile } from '../../lockfile/parse.js';
import { decide, type VersionFacts } from '../../lockfile/admission.js';
import { checkPattern, readPolicyFile, registrySpellings, type ProviderRule } from '../../lockfile/policy.js';
import { entryHashes } from '../../lockfile/source.js';
import type { RunContext } from '../context.js';
import { policyFileOf } from '../policyFile.js';
import { parsePlatforms } from '../lock.js';
import { isNotFound, parseVersionArgument } from '../manage/context.js';
import { mapPool } from '../../pool.js';
import { createProgress } from '../../ui/progress.js';
import type { Session } from '../session.js';
import type { RegistryClient } from '../../registry/http.js';
import type { ProviderAddress } from '../../registry/paths.js';
import type { ServedVersionDate } from './choose.js';
import { defaultCacheDir, openHashCache, type HashCache } from './cache.js';
import { readLockFiles, type LockFileRead } from './files.js';
import { verifyVersion, type Verified } from './verify.js';
import { planUpgrade, type PlannedBlock } from './plan.js';
import { renderUpgrade, upgradeSummary, type FileChange, type UpgradeDocument } from './report.js';
import { appendStepSummary } from '../../ui/githubSummary.js';

/** The flags of `provider lock upgrade`. */
export interface LockUpgradeFlags {
  recursive?: boolean;
  only?: string[];
  to?: string;
  minAge?: string;
  version?: string;
  platform?: string[];
  dryRun?: boolean;
  /** `--cache-dir`: where computed hashes are kept (default: the user's cache folder). */
  cacheDir?: string;
  /** false with `--no-cache`. */
  cache?: boolean;
  /** `--policy`: the policy file whose rules admit versions (docs/supply-chain.md). */
  policy?: string;
}

/** What `provider lock upgrade` is asked to do. */
export interface LockUpgradeOptions extends LockUpgradeFlags {
  paths: string[];
}

/** Runs `provider lock upgrade`; returns 0, or 3 when a version did not verify; throws for bad input (exit 2). */
export async function runLockUpgrade(
  context: RunContext,
  session: Session,
  options: LockUpgradeOptions,
): Promise<number> {
  // Every flag is checked before anything is read.
  const platforms = parsePlatforms(options.platform);
  const only = (options.only ?? []).map((pattern) => checkPattern(pattern, '--only'));
  const rules = {
    to: options.to === undefined ? undefined : canonicalConstraints(options.to, '--to'),
    minAgeMs: options.minAge === undefined ? undefined : parseAge(options.minAge, '--min-age'),
    pin: options.version === undefined ? undefined : parseVersionArgument(options.version),
    now: context.now(),
  };
  const settings = await session.settings();
  const named = policyFileOf(options.policy, settings, context.cwd);
  const policy = named === undefined ? undefined : await readPolicyFile(named.shown, context.cwd, named.file);
  const namespace = settings.namespace ?? settings.organization;
  if (namespace === undefined) {
    throw new UsageError(
      'No organization given: lock files are upgraded to what its private registry serves',
      {
        hint: 'Pass --organization <name> (and --namespace if it differs), set TFE_ORGANIZATION, or put "organization" in .providerrc.json.',
      },
    );
  }
  const cache = hashCacheOf(context, options);
  const files = await readLockFiles(context.cwd, options.paths, options.recursive === true);
  const registry = await session.registry();
  const address = (type: string) => ({
    organization: registry.organization,
    namespace: registry.namespace,
    name: type,
  });
  // The policy reads both spellings of the private registry as one: no spelling escapes a rule.
  const spellings = registrySpellings(registryPrefix(settings.apiHost, namespace));
  const admission =
    policy === undefined
      ? undefined
      : { rules: spellings.rules(policy.providers), address: spellings.address };
  const blocks = await planUpgrade({
    files,
    privatePrefixes: [spellings.canonical, spellings.alias],
    only,
    rules,
    served: (type) =>
      servedVersions(registry.client, address(type), rules.minAgeMs !== undefined || policy !== undefined),
    admit:
      admission === undefined
        ? undefined
        : (at, candidate) =>
            decide(
              admission.rules,
              factsOf(admission.address(at), candidate.version, candidate.createdAt),
              rules.now,
            ),
  });
  const unmoved = blocks.filter((b) => b.none !== undefined);
  if (rules.pin !== undefined && blocks.length > 0 && unmoved.length === blocks.length) {
    throw new UsageError(`${unmoved[0]!.none} for any lock file; none was changed`, {
      hint: 'provider versions list shows the versions served; the version must meet each block’s constraints.',
    });
  }
  // Each version once, however many blocks move to it; a block already at its version stays as it is.
  const verified = new Map<string, Verified>();
  const progress = await createProgress(context.output, {
    stream: context.stderr,
    now: () => context.now().getTime(),
  });
  const ranges = new Map<string, Promise<boolean>>();
  try {
    for (const block of blocks) {
      const key = `${block.type} ${block.to}`;
      if (block.to === undefined || block.to === block.from || verified.has(key)) continue;
      const to = address(block.type);
      const done = await verifyVersion(context, registry.client, to, block.to, cache, { progress, ranges });
      verified.set(key, admission === undefined ? done : admitSigned(admission, block, done, rules.now));
    }
  } finally {
    progress.stop();
  }
  const changes = await mergeAll(files, blocks, verified, platforms);
  const written = options.dryRun === true ? [] : writeAll(changes);
  const document = upgradeDocument(blocks, verified, changes, written, options.dryRun === true);
  document.verified = verifiedVersions(blocks, verified, platforms);
  if (context.output.json) context.output.resultJson(document);
  else renderUpgrade(context.output, document, changes);
  await appendStepSummary(context.output, context.env, upgradeSummary(document));
  return document.ok ? 0 : 3;
}

/** The hash cache of the run: `--cache-dir`, else the user's cache folder; none with `--no-cache`. */
function hashCacheOf(context: RunContext, options: LockUpgradeFlags): HashCache | undefined {
  if (options.cache === false) return undefined;
  const dir =
    options.cacheDir === undefined
      ? defaultCacheDir(context.env, context.homeDir)
      : path.resolve(context.cwd, options.cacheDir);
  return openHashCache(dir);
}

/** What the policy decides with before verification: the version's age counts from its creation in the registry. */
function factsOf(address: string, version: string, createdAt: Date | undefined): VersionFacts {
  return {
    address,
    version,
    published: createdAt === undefined ? undefined : { at: createdAt, by: 'registry' },
  };
}

/**
 * The policy's decision once the version is verified, with what its signature proved (the keys, the SHA-256 of its
 * SHA256SUMS): a pinned key or an approval for other bytes refuses it, and it fails as a version that does not
 * verify (its provider stays in every file, exit 3).
 */
function admitSigned(
  admission: { rules: ProviderRule[]; address: (at: string) => string },
  block: PlannedBlock,
  done: Verified,
  now: Date,
): Verified {
  if ('error' in done) return done;
  const address = admission.address(block.address);
  const facts = { ...factsOf(address, block.to!, block.createdAt), ...done.signed };
  const decision = decide(admission.rules, facts, now);
  if (decision.outcome === 'admitted') return { ...done, admitted: decision.reason };
  return {
    error: new VerificationError(
      `${address} ${block.to} is ${decision.outcome} by the policy (${decision.rule}): ${decision.reason}`,
      {
        hint: 'Nothing of it was written. Check the policy file (keys, approvals) against what the registry serves; provider approve records an approval for the bytes served now.',
        details: { rule: decision.rule },
      },
    ),
  };
}

/**
 * The versions the registry serves for a provider, with their `created-at`: from the versions list when it gives
 * whole resources; HCP Terraform's tag-aware list gives only versions and tags, and then, for `--min-age`, each
 * version is read for its date.
 */
async function servedVersions(
  client: RegistryClient,
  address: ProviderAddress,
  dated: boolean,
): Promise<ServedVersionDate[] | undefined> {
  const { getVersion, listVersionEntries } = await import('../../registry/versions.js');
  let entries;
  try {
    entries = await listVersionEntries(client, address);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  return mapPool(entries, 4, async ({ version, resource }) => {
    const found = resource ?? (dated ? await getVersion(client, address, version) : undefined);
    const a = found?.attributes;
    const created = a?.['created-at'];
    return {
      version,
      createdAt: created === undefined ? undefined : new Date(created),
      complete: a === undefined ? undefined : a['shasums-uploaded'] && a['shasums-sig-uploaded'],
    };
  });
}

/** Every file's blocks merged, one after another (the file parsed again between two); the files that change. */
async function mergeAll(
  files: LockFileRead[],
  blocks: PlannedBlock[],
  verified: Map<string, Verified>,
  platforms: string[] | undefined,
): Promise<FileChange[]> {
  // A provider with a version that did not verify stays as it is in every file, whatever its other blocks' versions.
  const failed = new Set(blocks.filter((b) => failure(b, verified) !== undefined).map((b) => b.type));
  const changes: FileChange[] = [];
  for (const file of files) {
    let parsed = file.parsed;
    for (const block of blocks.filter((b) => b.file === file && !failed.has(b.type))) {
      const done = block.to === block.from ? undefined : verified.get(`${block.type} ${block.to}`);
      if (done === undefined || 'error' in done) continue;
      const hashes = entryHashes(done.material, platforms);
      const merged = mergeLock(parsed, { address: block.address, version: block.to!, hashes }, file.shown);
      if (merged.outcome !== 'unchanged') parsed = await parseLockFile(merged.text, file.shown);
    }
    if (parsed.text !== file.parsed.text)
      changes.push({ file, text: parsed.text, diff: lineDiff(file.parsed.text, parsed.text) });
  }
  return changes;
}

/** The error of the version a block moves to, when it did not verify. */
function failure(block: PlannedBlock, verified: Map<string, Verified>): VerificationError | undefined {
  const done = block.to === undefined ? undefined : verified.get(`${block.type} ${block.to}`);
  return done !== undefined && 'error' in done ? done.error : undefined;
}

/** Writes every changed file atomically, its mode kept; returns the files written, as shown. */
function writeAll(changes: FileChange[]): string[] {
  const written: string[] = [];
  for (const { file, text } of changes) {
    try {
      writeFileAtomically(file.file, text, { mode: file.mode });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      const done = written.length === 0 ? 'no file was written' : `written before it: ${written.join(', ')}`;
      throw new UsageError(`${file.shown} cannot be written (${code}); ${done}`, {
        hint: 'Check that the file and its folder are writable, then run the same command again.',
        details: { file: file.shown, written },
        cause: error,
      });
    }
    written.push(file.shown);
  }
  return written;
}

/** The versions verified, for the document: the platforms whose `h1:` is written, and where it came from. */
function verifiedVersions(
  blocks: PlannedBlock[],
  verified: Map<string, Verified>,
  platforms: string[] | undefined,
): UpgradeDocument['verified'] {
  // A version whose provider stayed (another of its versions did not verify) is written nowhere: not listed.
  const failed = new Set(blocks.filter((b) => failure(b, verified) !== undefined).map((b) => b.type));
  return [...verified.entries()].flatMap(([key, v]) => {
    const [type = '', version = ''] = key.split(' ');
    if ('error' in v || failed.has(type)) return [];
    const served = v.material.platforms.map((p) => `${p.os}_${p.arch}`);
    return [
      {
        address: blocks.find((b) => b.type === type)!.address,
        version,
        platforms: platforms === undefined ? served : served.filter((p) => platforms.includes(p)),
        h1: v.cached ? ('cache' as const) : ('computed' as const),
        ...(v.admitted === undefined ? {} : { policy: v.admitted }),
      },
    ];
  });
}

/** The run's `--json` document. */
function upgradeDocument(
  blocks: PlannedBlock[],
  verified: Map<string, Verified>,
  changes: FileChange[],
  written: string[],
  dryRun: boolean,
): UpgradeDocument {
  const changed = new Set(changes.map((c) => c.file.shown));
  const failedTypes = new Set(blocks.filter((b) => failure(b, verified) !== undefined).map((b) => b.type));
  const failed = [...verified.entries()].flatMap(([key, v]) => {
    if (!('error' in v)) return [];
    const [type = '', version = ''] = key.split(' ');
    const address = blocks.find((b) => b.type === type)!.address;
    return [{ address, version, message: v.error.message }];
  });
  return {
    ok: failed.length === 0 && blocks.every((b) => b.none === undefined),
    dryRun,
    verified: [],
    files: [...new Set(blocks.map((b) => b.file.shown))].map((file) => ({
      file,
      changed: changed.has(file),
      written: written.includes(file),
    })),
    blocks: blocks.map((b) => {
      const error = failure(b, verified);
      const stays = failedTypes.has(b.type) || b.to === undefined;
      const reason =
        b.none ??
        (error === undefined && stays ? 'another version of this provider did not verify' : undefined);
      return {
        file: b.file.shown,
        line: b.line,
        address: b.address,
        from: b.from,
        to: stays ? b.from : b.to!,
        moved: !stays && b.to !== b.from,
        held: b.held,
        ...(reason === undefined ? {} : { reason }),
        ...(error === undefined ? {} : { error: error.message }),
      };
    }),
    failed,
  };
}
