/** What `provider lock upgrade` says: one line per provider, the versions held back and why, and the files. */
import { failureMark, successMark } from '../../ui/glyphs.js';
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
  // One line per provider and move: from, to, how many files.
  const moves = new Map<string, UpgradeDocument['blocks']>();
  for (const block of document.blocks) {
    const key = `${block.address} ${block.from} ${block.to} ${block.reason ?? ''} ${block.error ?? ''}`;
    moves.set(key, [...(moves.get(key) ?? []), block]);
  }
  const ok = successMark(output.color);
  const bad = failureMark(output.color);
  for (const blocks of moves.values()) {
    const { address, from, to, error, reason } = blocks[0]!;
    const files = blocks.length === 1 ? '1 lock file' : `${blocks.length} lock files`;
    if (error !== undefined) output.result(`${bad} ${address} ${from} (${files}) stays: ${error}`);
    else if (reason !== undefined) output.result(`${bad} ${address} ${from} (${files}) stays: ${reason}`);
    else if (from === to) output.result(`${ok} ${address} ${from} (${files}): the newest admitted`);
    else output.result(`${ok} ${address} ${from} → ${to} (${files})`);
    const held = new Map(blocks.flatMap((b) => b.held).map((h) => [h.version, h.reason]));
    for (const [version, why] of held) output.result(`    ${version} not taken: ${why}`);
  }
  if (document.blocks.length === 0)
    output.result('No lock file names a provider of the private registry (or --only admits none of them).');
  const changed = document.files.filter((f) => f.changed).map((f) => f.file);
  if (changed.length === 0) output.result('No lock file changes.');
  else if (document.dryRun)
    output.result(`Dry run: ${changed.length} lock file(s) would change; nothing was written`);
  else output.result(`Wrote ${changed.join(', ')}`);
}
