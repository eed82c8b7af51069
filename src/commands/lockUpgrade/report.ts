/** What `provider lock upgrade` says: one line per provider, the versions held back and why, and the files. */
import { successMark } from '../../ui/glyphs.js';
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
  /** Every private provider block: where it was and where it goes (null: it stays), and the versions held. */
  blocks: {
    file: string;
    line: number;
    address: string;
    from: string;
    to: string | null;
    held: HeldVersion[];
    /** Why no version could be chosen. */
    reason?: string;
    /** Why the version chosen did not verify. */
    error?: string;
  }[];
  /** The versions that did not verify (`example 1.3.0`), and why. */
  failed: { version: string; message: string }[];
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
  const byProvider = new Map<string, UpgradeDocument['blocks']>();
  for (const block of document.blocks)
    byProvider.set(block.address, [...(byProvider.get(block.address) ?? []), block]);
  const mark = successMark(output.color);
  for (const [address, blocks] of byProvider) {
    const from = [...new Set(blocks.map((b) => b.from))].join(', ');
    const to = [...new Set(blocks.map((b) => b.to ?? b.from))].join(', ');
    const files = blocks.length === 1 ? '1 lock file' : `${blocks.length} lock files`;
    const failed = blocks.find((b) => b.error !== undefined);
    if (failed !== undefined) output.result(`✗ ${address} ${from} (${files}) stays: ${failed.error}`);
    else if (from === to) output.result(`${mark} ${address} ${from}: current (${files})`);
    else output.result(`${mark} ${address} ${from} → ${to} (${files})`);
    const held = new Map(blocks.flatMap((b) => b.held).map((h) => [h.version, h.reason]));
    for (const [version, reason] of held) output.result(`    ${version} not taken: ${reason}`);
    for (const reason of new Set(blocks.flatMap((b) => (b.reason === undefined ? [] : [b.reason]))))
      output.result(`    no version: ${reason}`);
  }
  const changed = document.files.filter((f) => f.changed).map((f) => f.file);
  if (changed.length === 0) output.result('No lock file changes.');
  else if (document.dryRun)
    output.result(`Dry run: ${changed.length} lock file(s) would change; nothing was written`);
  else output.result(`Wrote ${changed.join(', ')}`);
}
