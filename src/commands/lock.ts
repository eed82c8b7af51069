/**
 * `provider lock [release-dir]` below the command line: writes or updates the provider's block in a
 * `.terraform.lock.hcl` with the hashes of every platform of a version, which `terraform init` alone cannot
 * record (it computes `h1:` only for the platform it runs on). Offline: the release is verified as `verify
 * --offline` does (same checks, same exit codes), against a public key given locally; no token, no request. The
 * lock file is read and parsed before the release is hashed (a regular file of at most 8 MiB, else exit 2), and
 * written only after everything passed, atomically (a temporary file renamed over it, its mode kept; a link is
 * replaced, never written through).
 */
import * as path from 'node:path';
import { writeFileAtomically } from '../atomicWrite.js';
import { UsageError } from '../errors.js';
import { lockAddress } from '../lockfile/address.js';
import { canonicalConstraints } from '../lockfile/constraints.js';
import { lineDiff } from '../lockfile/diff.js';
import { mergeLock, type MergeResult } from '../lockfile/merge.js';
import { LockFileError, parseLockFile, type ParsedLockFile } from '../lockfile/parse.js';
import { entryHashes, releaseMaterial, type LockMaterial, type LockSource } from '../lockfile/source.js';
import { checkConsumerView, type ConsumerCheckReport } from '../consumer/check.js';
import type { ConsumerCheckInput } from '../consumer/types.js';
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import { openVersion } from './manage/context.js';
import {
  FileTooLargeError,
  NotRegularFileError,
  readRegularCapped,
  SMALL_FILE_CAPS,
  tooLargeMessage,
} from '../release/smallFile.js';
import { platformName } from '../terraform/names.js';
import { successMark } from '../ui/glyphs.js';
import type { Output } from '../ui/output.js';
import type { RunContext } from './context.js';
import type { Session } from './session.js';
import { KEY_VARIABLE, verifyWithFlags, type VerifyFlags } from './verify.js';

/** The flags of `provider lock`. */
export interface LockFlags extends Pick<VerifyFlags, 'key' | 'version' | 'protocols' | 'dearmorSignature'> {
  lockFile?: string;
  platform?: string[];
  constraints?: string;
  dryRun?: boolean;
  /** Take the hashes from what the registry serves (downloading every zip) instead of a local release. */
  registry?: boolean;
}

/** What `provider lock` is asked to do: the flags and the release folder. */
export interface LockOptions extends LockFlags {
  dir: string;
  /** Whether the release folder was given on the command line (it may not be with `--registry`). */
  dirGiven?: boolean;
}

/** The lock file written when `--lock-file` is not given (relative to the working directory). */
export const DEFAULT_LOCK_FILE = '.terraform.lock.hcl';

const PLATFORM = /^[a-z0-9]+_[a-z0-9]+$/;

/** The `--json` document of `provider lock`. */
export interface LockDocument {
  ok: true;
  lockFile: string;
  /** `created`, `updated` or `unchanged` (with `--dry-run`: what would happen). */
  result: MergeResult['outcome'];
  dryRun: boolean;
  written: boolean;
  provider: {
    address: string;
    version: string;
    constraints: string | null;
    hashes: string[];
  };
  /** The platforms whose `h1:` the entry records. */
  platforms: string[];
  /** The version the file held before, when it had this provider and it differed (the block was replaced). */
  previousVersion: string | null;
}

