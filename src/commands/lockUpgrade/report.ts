/** What `provider lock upgrade` says: one line per provider, the versions held back and why, and the files. */
import { GLYPHS, failureMark, successMark } from '../../ui/glyphs.js';
import { literalBlock } from '../../ui/githubSummary.js';
import type { Output } from '../../ui/output.js';
import type { HeldVersion } from './choose.js';
import type { LockFileRead } from './files.js';

/** A lock file's new text, when it changes. */
export interface FileChange {
  file: LockFileRead;
  text: string;
  diff: string[];
}

/** The `--json` document. */
export interface UpgradeDocument {
  /** False when a version did not verify (exit 3). */
  ok: boolean;
  dryRun: boolean;
  /** Every lock file with a private provider block: whether it changes, and whether it was written. */
  files: { file: string; changed: boolean; written: boolean }[];
  /** Every private provider block: where it was and where it is now (`to` = `from` when it stays), and why. */
  blocks: {
    file: string;
    line: number;
    address: string;
    from: string;
    to: string;
    moved: boolean;
    held: HeldVersion[];
    /** Why it stays where a move was asked for (no version admitted, another version of its provider failed). */
    reason?: string;
    /** Why the version chosen did not verify. */
    error?: string;
  }[];
  /** The versions verified and hashed: the platforms whose `h1:` is written, and whether it was computed now. */
  verified: {
    address: string;
    version: string;
    platforms: string[];
    h1: 'computed' | 'cache';
    /** With `--policy`: why it admitted the version (its rule, or the approval). */
    policy?: string;
  }[];
  /** The versions that did not verify, and why. */
  failed: { address: string; version: string; message: string }[];
}

/** The text report: with --dry-run each file's diff first. */
export function renderUpgrade(output: Output, document: UpgradeDocument, changes: FileChange[]): void {
  if (document.dryRun) {
    for (const change of changes) {
      output.result(`--- ${change.file.shown}`);
      for (const line of change.diff) output.result(line);
      output.result('');
    }
  }
  for (const line of upgradeLines(document, {
    ok: successMark(output.color),
    bad: failureMark(output.color),
  }))
    output.result(line);
}

/** The GitHub Actions step summary: a heading that says what changed, then the report's lines as they are. */
export function upgradeSummary(document: UpgradeDocument): string {
  const changed = document.files.filter((f) => f.changed).length;
  const files = changed === 1 ? '1 lock file' : `${changed} lock files`;
  const what = document.dryRun ? `${files} would change` : changed === 0 ? 'no change' : `${files} changed`;
  const lines = upgradeLines(document, { ok: GLYPHS.success, bad: GLYPHS.failure });
  return [`### provider lock upgrade: ${what}`, '', ...literalBlock(lines), ''].join('\n') + '\n';
}

/** One line per provider and move (from, to, how many files, the hashes), the versions not taken, the files. */
function upgradeLines(document: UpgradeDocument, marks: { ok: string; bad: string }): string[] {
  const lines: string[] = [];
  const moves = new Map<string, UpgradeDocument['blocks']>();
  for (const block of document.blocks) {
    const key = `${block.address} ${block.from} ${block.to} ${block.reason ?? ''} ${block.error ?? ''}`;
    moves.set(key, [...(moves.get(key) ?? []), block]);
  }
  const { ok, bad } = marks;
  for (const blocks of moves.values()) {
    const { address, from, to, error, reason } = blocks[0]!;
    const files = blocks.length === 1 ? '1 lock file' : `${blocks.length} lock files`;
    // By type: a provider may be written with the registry's host in one file and localterraform.com in another.
    const type = address.split('/').pop();
    const done = document.verified.find((v) => v.address.split('/').pop() === type && v.version === to);
    const hashes =
      done === undefined
        ? ''
        : `; h1: of ${done.platforms.length} platform${done.platforms.length === 1 ? '' : 's'}, ${done.h1 === 'cache' ? 'from the cache' : 'computed'}`;
    if (error !== undefined) lines.push(`${bad} ${address} ${from} (${files}) stays: ${error}`);
    else if (reason !== undefined) lines.push(`${bad} ${address} ${from} (${files}) stays: ${reason}`);
    else if (from === to) lines.push(`${ok} ${address} ${from} (${files}): the newest admitted`);
    else lines.push(`${ok} ${address} ${from} → ${to} (${files}${hashes})`);
    const held = new Map(blocks.flatMap((b) => b.held).map((h) => [h.version, h.reason]));
    for (const [version, why] of held) lines.push(`    ${version} not taken: ${why}`);
  }
  if (document.blocks.length === 0)
    lines.push('No lock file names a provider of the private registry (or --only admits none of them).');
  const changed = document.files.filter((f) => f.changed).map((f) => f.file);
  if (changed.length === 0) lines.push('No lock file changes.');
  else if (document.dryRun)
    lines.push(`Dry run: ${changed.length} lock file(s) would change; nothing was written`);
  else lines.push(`Wrote ${changed.join(', ')}`);
  return lines;
}
