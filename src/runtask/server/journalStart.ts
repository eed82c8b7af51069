/**
 * What a starting journal finds in its state dir: the records a previous process left (the journal file, and the
 * one-file-per-job records of an older version), and what cannot be read as such, which is set aside as
 * `<name>.corrupt-<time>` with a log line so that the start goes on: lines that are not records, a torn or foreign
 * legacy file, an empty lock left by an older version or by a power loss. Temp files of writes that never reached
 * their rename are removed.
 */
import { readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../errors.js';
import { codeOf } from './errorCode.js';
import { JOURNAL_FILE, LEGACY_PREFIX, TEMP_FILE, readJournal, readRecord } from './journalRecord.js';
import type { EventLog } from './log.js';
import type { JobRecord } from './store.js';

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

/** What a previous process left: its live records, oldest first, and the legacy files they were read from. */
export interface Leftover {
  records: JobRecord[];
  /** The `job-<id>.json` files read: removed once their records are in the new journal file. */
  legacy: string[];
}

/**
 * Reads what a previous process left: the journal file (lines that are not records are copied aside to
 * `journal.jsonl.corrupt-<time>`) and the one-file-per-job records of an older version (set aside one by one
 * when unreadable). A record in the journal file wins over a legacy file of the same job.
 */
export function readLeftover(dir: string, log: EventLog): Leftover {
  const found = new Map<string, JobRecord>();
  const legacy: string[] = [];
  for (const name of readdirSync(dir)) {
    if (TEMP_FILE.test(name)) {
      // A write that never reached its rename: the previous file (if any) is still in place.
      rmSync(join(dir, name), { force: true });
      continue;
    }
    if (!name.startsWith(LEGACY_PREFIX) || !name.endsWith('.json')) continue;
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch (error) {
      setAside(dir, name, `unreadable (${codeOf(error)})`, log);
      continue;
    }
    const record = readRecord(text, name);
    if (typeof record === 'string') {
      setAside(dir, name, `not a job record (${record})`, log);
      continue;
    }
    found.set(record.id, record);
    legacy.push(name);
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
  for (const [id, record] of records) found.set(id, record);
  if (bad.length > 0) {
    const movedTo = asideName(JOURNAL_FILE);
    writeFileSync(join(dir, movedTo), bad.join('\n') + '\n', { flag: 'wx', mode: 0o600 });
    const reason = `${bad.length} line(s) that are not job records (${[...new Set(reasons)].join(', ')})`;
    saidAside(JOURNAL_FILE, movedTo, reason, log);
  }
  return {
    records: [...found.values()].sort((a, b) => a.acceptedAt.localeCompare(b.acceptedAt)),
    legacy,
  };
}
