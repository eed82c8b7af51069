/**
 * The report of a mirror run: one JSON document (`--json`), or a line per version and what to do next (publish
 * the folders, or change the configurations to the new source address). The origin's key facts
 * (`trust_signature`, `source`) are kept as the origin gave them.
 */
import type { Output } from '../ui/output.js';
import type { SourceChange } from './changes.js';
import type { ProviderReport, VersionReport } from './run.js';

/** The `--json` document. */
export interface MirrorDocument {
  origin: string;
  /** `--to-dir`, absolute; null when mirroring into a private registry. */
  toDir: string | null;
  /** The private registry, `<host>/<organization>`; null with `--to-dir`. */
  destination: string | null;
  dryRun: boolean;
  providers: ProviderReport[];
  /** Counts by status, over every provider. */
  summary: Record<VersionReport['status'], number>;
  /** What configurations and state must change to use the private copies (none with `--to-dir`). */
  changes: SourceChange[];
}

/** Builds the document from the run's reports. */
export function mirrorDocument(input: Omit<MirrorDocument, 'summary'>): MirrorDocument {
  const summary = { mirrored: 0, present: 0, planned: 0, held: 0, refused: 0, failed: 0 };
  for (const p of input.providers) for (const v of p.versions) summary[v.status]++;
  return { ...input, summary };
}

const WORDS: Record<VersionReport['status'], string> = {
  mirrored: 'mirrored',
  present: 'already there, verified (nothing written)',
  planned: 'would be mirrored (dry run: nothing written)',
  held: 'HELD by the policy (nothing written)',
  refused: 'REFUSED by the policy (nothing written)',
  failed: 'FAILED (nothing written)',
};

/** Prints the report for people. */
export function renderMirror(output: Output, document: MirrorDocument): void {
  for (const provider of document.providers) {
    output.result(`${provider.source} → ${document.toDir ?? document.destination ?? ''}`);
    if (provider.error !== null) output.result(`  FAILED: ${provider.error.message}`);
    else if (provider.versions.length === 0) output.result('  no version matches');
    for (const v of provider.versions) output.result(versionLine(v));
  }
  const { mirrored, present, planned, held, refused, failed } = document.summary;
  const policy = held + refused > 0 ? `, ${held} held, ${refused} refused by the policy` : '';
  output.result(
    `${mirrored} mirrored, ${present} already there, ${planned} planned${policy}, ${failed} failed`,
  );
  const folders = document.providers.flatMap((p) =>
    p.versions.filter((v) => v.folder !== null && (v.status === 'mirrored' || v.status === 'present')),
  );
  if (folders.length > 0 && !document.dryRun) {
    output.result(
      'Publish a version folder into your organization (no --key needed: the signer key is in it):',
    );
    output.result(`  provider publish ${folders[0]!.folder} --organization <org>`);
  }
  for (const change of document.changes) renderChange(output, change);
}

function renderChange(output: Output, change: SourceChange): void {
  output.result('');
  output.result(`Configurations must now use ${change.to} instead of ${change.from}:`);
  if (change.alias !== null)
    output.result(`  (on Terraform Enterprise also ${change.alias}, Terraform 1.4+)`);
  output.result(change.requiredProviders.replace(/^/gm, '  '));
  output.result('Existing state moves to it with:');
  output.result(`  ${change.replaceProvider}`);
}

function versionLine(v: VersionReport): string {
  const parts = [`  ${v.version}  ${WORDS[v.status]}`];
  if (v.platforms.length > 0) parts.push(`  ${v.platforms.join(', ')}`);
  if (v.unavailable.length > 0) parts.push(`  (not available: ${v.unavailable.join(', ')})`);
  if (v.origin !== null) {
    const trust = [v.origin.keySource, v.origin.trustSignature === '' ? '' : 'trust signature present']
      .filter((s) => s !== '')
      .join(', ');
    parts.push(`  key ${v.origin.keyId}${trust === '' ? '' : ` (${trust})`}`);
  }
  if (v.destination !== null && v.status === 'mirrored' && !v.destination.wrote)
    parts.push('  (nothing written)');
  if (v.status === 'held' && v.policy !== null) {
    const until = v.policy.eligibleAt === null ? '' : ` (eligible ${v.policy.eligibleAt})`;
    parts.push(`  ${v.policy.rule ?? ''}${until}\n    ${v.policy.reason}`);
  }
  if (v.error !== null) parts.push(`\n    ${v.error.message}`);
  return parts.join('');
}
