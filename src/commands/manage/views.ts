/**
 * The plain-data views the read commands print (in `--json` and as table rows), and `respond`, how they print
 * them. Built from the wire documents without their `links`: download links are secrets, upload links even more so.
 */
import semverRcompare from 'semver/functions/rcompare.js';
import { fileStates, type FileStates } from '../../registry/fileStates.js';
import type { Tag } from '../../registry/tags.js';
import type { GpgKeyResource, PlatformResource, VersionResource } from '../../terraform/api.js';
import { comparePlatforms } from '../../terraform/names.js';
import type { Output } from '../../ui/output.js';
import type { ProviderSession } from './context.js';

/** A version with the state of its files. */
export interface VersionView {
  id: string;
  version: string;
  protocols: string[];
  keyId: string;
  createdAt: string;
  updatedAt: string;
  shasumsUploaded: boolean;
  shasumsSigUploaded: boolean;
  /** `2/2 + 5/5`. */
  files: string;
  complete: boolean;
  platforms: string[];
  /** The version's tags, sorted by key then value; null when the registry reports no tags for versions. */
  tags: Tag[] | null;
}

/** A platform of a version. */
export interface PlatformView {
  id: string;
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  binaryUploaded: boolean;
}

/** A registered GPG key (its armor left out: `gpg-keys list --json` is for looking, not for copying keys). */
export interface GpgKeyView {
  id: string;
  keyId: string;
  namespace: string;
  createdAt: string;
  updatedAt: string;
}

/** The `provider` member of every JSON document. */
export function providerView(context: ProviderSession): Record<string, string> {
  return { source: context.source, hostname: context.hostname, ...context.address };
}

/** A version, its platforms and its tags (null: not reported) as a view. */
export function versionView(
  version: VersionResource,
  platforms: PlatformResource[],
  tags: Tag[] | null,
): VersionView {
  const a = version.attributes;
  const states: FileStates = fileStates(version, platforms);
  return {
    id: version.id,
    version: a.version,
    protocols: a.protocols,
    keyId: a['key-id'],
    createdAt: a['created-at'],
    updatedAt: a['updated-at'],
    shasumsUploaded: states.shasumsUploaded,
    shasumsSigUploaded: states.shasumsSigUploaded,
    files: states.summary,
    complete: states.complete,
    platforms: states.platforms.map((p) => `${p.os}_${p.arch}`),
    tags,
  };
}

/** A platform as a view. */
export function platformView(platform: PlatformResource): PlatformView {
  const a = platform.attributes;
  return {
    id: platform.id,
    os: a.os,
    arch: a.arch,
    filename: a.filename,
    shasum: a.shasum,
    binaryUploaded: a['provider-binary-uploaded'] === true,
  };
}

/** A GPG key as a view. */
export function gpgKeyView(key: GpgKeyResource): GpgKeyView {
  const a = key.attributes;
  return {
    id: key.id,
    keyId: a['key-id'],
    namespace: a.namespace,
    createdAt: a['created-at'],
    updatedAt: a['updated-at'],
  };
}

/** Newest first by semantic version precedence; anything unparsable after, by text. */
export function compareVersionsDescending(a: string, b: string): number {
  try {
    return semverRcompare(a, b);
  } catch {
    return b.localeCompare(a);
  }
}

/** Platforms ordered by `os_arch`. */
export function sortPlatforms<T extends { attributes: { os: string; arch: string } }>(platforms: T[]): T[] {
  return [...platforms].sort((x, y) => comparePlatforms(x.attributes, y.attributes));
}

/** `yes` or `no`. */
export function yesNo(value: boolean): string {
  return value ? 'yes' : 'no';
}

/** A command's answer, exit 0: with `--json` the one document `{ ok: true, ...facts }`, else `text` prints it for people. */
export function respond(output: Output, facts: Record<string, unknown>, text: () => void): 0 {
  if (output.json) output.resultJson({ ok: true, ...facts });
  else text();
  return 0;
}
