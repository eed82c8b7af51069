/**
 * Which files of a version the registry holds: SHA256SUMS, its signature and each platform's binary, from the
 * `*-uploaded` flags. A version is visible to `terraform init` only when all of them are there.
 */
import { comparePlatforms } from '../terraform/names.js';
import type { PlatformResource, VersionResource } from '../terraform/api.js';

/** The upload state of one version's files. */
export interface FileStates {
  shasumsUploaded: boolean;
  shasumsSigUploaded: boolean;
  platforms: { os: string; arch: string; filename: string; uploaded: boolean }[];
  /** `2/2 + 5/5`: checksum files uploaded of 2, binaries uploaded of all platforms. */
  summary: string;
  /** True when both checksum files and at least one binary are there and no binary is missing. */
  complete: boolean;
  /** What is missing, in words: `SHA256SUMS.sig`, `the binary of linux_amd64`, `any platform`. */
  missing: string[];
}

/** Reads the file states of a version and its platforms. */
export function fileStates(version: VersionResource, platforms: PlatformResource[]): FileStates {
  const a = version.attributes;
  const shasumsUploaded = a['shasums-uploaded'] === true;
  const shasumsSigUploaded = a['shasums-sig-uploaded'] === true;
  const rows = platforms
    .map((p) => ({
      os: p.attributes.os,
      arch: p.attributes.arch,
      filename: p.attributes.filename,
      uploaded: p.attributes['provider-binary-uploaded'] === true,
    }))
    .sort(comparePlatforms);
  const sums = Number(shasumsUploaded) + Number(shasumsSigUploaded);
  const binaries = rows.filter((r) => r.uploaded).length;
  const missing = [
    ...(shasumsUploaded ? [] : ['SHA256SUMS']),
    ...(shasumsSigUploaded ? [] : ['SHA256SUMS.sig']),
    ...(rows.length === 0 ? ['any platform'] : []),
    ...rows.filter((r) => !r.uploaded).map((r) => `the binary of ${r.os}_${r.arch} (${r.filename})`),
  ];
  return {
    shasumsUploaded,
    shasumsSigUploaded,
    platforms: rows,
    summary: `${sums}/2 + ${binaries}/${rows.length}`,
    complete: missing.length === 0,
    missing,
  };
}
