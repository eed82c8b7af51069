/**
 * How a publish document reads to people: the summary table after a run, the plan of a dry run, and the
 * Markdown table for the GitHub step summary. All three come from the same `PublishDocument`.
 */
import { formatTags } from '../registry/tags.js';
import { formatBytes } from '../terraform/names.js';
import { GLYPHS, failureMark, successMark } from '../ui/glyphs.js';
import { literalBlock } from '../ui/githubSummary.js';
import type { Output } from '../ui/output.js';
import type { PublishDocument } from './document.js';

type PlatformRow = PublishDocument['platforms'][number];
type FileRow = PublishDocument['files'][number];

/** What happened to a platform in a run: `created, uploaded`, `uploaded`, `already there`. */
export function platformResult(p: PlatformRow): string {
  if (p.created) return p.uploaded ? 'created, uploaded' : 'created';
  return p.uploaded ? 'uploaded' : 'already there';
}

/** What a dry run would do to a platform. */
function platformIntent(p: PlatformRow): string {
  switch (p.action) {
    case 'create':
      return 'create, upload';
    case 'upload':
      return 'upload';
    case 'skip':
      return 'already there';
    default:
      return 'CONFLICT';
  }
}

function fileResult(f: FileRow, dryRun: boolean): string {
  if (f.action === 'conflict') return 'CONFLICT';
  if (dryRun) return f.action === 'upload' ? 'upload' : 'already there';
  return f.uploaded ? 'uploaded' : 'already there';
}

/** The facts above the table, as label/value pairs. */
function facts(doc: PublishDocument): [string, string][] {
  const { provider, key, version, dryRun } = doc;
  const prerequisite = (action: string, done: boolean, verb: 'create' | 'register'): string => {
    if (action === 'missing') return 'MISSING';
    if (dryRun) return action === 'create' ? verb : 'already there';
    return done ? `${verb === 'create' ? 'created' : 'registered'}` : 'already there';
  };
  const versionState =
    version.action === 'conflict' ? 'CONFLICT' : prerequisite(version.action, version.created, 'create');
  return [
    [
      'provider',
      `${provider.namespace}/${provider.name} on ${provider.hostname}: ${prerequisite(provider.action, provider.created, 'create')}`,
    ],
    ['key', `${key.keyId}: ${prerequisite(key.action, key.registered, 'register')}`],
    [
      'version',
      `${version.version} (key ${version.keyId}, protocols ${version.protocols.join(', ')}): ${versionState}`,
    ],
    ...doc.files.map((f): [string, string] => [
      f.kind === 'shasums' ? 'checksums' : 'signature',
      `${f.filename}: ${fileResult(f, dryRun)}`,
    ]),
    ...(doc.tags === null ? [] : [['tags', tagsResult(doc.tags, dryRun)] as [string, string]]),
  ];
}

/** `environment=prod, team=core: set (replacing environment=dev)`, or `…: already there`. */
function tagsResult(tags: NonNullable<PublishDocument['tags']>, dryRun: boolean): string {
  const state = tags.action === 'skip' ? 'already there' : dryRun ? 'set' : tags.set ? 'set' : 'not set';
  const replacing =
    tags.action === 'set' && tags.previous !== null && tags.previous.length > 0
      ? ` (replacing ${formatTags(tags.previous)})`
      : '';
  return `${formatTags(tags.tags)}: ${state}${replacing}`;
}

/** Rows of the platform table, header first. */
function tableRows(doc: PublishDocument): string[][] {
  return [
    ['PLATFORM', 'FILE', 'SIZE', 'SHA256', doc.dryRun ? 'PLAN' : 'RESULT'],
    ...doc.platforms.map((p) => [
      `${p.os}_${p.arch}`,
      p.filename,
      formatBytes(p.bytes),
      p.shasum.slice(0, 12),
      doc.dryRun ? platformIntent(p) : platformResult(p),
    ]),
  ];
}

/** Aligned columns; the SIZE column (index 2) is right-aligned. */
function align(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, i) =>
        i === 2 ? cell.padStart(widths[i]!) : i === row.length - 1 ? cell : cell.padEnd(widths[i]!),
      )
      .join('  '),
  );
}

