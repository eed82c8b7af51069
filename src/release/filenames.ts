/**
 * goreleaser's file names for a provider release: `terraform-provider-<name>_<version>_<os>_<arch>.zip`,
 * `…_<version>_SHA256SUMS`, `…_SHA256SUMS.sig` and `…_manifest.json`. Provider names and semantic versions
 * hold no `_`, so an underscore split is unambiguous.
 */

/** The prefix every release file name starts with. */
export const FILE_PREFIX = 'terraform-provider-';

/** A release file name, taken apart. `odd-zip` is a zip of the release whose name has no os/arch pair. */
export type ParsedFileName =
  | { kind: 'platform'; name: string; version: string; os: string; arch: string }
  | { kind: 'shasums' | 'signature' | 'manifest'; name: string; version: string }
  | { kind: 'odd-zip'; name: string; version: string };

const SUFFIXES = [
  ['_SHA256SUMS', 'shasums'],
  ['_SHA256SUMS.sig', 'signature'],
  ['_manifest.json', 'manifest'],
] as const;

/** Takes a file name apart; undefined when it is not one of the release's files. */
export function parseReleaseFileName(filename: string): ParsedFileName | undefined {
  if (!filename.startsWith(FILE_PREFIX)) return undefined;
  const rest = filename.slice(FILE_PREFIX.length);
  for (const [suffix, kind] of SUFFIXES) {
    if (!rest.endsWith(suffix)) continue;
    const parts = rest.slice(0, -suffix.length).split('_');
    if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
    return { kind, name: parts[0], version: parts[1] };
  }
  if (!rest.endsWith('.zip')) return undefined;
  const parts = rest.slice(0, -'.zip'.length).split('_');
  const [name, version, os, arch] = parts;
  if (!name || !version) return undefined;
  if (parts.length === 4 && os && arch) return { kind: 'platform', name, version, os, arch };
  return { kind: 'odd-zip', name, version };
}

/** The names goreleaser gives the files of one release. */
export function releaseFileNames(
  name: string,
  version: string,
): { shasums: string; signature: string; manifest: string } {
  const base = `${FILE_PREFIX}${name}_${version}`;
  return {
    shasums: `${base}_SHA256SUMS`,
    signature: `${base}_SHA256SUMS.sig`,
    manifest: `${base}_manifest.json`,
  };
}

/**
 * The files `provider mirror --to-dir` adds to a release it copied from a registry: a record in the manifest's
 * format (the origin's protocols, where it came from) and the signer's public key as the origin served it, so
 * that `verify` and `publish` take the folder as it is. Neither is listed in the origin's SHA256SUMS.
 */
export function mirroredFileNames(name: string, version: string): { record: string; key: string } {
  const base = `${FILE_PREFIX}${name}_${version}`;
  return { record: `${base}_mirror.json`, key: `${base}_signing-key.asc` };
}

/** True for the name of a signing key file `mirroredFileNames` gives. */
export function isMirroredKeyFile(filename: string): boolean {
  return filename.startsWith(FILE_PREFIX) && filename.endsWith('_signing-key.asc');
}
