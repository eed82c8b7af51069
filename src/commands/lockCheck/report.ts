/**
 * The outcome of `provider lock check` as plain data (its `--json` document, and what the SARIF and JUnit writers
 * render), and its text: one line per finding naming the provider, the hash, platform or version, and what to
 * do, then one summary line. Nothing in it comes from a download link or a token, and a control character read
 * from the lock file (or a path) is printed `\u001b` (src/ui/output.ts `visible`).
 */
import type { LockFinding } from '../../lockfile/audit.js';
import { visible } from '../../ui/output.js';
import { failureMark, successMark } from '../../ui/glyphs.js';
import type { Output } from '../../ui/output.js';

/** Where a provider of the lock file comes from, as the check sees it. */
export type ProviderOrigin = 'private' | 'allowed' | 'other';

/** One provider block as checked. */
export interface CheckedProvider {
  address: string;
  version: string;
  origin: ProviderOrigin;
  line: number;
}

/** The `--json` document of `provider lock check`. */
export interface LockCheckDocument {
  /** True when nothing is wrong (exit 0); false with findings (exit 3). */
  ok: boolean;
  lockFile: string;
  /** `host/namespace` of the private registry the lock file is held against. */
  registry: string;
  /** The platforms whose `h1:` a privately served provider's block must hold. */
  platforms: string[];
  providers: CheckedProvider[];
  findings: LockFinding[];
}

/** Prints the document as text: every finding on a line of its own, then what was checked. */
export function renderLockCheck(output: Output, document: LockCheckDocument): void {
  const bad = failureMark(output.color);
  const lockFile = visible(document.lockFile);
  for (const finding of document.findings) {
    const where = finding.line === null ? lockFile : `${lockFile}:${finding.line}`;
    output.result(`${bad} ${where}: ${visible(`${finding.message}. ${finding.hint}`)}`);
  }
  const count = document.providers.length;
  const providers = `${count} provider${count === 1 ? '' : 's'}`;
  const against = `against ${visible(document.registry)} (h1: for ${document.platforms.join(', ')})`;
  if (document.ok) {
    output.result(`${successMark(output.color)} ${lockFile}: ${providers} hold up ${against}`);
  } else {
    const n = document.findings.length;
    output.result(`${n} finding${n === 1 ? '' : 's'} in ${lockFile} (${providers} checked ${against})`);
  }
}