/** Prints the summary of a run, or the plan of a dry run, on stdout. */
export function renderPublish(output: Output, doc: PublishDocument): void {
  if (doc.dryRun)
    output.result(`Plan for ${doc.provider.name} ${doc.version.version} (dry run: nothing was written)`);
  for (const [label, value] of facts(doc)) output.result(`${label.padEnd(10)} ${value}`);
  output.result('');
  align(tableRows(doc)).forEach((line) => output.result(line));
  for (const extra of doc.extraPlatforms) {
    output.result(
      `${extra.os}_${extra.arch}: in the registry but not in the release (kept; provider delete ${doc.version.version} --platform ${extra.os}_${extra.arch} removes it)`,
    );
  }
  if (doc.conflicts.length > 0) {
    output.result('');
    output.result('Conflicts (the registry holds different content):');
    for (const c of doc.conflicts) output.result(`  ${GLYPHS.failure} ${c.subject}: ${c.message}`);
  }
  output.result('');
  output.result(closingLine(output, doc));
}

function closingLine(output: Output, doc: PublishDocument): string {
  const n = doc.platforms.length;
  const platforms = `${n} platform${n === 1 ? '' : 's'}`;
  const name = `${doc.provider.name} ${doc.version.version}`;
  if (doc.dryRun) {
    const writes =
      doc.platforms.filter((p) => p.action !== 'skip').length +
      doc.files.filter((f) => f.action !== 'skip').length +
      [doc.provider.created, doc.key.registered, doc.version.created, doc.tags?.set === true].filter(Boolean)
        .length;
    return doc.conflicts.length > 0
      ? `${failureMark(output.color)} ${name}: ${doc.conflicts.length} conflict${doc.conflicts.length === 1 ? '' : 's'}; nothing can be written`
      : `${name}: ${writes === 0 ? 'nothing to do' : `${writes} item${writes === 1 ? '' : 's'} to write`} (${platforms})`;
  }
  const created = doc.platforms.filter((p) => p.created).length;
  const uploaded = doc.platforms.filter((p) => p.uploaded).length;
  const work =
    (created + uploaded === 0 ? 'everything was already there' : `${created} created, ${uploaded} uploaded`) +
    (doc.tags?.set === true ? ', tags set' : '');
  const check =
    doc.check.status === 'passed'
      ? '; consumer check passed'
      : `; consumer check skipped (${doc.check.reason})`;
  return `${successMark(output.color)} ${name} published: ${platforms} (${work}) in ${seconds(doc.durationMs)}${check}`;
}

/** The GitHub step summary: a heading and a Markdown table. */
export function markdownSummary(doc: PublishDocument): string {
  const title = `### provider publish: ${doc.provider.name} ${doc.version.version}${doc.dryRun ? ' (dry run)' : ''}`;
  const lines = [
    title,
    '',
    `Provider \`${doc.provider.namespace}/${doc.provider.name}\` on ${doc.provider.hostname}, key \`${doc.key.keyId}\`, protocols ${doc.version.protocols.join(', ')}.`,
    '',
    '| Platform | File | Size | SHA-256 | Result |',
    '| --- | --- | ---: | --- | --- |',
    ...doc.platforms.map(
      (p) =>
        `| ${p.os}_${p.arch} | \`${p.filename}\` | ${formatBytes(p.bytes)} | \`${p.shasum.slice(0, 12)}\` | ${doc.dryRun ? platformIntent(p) : platformResult(p)} |`,
    ),
    ...doc.files.map(
      (f) => `| | \`${f.filename}\` | ${formatBytes(f.bytes)} | | ${fileResult(f, doc.dryRun)} |`,
    ),
    '',
  ];
  // Tags and conflicts carry the registry's words (tags it already held, what it answered): never Markdown.
  if (doc.tags !== null) lines.push('Tags:', '', ...literalBlock([tagsResult(doc.tags, doc.dryRun)]), '');
  if (doc.conflicts.length > 0) {
    lines.push(
      '**Conflicts:**',
      '',
      ...literalBlock(doc.conflicts.map((c) => `${c.subject}: ${c.message}`)),
      '',
    );
  }
  return lines.join('\n') + '\n';
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`;
}
