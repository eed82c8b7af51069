/**
 * What a starting journal finds in its state dir: the records a previous process left in the journal file, and
 * what cannot be read as such, which is set aside as `<name>.corrupt-<time>` with a log line so that the start
 * goes on: lines that are not records, an empty lock left by a power loss. Temp files of writes that never
 * reached their rename are removed.
 */
import { readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../../errors.js';
import { codeOf } from '../errorCode.js';
import { JOURNAL_FILE, TEMP_FILE, readJournal } from './journalRecord.js';
import type { EventLog } from '../log.js';
import type { JobRecord } from '../store.js';

/** The name a file set aside gets: `<name>.corrupt-<time>`. */
function asideName(name: string): string {
  return `${name}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
}

function saidAside(name: string, movedTo: string, reason: string, log: EventLog): void {
  log.warn('journal.set_aside', `${name} in the state dir is ${reason}: moved it aside to ${movedTo}`, {
    file: name,
    moved_to: movedTo,
    reason,
  });
}

/** Renames a file that cannot be used to `<name>.corrupt-<time>`, and says so. */
export function setAside(dir: string, name: string, reason: string, log: EventLog): void {
  const movedTo = asideName(name);
  try {
    renameSync(join(dir, name), join(dir, movedTo));
  } catch (error) {
    throw new UsageError(`cannot set aside ${join(dir, name)} (${reason}): ${codeOf(error)}`, {
      hint: `Move ${join(dir, name)} away yourself, or give --state-dir another folder.`,
    });
  }
  saidAside(name, movedTo, reason, log);
}

/**
 * Reads what a previous process left: the live records of the journal file, oldest first (lines that are not
 * records are copied aside to `journal.jsonl.corrupt-<time>`).
 */
export function readLeftover(dir: string, log: EventLog): JobRecord[] {
  for (const name of readdirSync(dir)) {
    // A write that never reached its rename: the previous file (if any) is still in place.
    if (TEMP_FILE.test(name)) rmSync(join(dir, name), { force: true });
  }
  let text = '';
  try {
    text = readFileSync(join(dir, JOURNAL_FILE), 'utf8');
  } catch (error) {
    if (codeOf(error) !== 'ENOENT') {
      setAside(dir, JOURNAL_FILE, `unreadable (${codeOf(error)})`, log);
    }
  }
  const { records, bad, reasons } = readJournal(text);
  if (bad.length > 0) {
    const movedTo = asideName(JOURNAL_FILE);
    writeFileSync(join(dir, movedTo), bad.join('\n') + '\n', { flag: 'wx', mode: 0o600 });
    const reason = `${bad.length} line(s) that are not job records (${[...new Set(reasons)].join(', ')})`;
    saidAside(JOURNAL_FILE, movedTo, reason, log);
  }
  return [...records.values()].sort((a, b) => a.acceptedAt.localeCompare(b.acceptedAt));
}
