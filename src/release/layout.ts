/**
 * Finding the release in a directory: which provider, which version, which files. Anything that does not
 * look like a release file is ignored (goreleaser's `artifacts.json`, `metadata.json`, build folders).
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UsageError, VerificationError } from '../errors.js';
import { comparePlatforms, isKnownOs, isKnownPlatform, isUnusualPlatform } from '../terraform/names.js';
import {
  FILE_PREFIX,
  mirroredFileNames,
  parseReleaseFileName,
  releaseFileNames,
  type ParsedFileName,
} from './filenames.js';
import { normalizeVersion } from './version.js';

/** The files of one release, found by name (contents not read yet). */
export interface ReleaseLayout {
  /** Absolute path. */
  dir: string;
  name: string;
  /** Strict semver without `v`. */
  version: string;
  platforms: { filename: string; os: string; arch: string }[];
  shasums: string;
  signature: string;
  manifest?: string;
  /**
   * A release `provider mirror` copied (its record stands in for the manifest): its SHA256SUMS is the origin's,
   * listing platforms and a manifest the folder may not hold.
   */
  mirrored?: boolean;
  /** Every regular file in the directory (to check that listed files exist). */
  files: Set<string>;
  warnings: string[];
}

/** Which release to pick when the directory holds several (`--name`, `--version`). */
export interface LayoutSelection {
  name?: string | undefined;
  version?: string | undefined;
  /** The command reading it (`verify`, `publish`), named in the hint of a missing folder; default `verify`. */
  command?: string | undefined;
  /** Files taken as in the folder though they are not: zips at links (./remoteZip.ts). */
  remote?: readonly string[] | undefined;
}

const GORELEASER_HINT =
  'goreleaser writes every file a provider release needs; run `goreleaser release --clean`.';

/** Reads a directory's file names and picks the one release in it. */
export async function readLayout(dir: string, select: LayoutSelection): Promise<ReleaseLayout> {
  const files = await listFiles(dir, select.command ?? 'verify');
  for (const name of select.remote ?? []) files.add(name);
  const parsed = releaseFiles(files);
  if (parsed.length === 0) {
    throw new UsageError(
      `No provider release found in ${dir}: no file is named ${FILE_PREFIX}<name>_<version>_…`,
      {
        hint: `Give the folder goreleaser wrote the release to (default ./dist). ${GORELEASER_HINT}`,
        details: { dir },
      },
    );
  }
  const name = pickName(parsed, select.name, dir);
  const ofName = parsed.filter((p) => p.info.name === name);
  const rawVersion = pickVersion(ofName, select.version, dir);
  const mine = ofName.filter((p) => p.info.version === rawVersion);
  const version = normalizeVersion(rawVersion);
  if (version === undefined) {
    const example = mine[0]?.filename ?? '';
    throw new VerificationError(`${example}: version "${rawVersion}" is not a semantic version`, {
      hint: 'Tag the release MAJOR.MINOR.PATCH (e.g. v1.2.3) and build it again; the registry accepts only semver.',
      details: { file: example, version: rawVersion },
    });
  }

  const warnings: string[] = [];
  const expected = releaseFileNames(name, rawVersion);
  const platforms: ReleaseLayout['platforms'] = [];
  for (const { filename, info } of mine) {
    if (info.kind === 'odd-zip') {
      throw new VerificationError(
        `${filename} does not follow ${FILE_PREFIX}<name>_<version>_<os>_<arch>.zip`,
        {
          hint: 'Name each platform archive as goreleaser does (archives.name_template: {{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}).',
          details: { file: filename },
        },
      );
    }
    if (info.kind !== 'platform') continue;
    checkPlatform(filename, info, warnings);
    platforms.push({ filename, os: info.os, arch: info.arch });
  }
  if (!files.has(expected.shasums)) {
    throw new VerificationError(`${expected.shasums} is missing from ${dir}`, {
      hint: `The release needs a SHA256SUMS file listing every archive. ${GORELEASER_HINT}`,
      details: { file: expected.shasums },
    });
  }
  if (!files.has(expected.signature)) {
    const armored = [`${expected.shasums}.asc`, `${expected.shasums}.gpg`].find((f) => files.has(f));
    throw new VerificationError(`${expected.signature} is missing from ${dir}`, {
      hint:
        armored !== undefined
          ? `Found ${armored} instead: the registry needs a binary detached signature named ${expected.signature} (gpg --detach-sign ${expected.shasums}).`
          : `Sign SHA256SUMS with a binary detached signature: gpg --detach-sign ${expected.shasums} (goreleaser's signs section does this).`,
      details: { file: expected.signature },
    });
  }
  if (platforms.length === 0) {
    throw new VerificationError(
      `${dir} holds no platform archive ${FILE_PREFIX}${name}_${rawVersion}_<os>_<arch>.zip`,
      {
        hint: GORELEASER_HINT,
        details: { dir },
      },
    );
  }
  platforms.sort(comparePlatforms);
  const layout: ReleaseLayout = { dir, name, version, platforms, files, warnings, ...expected };
  if (!files.has(expected.manifest)) delete layout.manifest;
  const record = mirroredFileNames(name, rawVersion).record;
  if (layout.manifest === undefined && files.has(record))
    Object.assign(layout, { manifest: record, mirrored: true });
  return layout;
}