/** Runs `provider lock [dir]`; returns the exit code (0) or throws. */
export async function runLock(context: RunContext, session: Session, options: LockOptions): Promise<number> {
  const { output, cwd } = context;
  const shown = options.lockFile ?? DEFAULT_LOCK_FILE;
  if (shown.trim() === '')
    throw new UsageError('--lock-file was given an empty value', { hint: 'Give a path.' });
  const lockFile = path.resolve(cwd, shown);
  const platforms = parsePlatforms(options.platform);
  const constraints =
    options.constraints === undefined ? undefined : canonicalConstraints(options.constraints);

  const settings = await session.settings();
  const namespace = settings.namespace;
  if (namespace === undefined) {
    throw new UsageError(
      `No organization given: the lock file records the provider as ${settings.apiHost.host}/<organization>/<name>`,
      {
        hint: 'Pass --organization <name> (and --namespace if it differs), set TFE_ORGANIZATION, or put "organization" in .providerrc.json.',
      },
    );
  }
  if (options.registry === true) {
    if (options.dirGiven === true) {
      throw new UsageError(`Give either a release folder (${options.dir}) or --registry, not both`, {
        hint: 'provider lock <dir> locks a local release offline; provider lock --registry --version <v> locks what the registry serves.',
      });
    }
    if (options.version === undefined) {
      throw new UsageError('provider lock --registry needs --version: the version to lock', {
        hint: 'Pass --version 1.2.3 (provider versions list shows the published ones).',
      });
    }
  } else if (
    options.key === undefined &&
    !context.env[KEY_VARIABLE]?.trim() &&
    settings.keyFile === undefined
  ) {
    throw new UsageError('provider lock checks the release signature offline, and no public key was given', {
      hint: `Pass --key <armored-public-key-file>, set ${KEY_VARIABLE} to the armored key, or put "keyFile" in .providerrc.json.`,
    });
  }
  // The lock file is read and parsed first: a file that cannot be updated should not wait for hashing.
  const existing = await readLockFile(lockFile, shown);

  const source =
    options.registry === true
      ? registrySource(context, session, options.version!)
      : localReleaseSource(context, session, options);
  const material = await source.load();
  const address = lockAddress(settings.apiHost, namespace, material.name);
  const hashes = entryHashes(material, platforms);
  const merged = mergeLock(
    existing?.parsed,
    { address, version: material.version, hashes, constraints },
    shown,
  );

  const write = options.dryRun !== true && merged.outcome !== 'unchanged';
  if (write) writeLockFile(lockFile, merged.text, existing?.mode);
  const chosen = platforms ?? material.platforms.map(platformName);
  const previous = merged.previous?.entry.version;
  const document: LockDocument = {
    ok: true,
    lockFile: shown,
    result: merged.outcome,
    dryRun: options.dryRun === true,
    written: write,
    provider: {
      address: merged.lock.address,
      version: merged.lock.version,
      constraints: merged.lock.constraints ?? null,
      hashes: merged.lock.hashes,
    },
    platforms: material.platforms.map(platformName).filter((p) => chosen.includes(p)),
    previousVersion: previous !== undefined && previous !== material.version ? previous : null,
  };
  if (output.json) output.resultJson(document);
  else renderLock(output, document, merged, material);
  return 0;
}

/**
 * The local-release source: the release verified as `verify --offline` verifies it (exit 2 or 3 when it does
 * not hold up), its platforms' hashes and its SHA256SUMS lines. (A registry source would sit beside it.)
 */
export function localReleaseSource(context: RunContext, session: Session, options: LockOptions): LockSource {
  return {
    label: `the release in ${options.dir}`,
    load: async () => {
      const { release } = await verifyWithFlags(context, session, { ...options, offline: true }, 'lock');
      return releaseMaterial(release);
    },
  };
}

/**
 * The registry source: what `terraform providers lock` would get from the registry, checked as `provider check
 * --download` checks it (the signature against the registered key, every filename and shasum against the signed
 * SHA256SUMS, every zip downloaded to a temporary file, hashed and deleted; served `packages` verified). Any
 * problem is exit 3 and the lock file is not touched. The `zh:` lines come from the signed SHA256SUMS, as
 * Terraform's `AcceptableHashes` takes them.
 */
export function registrySource(context: RunContext, session: Session, versionText: string): LockSource {
  return {
    label: 'what the registry serves',
    load: async () => {
      const { provider, version } = await openVersion(context, session, versionText);
      const report = await hashServedPackages(
        context,
        provider.client,
        provider.address,
        version,
        provider.source,
      );
      return {
        name: provider.address.name,
        version,
        platforms: report.platforms.map((p) => ({ os: p.os, arch: p.arch, hashes: p.hashes })),
        shasums: report.shasums.zh.map((hash) => hash.slice('zh:'.length)),
      };
    },
  };
}

/**
 * Every package of a version downloaded and hashed as `terraform providers lock` would: the consumer check with
 * downloads and lock hashes (`shown` names the provider in the line that says so first).
 */
export function hashServedPackages(
  context: RunContext,
  client: RegistryClient,
  address: ProviderAddress,
  version: string,
  shown: string,
  /**
   * For a run that checks several versions: where the downloads are shown (its batch's line then says what is
   * downloaded), what the run knows of each host's ranges, and the `h1:`s already known (a cache).
   */
  run: Pick<ConsumerCheckInput, 'progress' | 'ranges' | 'knownH1'> = {},
): Promise<ConsumerCheckReport> {
  if (run.progress === undefined)
    context.output.info(
      `Downloading every package of ${shown} ${version} to hash it, as terraform providers lock would`,
    );
  return checkConsumerView({
    client,
    address,
    version,
    output: context.output,
    download: true,
    lockHashes: true,
    tmpDir: context.tmpDir,
    signal: context.signal,
    now: context.now,
    ...run,
  });
}

