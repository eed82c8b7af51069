/**
 * goreleaser's `dist/artifacts.json` as a second witness of the release. goreleaser writes it at the end of a
 * run: one entry per artifact (`name`, `path`, `type`, `goos`, `goarch`, `extra`), typed by strings such as
 * `Archive`, `Checksum`, `Signature`, `File`, `Binary` (goreleaser/goreleaser: internal/artifact/artifact.go,
 * `Type.String()`; www/content/customization/general/artifacts.md). Since goreleaser 1.13 each checksummed
 * artifact carries `extra.Checksum` = `<algorithm>:<hex>` (goreleaser/goreleaser#3548, internal/pipe/checksums).
 *
 * When the file is in the release folder, its archives, checksum file, signature and manifest must be the
 * files on disk: a disagreement means the folder mixes the output of two runs, and is a VerificationError
 * naming both sides. A file that cannot be read as goreleaser's list is only a warning: it is not part of
 * what the registry or Terraform see.
 */
import * as path from 'node:path';
import type * as z from 'zod';
import type { artifactSchema } from './artifactsSchema.js';
import { VerificationError, shorten } from '../errors.js';
import { parseReleaseFileName } from './filenames.js';
import type { ReleaseLayout } from './layout.js';
import type { ShasumEntry } from './shasums.js';
import { FileTooLargeError, formatCap, readCapped, tooLargeMessage } from './smallFile.js';

/** The file name goreleaser gives the list, in its dist folder. */
export const ARTIFACTS_FILE = 'artifacts.json';

/**
 * The cap on artifacts.json: an entry is a few hundred bytes, a provider release lists some 30 artifacts
 * (~15 KB); 16 MiB holds tens of thousands of entries.
 */
export const ARTIFACTS_CAP = 16 * 1024 * 1024;

/** One entry of goreleaser's artifacts.json (its schema: src/release/artifactsSchema.ts, loaded when needed). */
export type GoreleaserArtifact = z.infer<typeof artifactSchema>;

/** artifacts.json, read. */
export interface ArtifactsJson {
  /** `artifacts.json`. */
  file: string;
  artifacts: GoreleaserArtifact[];
}

/** What the verify `--json` document says about artifacts.json when it was used. */
export interface ArtifactsSummary {
  file: string;
  /** How many archives of the release it lists (each checked against SHA256SUMS and the file). */
  archives: number;
}

const HINT =
  'artifacts.json and the release files come from different goreleaser runs. Rebuild the release in a clean folder (goreleaser release --clean); never mix the dist folders of two runs.';

/**
 * Reads artifacts.json when the folder holds one; undefined (and a warning naming the file) when it is too
 * large, unreadable, not JSON or not goreleaser's list.
 */
export async function readArtifacts(
  layout: ReleaseLayout,
  warn: (message: string) => void,
): Promise<ArtifactsJson | undefined> {
  if (!layout.files.has(ARTIFACTS_FILE)) return undefined;
  const skipped = 'it is not used to cross-check the release';
  let text: string;
  try {
    const bytes = await readCapped(path.join(layout.dir, ARTIFACTS_FILE), ARTIFACTS_CAP);
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    if (error instanceof FileTooLargeError) {
      warn(
        `${tooLargeMessage(ARTIFACTS_FILE, error, "goreleaser's artifact list")} (${formatCap(ARTIFACTS_CAP)}); ${skipped}`,
      );
    } else {
      const code = (error as NodeJS.ErrnoException).code;
      warn(`${ARTIFACTS_FILE} cannot be read (${code ?? 'not UTF-8 text'}); ${skipped}`);
    }
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    warn(`${ARTIFACTS_FILE} is not JSON (${shorten((error as Error).message, 80)}); ${skipped}`);
    return undefined;
  }
  const { artifactsSchema } = await import('./artifactsSchema.js');
  const parsed = artifactsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
    warn(
      `${ARTIFACTS_FILE} is not goreleaser's artifact list (${where}${shorten(issue?.message ?? 'invalid', 80)}); ${skipped}`,
    );
    return undefined;
  }
  return { file: ARTIFACTS_FILE, artifacts: parsed.data };
}

/** What `checkArtifacts` compares artifacts.json with. */
export interface ArtifactsCheckInput {
  layout: ReleaseLayout;
  entries: readonly ShasumEntry[];
  /** The SHA-256 (lower-case hex) of a listed file as hashed, undefined when it was not hashed. */
  sha256Of: (filename: string) => string | undefined;
  warn: (message: string) => void;
}

/**
 * Checks artifacts.json against the files on disk: the checksum file, its signature, the manifest and each
 * archive of the release (present, and its `extra.Checksum` equal to the file's hash and its SHA256SUMS line).
 * Throws a VerificationError naming both sides; returns the summary for the `--json` document.
 */
