/**
 * The report of a mirror run: one JSON document (`--json`), or a line per version and what to run next. The
 * origin's key facts (`trust_signature`, `source`) are kept as the origin gave them.
 */
import type { Output } from '../ui/output.js';
import type { ProviderReport, VersionReport } from './run.js';

/** The `--json` document. */
export interface MirrorDocument {
  origin: string;
  toDir: string;
  dryRun: boolean;
  providers: ProviderReport[];
  /** Counts by status, over every provider. */
  summary: Record<VersionReport['status'], number>;
}

/** Builds the document from the run's reports. */
export function mirrorDocument(input: Omit<MirrorDocument, 'summary'>): MirrorDocument {
  const summary = { mirrored: 0, present: 0, planned: 0, failed: 0 };
  for (const p of input.providers) for (const v of p.versions) summary[v.status]++;
  return { ...input, summary };
}

const WORDS: Record<VersionReport['status'], string> = {
  mirrored: 'mirrored',
  present: 'already there, verified (nothing written)',
  planned: 'would be mirrored (dry run: nothing written)',
  failed: 'FAILED (nothing written)',
};

/** Prints the report for people. */
export function renderMirror(output: Output, document: MirrorDocument): void {
  for (const provider of document.providers) {
    output.result(`${provider.source} → ${document.toDir}`);
    if (provider.versions.length === 0) output.result('  no version matches');
    for (const v of provider.versions) output.result(versionLine(v));
  }
  const { mirrored, present, planned, failed } = document.summary;
  output.result(`${mirrored} mirrored, ${present} already there, ${planned} planned, ${failed} failed`);
  const folders = document.providers.flatMap((p) =>
    p.versions.filter((v) => v.status !== 'failed' && v.status !== 'planned'),
  );
  if (folders.length > 0 && !document.dryRun) {
    output.result(
      'Publish a version folder into your organization (no --key needed: the signer key is in it):',
    );
    output.result(`  provider publish ${folders[0]!.folder} --organization <org>`);
  }
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
  if (v.error !== null) parts.push(`\n    ${v.error.message}`);
  return parts.join('');
}