/**
 * Throws the "no release folder here" UsageError unless `dir` is a folder that can be listed. Commands that
 * read a release call it before anything else: run in the wrong folder, every other complaint (no key, no
 * organization, no token) would be beside the point.
 */
export async function requireReleaseFolder(dir: string, command: string): Promise<void> {
  await fs.readdir(dir).catch((error: unknown) => {
    throw folderError(dir, error, command);
  });
}

/**
 * The name of the one provider whose release files are in `dir` (as `publish` finds it), or undefined when
 * the folder is absent or unreadable, holds no release file, or holds releases of several providers.
 */
export async function soleProviderName(dir: string): Promise<string | undefined> {
  const files = await listFiles(dir, 'verify').catch(() => undefined);
  if (files === undefined) return undefined;
  const names = providerNames(releaseFiles(files));
  return names.length === 1 ? names[0] : undefined;
}

/** The folder's absence, in the words of the command that looked for it, naming the path it tried. */
function folderError(dir: string, error: unknown, command: string): UsageError {
  const code = (error as NodeJS.ErrnoException).code;
  const message =
    code === 'ENOENT'
      ? `No release folder here: ${dir} does not exist`
      : code === 'ENOTDIR'
        ? `No release folder here: ${dir} is not a folder`
        : `The release folder ${dir} cannot be read (${code})`;
  return new UsageError(message, {
    hint: `Run provider ${command} where goreleaser wrote ./dist (the project's root), or name the release folder: provider ${command} <folder>.`,
    details: { dir },
    cause: error,
  });
}

/** The regular files (or links to them) directly in `dir`. */
async function listFiles(dir: string, command: string): Promise<Set<string>> {
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (error) {
    throw folderError(dir, error, command);
  }
  const files = new Set<string>();
  for (const entry of entries) {
    if (entry.isFile()) files.add(entry.name);
    else if (entry.isSymbolicLink()) {
      const stat = await fs.stat(path.join(dir, entry.name)).catch(() => undefined);
      if (stat?.isFile()) files.add(entry.name);
    }
  }
  return files;
}

type Parsed = { filename: string; info: ParsedFileName };

/** The files whose names are release file names, parsed. */
function releaseFiles(files: Set<string>): Parsed[] {
  return [...files].flatMap((filename) => {
    const info = parseReleaseFileName(filename);
    return info ? [{ filename, info }] : [];
  });
}

/** The provider names the release files carry, sorted. */
function providerNames(parsed: Parsed[]): string[] {
  return [...new Set(parsed.map((p) => p.info.name))].sort();
}

function pickName(parsed: Parsed[], wanted: string | undefined, dir: string): string {
  const names = providerNames(parsed);
  if (wanted !== undefined) {
    if (names.includes(wanted)) return wanted;
    throw new UsageError(`No release of provider "${wanted}" in ${dir} (found: ${names.join(', ')})`, {
      hint: `Check --name (or "name" in the configuration file); the files are named ${FILE_PREFIX}<name>_…`,
      details: { dir, names },
    });
  }
  if (names.length > 1) {
    throw new UsageError(`${dir} holds releases of several providers: ${names.join(', ')}`, {
      hint: `Say which one with --name, e.g. --name ${names[0]}.`,
      details: { dir, names },
    });
  }
  return names[0]!;
}

function pickVersion(parsed: Parsed[], wanted: string | undefined, dir: string): string {
  const versions = [...new Set(parsed.map((p) => p.info.version))].sort();
  if (wanted !== undefined) {
    const found = versions.find((v) => v === wanted || normalizeVersion(v) === wanted);
    if (found !== undefined) return found;
    throw new UsageError(`No files of version ${wanted} in ${dir} (found: ${versions.join(', ')})`, {
      hint: 'Check --version against the version in the file names.',
      details: { dir, versions },
    });
  }
  if (versions.length > 1) {
    throw new UsageError(`${dir} holds several versions: ${versions.join(', ')}`, {
      hint: `Say which one with --version, e.g. --version ${versions[versions.length - 1]}, or clean the folder (goreleaser release --clean).`,
      details: { dir, versions },
    });
  }
  return versions[0]!;
}

function checkPlatform(filename: string, info: { os: string; arch: string }, warnings: string[]): void {
  const { os, arch } = info;
  if (!isKnownPlatform(os, arch)) {
    const which = isKnownOs(os) ? `architecture "${arch}" for ${os}` : `operating system "${os}"`;
    throw new VerificationError(`${filename}: ${os}_${arch} is not a Go platform (unknown ${which})`, {
      hint: 'Platforms are Go GOOS_GOARCH pairs such as linux_amd64 or darwin_arm64 (see `go tool dist list`); the registry refuses others.',
      details: { file: filename, os, arch },
    });
  }
  if (isUnusualPlatform(os, arch)) {
    warnings.push(
      `${filename}: ${os}_${arch} is an unusual platform for a provider (the registry accepts it)`,
    );
  }
}