export function checkArtifacts(list: ArtifactsJson, input: ArtifactsCheckInput): ArtifactsSummary {
  const { layout, entries, sha256Of, warn } = input;
  const { file, artifacts } = list;
  const line = new Map(entries.map((e) => [e.filename, e]));
  const ofType = (type: string): GoreleaserArtifact[] => artifacts.filter((a) => a.type === type);
  const mine = (a: GoreleaserArtifact, kinds: string[]): boolean => {
    const info = parseReleaseFileName(a.name);
    return info !== undefined && info.name === layout.name && kinds.includes(info.kind);
  };
  const disagree = (message: string, details: Record<string, unknown>): VerificationError =>
    new VerificationError(message, { hint: HINT, details: { file, ...details } });

  // The checksum file. Split checksums (`checksum.split`) carry `extra.ChecksumOf` and are not the release's.
  const sums = ofType('Checksum').filter((a) => a.extra?.['ChecksumOf'] === undefined);
  if (sums.length > 0 && !sums.some((a) => a.name === layout.shasums)) {
    throw disagree(`${file} says the checksum file is ${names(sums)}, the folder's is ${layout.shasums}`, {
      listed: sums.map((a) => a.name),
      onDisk: layout.shasums,
    });
  }
  // Its signature. With `signs.artifacts: all` every archive has a `.sig` too; only checksum signatures count.
  const sigs = ofType('Signature').filter((a) => mine(a, ['signature']));
  if (sigs.length > 0 && !sigs.some((a) => a.name === layout.signature)) {
    throw disagree(`${file} says the signature is ${names(sigs)}, the folder's is ${layout.signature}`, {
      listed: sigs.map((a) => a.name),
      onDisk: layout.signature,
    });
  }
  // The manifest: goreleaser lists it as a `File` (release.extra_files with a name_template).
  const manifests = artifacts.filter((a) => mine(a, ['manifest']));
  if (manifests.length > 0 && !manifests.some((a) => a.name === layout.manifest)) {
    throw disagree(
      `${file} says the manifest is ${names(manifests)}, ${layout.manifest === undefined ? 'the folder holds none' : `the folder's is ${layout.manifest}`}`,
      { listed: manifests.map((a) => a.name), onDisk: layout.manifest ?? null },
    );
  }

  // The archives: the same set of zips, each with the same hash on all three sides.
  const archives = ofType('Archive').filter((a) => mine(a, ['platform', 'odd-zip']));
  const listed = new Set(archives.map((a) => a.name));
  for (const platform of layout.platforms) {
    if (!listed.has(platform.filename)) {
      throw disagree(
        `${platform.filename} is in the folder, but ${file} does not list it: the archive comes from another goreleaser run`,
        { missing: platform.filename },
      );
    }
  }
  const onDisk = new Set(layout.platforms.map((p) => p.filename));
  const withoutChecksum: string[] = [];
  for (const archive of archives) {
    if (!onDisk.has(archive.name)) {
      throw disagree(`${file} lists ${shorten(archive.name)}, which is not in ${layout.dir}`, {
        listed: archive.name,
      });
    }
    const claimed = archive.extra?.['Checksum'];
    if (claimed === undefined) {
      withoutChecksum.push(archive.name);
      continue;
    }
    const actual = sha256Of(archive.name);
    const entry = line.get(archive.name);
    const hex = typeof claimed === 'string' ? /^sha256:([0-9a-f]{64})$/.exec(claimed)?.[1] : undefined;
    if (hex === undefined) {
      throw new VerificationError(
        `${file} gives ${archive.name} the checksum ${shorten(JSON.stringify(claimed), 80)}; goreleaser writes "sha256:<64 hex digits>"`,
        {
          hint: `The registry and Terraform use SHA-256: keep checksum.algorithm at sha256 and rebuild the release (goreleaser release --clean).`,
          details: { file, archive: archive.name, checksum: claimed },
        },
      );
    }
    if (actual !== undefined && hex !== actual) {
      const sumsSays =
        entry === undefined
          ? `${layout.shasums} does not list it`
          : entry.shasum === actual
            ? `${layout.shasums} line ${entry.line} agrees with the file`
            : `${layout.shasums} line ${entry.line} says ${entry.shasum}`;
      throw disagree(
        `${file} says ${archive.name} has sha256:${hex}, the file hashes to ${actual} (${sumsSays})`,
        { archive: archive.name, artifactsJson: hex, actual, line: entry?.line ?? null },
      );
    }
  }
  if (withoutChecksum.length > 0) {
    warn(
      `${file} gives no extra.Checksum for ${withoutChecksum.length === archives.length ? 'any archive' : withoutChecksum.join(', ')} (goreleaser before 1.13 wrote none); the archives are checked against ${layout.shasums} only`,
    );
  }
  return { file, archives: archives.length };
}

/** `a`, or `a, b` — the names an artifact list gives. */
function names(artifacts: GoreleaserArtifact[]): string {
  return artifacts.map((a) => shorten(a.name)).join(', ');
}