/** The `--platform` values (repeatable, comma-separated too), checked; undefined when none is given. */
export function parsePlatforms(values: string[] | undefined): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const out: string[] = [];
  for (const value of values.flatMap((v) => v.split(','))) {
    const platform = value.trim();
    if (!PLATFORM.test(platform)) {
      throw new UsageError(`--platform ${JSON.stringify(value)} is not a platform`, {
        hint: 'Write it as terraform providers lock -platform does: <os>_<arch>, e.g. linux_amd64 or darwin_arm64.',
      });
    }
    if (!out.includes(platform)) out.push(platform);
  }
  return out;
}

/**
 * The lock file as read: its parsed text and mode, or undefined when there is none yet. Only a regular file of
 * sane size is read (a link to /dev/zero or a named pipe is refused at once, exit 2, rather than read forever).
 */
export async function readLockFile(
  file: string,
  shown: string,
  /** What to do about a path that cannot be read, for the command reading it. */
  give = 'Give --lock-file the path of a regular .terraform.lock.hcl file (it is created when missing).',
): Promise<{ parsed: ParsedLockFile; mode: number } | undefined> {
  let bytes: Buffer;
  let mode: number;
  try {
    ({ bytes, mode } = await readRegularCapped(file, SMALL_FILE_CAPS.lockFile));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    const details = { file: shown };
    if (error instanceof NotRegularFileError) {
      throw new UsageError(`${shown} is ${error.kind}, not a regular file: it was not read or changed`, {
        hint: give,
        details: { ...details, kind: error.kind },
      });
    }
    if (error instanceof FileTooLargeError) {
      throw new UsageError(`${tooLargeMessage(shown, error, 'a lock file')}: it was not read or changed`, {
        hint: give,
        details: { ...details, bytes: error.bytes, limit: error.limit },
      });
    }
    throw new UsageError(`${shown} cannot be read (${code ?? (error as Error).message})`, {
      hint: give,
      details,
      cause: error,
    });
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new LockFileError(`${shown} is not UTF-8 text`, {
      hint: 'A lock file is UTF-8 text; move this one aside to start a new one. It was not changed.',
      details: { file: shown },
    });
  }
  return { parsed: await parseLockFile(text, shown), mode };
}

/**
 * Writes `text` to `file` atomically (src/atomicWrite.ts: a temporary file in the same folder renamed over it);
 * `mode` kept. A symbolic link at `file` is replaced by the new file, never written through: what it points to (a
 * file outside the project, a device) is left alone.
 */
function writeLockFile(file: string, text: string, mode: number | undefined): void {
  try {
    writeFileAtomically(file, text, mode === undefined ? {} : { mode });
  } catch (error) {
    throw new UsageError(`${file} cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'})`, {
      hint: 'Check that its folder exists and is writable.',
      details: { file },
      cause: error,
    });
  }
}

function renderLock(
  output: Output,
  document: LockDocument,
  merged: MergeResult,
  material: LockMaterial,
): void {
  const { provider, lockFile } = document;
  if (document.dryRun) {
    const lines =
      merged.previous === undefined
        ? merged.block.split(/\r?\n/).map((l) => `+ ${l}`)
        : lineDiff(merged.previous.block, merged.block);
    for (const line of lines) output.result(line);
    output.result('');
  }
  const h1 = document.platforms.length;
  const zh = material.shasums.length;
  const what = `${provider.address} ${provider.version} (h1: for ${h1} platform${h1 === 1 ? '' : 's'}, zh: for ${zh} file${zh === 1 ? '' : 's'} of SHA256SUMS)`;
  const replaced = document.previousVersion === null ? '' : `, replacing ${document.previousVersion}`;
  const mark = successMark(output.color);
  if (document.result === 'unchanged') {
    output.result(`${mark} ${lockFile} unchanged: it already records ${what}`);
  } else if (document.dryRun) {
    output.result(
      `Dry run: ${lockFile} would be ${document.result} with ${what}${replaced}; nothing was written`,
    );
  } else {
    output.result(
      `${mark} ${document.result === 'created' ? 'Created' : 'Updated'} ${lockFile}: ${what}${replaced}`,
    );
  }
}
