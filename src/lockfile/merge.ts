/**
 * Writing one provider's entry into a lock file's text, leaving every other character as it was: the provider's
 * block is replaced where it stands, or a new block is inserted where Terraform's sorted order puts it. The entry
 * follows Terraform's rules (hashicorp/terraform: internal/providercache/installer.go, `EnsureProviderVersions`;
 * internal/command/providers_lock.go): for the version already locked, the hashes recorded before are kept and
 * the new ones added (`priorHashes`, only "if lock.Version() == version"); for another version the entry starts
 * afresh; hashes sorted and de-duplicated (`NewProviderLock`). Constraints come from the configuration, so they
 * are left as they are unless given.
 */
import { sortHashes } from '../terraform/hashes.js';
import {
  LockFileError,
  findProvider,
  readProviderBlock,
  type LockedProvider,
  type ParsedLockFile,
} from './parse.js';
import { renderLockFile, renderProviderBlock, type ProviderLock } from './render.js';

/** What to record for one provider. */
export interface LockUpdate {
  address: string;
  version: string;
  /** Hashes for this version (any order). */
  hashes: string[];
  /** Canonical constraints to set; undefined keeps the block's own (none for a new block). */
  constraints?: string | undefined;
}

/** What happened to the file. */
export type LockOutcome = 'created' | 'updated' | 'unchanged';

/** The merged text and what it holds. */
export interface MergeResult {
  text: string;
  outcome: LockOutcome;
  /** The entry as written. */
  lock: ProviderLock;
  /** The block as written. */
  block: string;
  /** The provider's entry and block before, when the file had one. */
  previous?: { entry: LockedProvider; block: string } | undefined;
}

/** Merges `update` into a parsed lock file (or a new file when `parsed` is undefined). `file` names it in errors. */
export function mergeLock(parsed: ParsedLockFile | undefined, update: LockUpdate, file: string): MergeResult {
  const address = update.address.toLowerCase();
  if (parsed === undefined || parsed.text.trim() === '') {
    const lock = {
      address,
      version: update.version,
      constraints: update.constraints,
      hashes: sortHashes(update.hashes),
    };
    return { text: renderLockFile(lock), outcome: 'created', lock, block: renderProviderBlock(lock) };
  }
  const { text } = parsed;
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const found = findProvider(parsed, address);
  if (found.length > 1) {
    throw new LockFileError(
      `${file}:${found[1]!.line}: ${address} has a second block (first on line ${found[0]!.line})`,
      {
        hint: 'Keep one block per provider (terraform init refuses duplicates); the file was not changed.',
        details: { file, line: found[1]!.line },
      },
    );
  }
  const existing = found[0];
  if (existing !== undefined) {
    const entry = readProviderBlock(existing, file);
    const hashes = entry.version === update.version ? [...entry.hashes, ...update.hashes] : update.hashes;
    const lock: ProviderLock = {
      address,
      version: update.version,
      constraints: update.constraints ?? entry.constraints,
      hashes: sortHashes(hashes),
    };
    const block = renderProviderBlock(lock, eol);
    const before = text.slice(existing.start, existing.end);
    const merged = text.slice(0, existing.start) + block + text.slice(existing.end);
    return {
      text: merged,
      outcome: merged === text ? 'unchanged' : 'updated',
      lock,
      block,
      previous: { entry, block: before },
    };
  }
  const lock = {
    address,
    version: update.version,
    constraints: update.constraints,
    hashes: sortHashes(update.hashes),
  };
  const block = renderProviderBlock(lock, eol);
  const next = parsed.providers.find((p) => compareAddresses(p.label, address) > 0);
  let merged: string;
  if (next !== undefined) {
    const at = insertionPoint(parsed, next.start, next.startRow);
    merged = text.slice(0, at) + block + eol + eol + text.slice(at);
  } else if (text.endsWith(eol + eol)) {
    merged = text + block + eol;
  } else if (text.endsWith(eol)) {
    merged = text + eol + block + eol;
  } else {
    merged = text + eol + eol + block + eol;
  }
  return { text: merged, outcome: 'updated', lock, block };
}

/**
 * Terraform's order of provider addresses (`addrs.Provider.LessThan`): hostname, then namespace, then type,
 * each compared as a string in its normalised (lower-case) form.
 */
export function compareAddresses(a: string, b: string): number {
  const pa = a.toLowerCase().split('/');
  const pb = b.toLowerCase().split('/');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

// Where a block goes in front of the one at `start`: above the comment lines directly attached to it, at the
// start of its line when only indentation comes before it there.
function insertionPoint(parsed: ParsedLockFile, start: number, startRow: number): number {
  let at = start;
  let row = startRow;
  const before = parsed.items.filter((i) => i.end <= start);
  for (let i = before.length - 1; i >= 0; i--) {
    const item = before[i]!;
    if (item.kind !== 'comment' || item.endRow !== row - 1) break;
    at = item.start;
    row = item.startRow;
  }
  const lineStart = parsed.text.lastIndexOf('\n', at - 1) + 1;
  return /^[ \t]*$/.test(parsed.text.slice(lineStart, at)) ? lineStart : at;
}
