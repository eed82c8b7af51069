/** How `provider verify` shows a verified release: aligned human lines, or one JSON document. */
import { formatBytes, platformName } from '../terraform/names.js';
import { successMark } from '../ui/glyphs.js';
import type { Output } from '../ui/output.js';
import { lockHashes } from '../terraform/hashes.js';
import type { VerifiedRelease } from './types.js';

/** A platform archive in the `--json` documents of verify and publish. */
export interface PlatformJson {
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  bytes: number;
  /** What `.terraform.lock.hcl` records for this package: its `h1:` and `zh:`, sorted as Terraform sorts them. */
  hashes: string[];
}

/** The `--json` document of a successful verify. */
export interface VerifyDocument {
  ok: true;
  provider: { name: string; namespace?: string };
  version: string;
  protocols: string[];
  keyId: string;
  signer: string;
  signatureFile: string;
  platforms: PlatformJson[];
  /** Present when goreleaser's artifacts.json was read and agreed with the files. */
  artifactsJson?: { file: string; archives: number };
  warnings: string[];
}

/** Builds the JSON document. */
export function verifyDocument(release: VerifiedRelease, namespace: string | undefined): VerifyDocument {
  return {
    ok: true,
    provider: namespace === undefined ? { name: release.name } : { name: release.name, namespace },
    version: release.version,
    protocols: release.protocols,
    keyId: release.signer.keyId,
    signer: release.signer.userId,
    signatureFile: release.signature.filename,
    platforms: release.platforms.map((p) => ({
      os: p.os,
      arch: p.arch,
      filename: p.filename,
      shasum: p.shasum,
      bytes: p.bytes,
      hashes: lockHashes(p),
    })),
    ...(release.artifactsJson === undefined ? {} : { artifactsJson: release.artifactsJson }),
    warnings: release.warnings,
  };
}

/** Prints the release as a JSON document or as aligned lines. */
export function renderVerification(
  output: Output,
  release: VerifiedRelease,
  namespace: string | undefined,
): void {
  if (output.json) {
    output.resultJson(verifyDocument(release, namespace));
    return;
  }
  const { signer } = release;
  const subkey = signer.signingKeyId === signer.keyId ? '' : `, signed with subkey ${signer.signingKeyId}`;
  const facts: [string, string][] = [
    ['provider', namespace === undefined ? release.name : `${namespace}/${release.name}`],
    ['version', release.version],
    ['protocols', `${release.protocols.join(', ')} (from ${release.protocolsSource})`],
    ['key id', `${signer.keyId} (${signer.algorithm}${subkey}; from ${signer.originLabel})`],
    ['signer', signer.userId],
    [
      'signature',
      release.signature.filename +
        (release.signature.dearmored ? ' (converted from ASCII armor in memory)' : ''),
    ],
  ];
  for (const [label, value] of facts) output.result(`${label.padEnd(10)} ${value}`);
  output.result('');
  const rows = [
    ['PLATFORM', 'FILE', 'SIZE', 'SHA256'],
    ...release.platforms.map((p) => [
      platformName(p),
      p.filename,
      formatBytes(p.bytes),
      p.shasum.slice(0, 12),
    ]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) {
    output.result(
      [row[0]!.padEnd(widths[0]!), row[1]!.padEnd(widths[1]!), row[2]!.padStart(widths[2]!), row[3]].join(
        '  ',
      ),
    );
  }
  output.result('');
  const n = release.platforms.length;
  output.result(
    `${successMark(output.color)} ${release.name} ${release.version} verified: ${n} platform${n === 1 ? '' : 's'}` +
      (release.warnings.length > 0
        ? `, ${release.warnings.length} warning${release.warnings.length === 1 ? '' : 's'}`
        : ''),
  );
}
