/**
 * The format of the journal's files in `--state-dir`: `journal.jsonl`, one JSON job record per line (the last line
 * of a job wins; a line of spaces is a finished job), and the temp files the journal writes. Reads and validates
 * records, so that a start takes only whole, well-formed ones.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobRecord } from '../store.js';
import { checkTaskResult } from '../../../terraform/runtask/result.js';

/** The journal file: one JSON record per line; blank lines are finished jobs. */
export const JOURNAL_FILE = 'journal.jsonl';
/** The temp files this journal writes: `.<final name>.<12 hex>.tmp`. */
export const TEMP_FILE = /^\.(?:integrator\.lock|journal\.jsonl)\.[0-9a-f]{12}\.tmp$/;
const ID = /^[A-Za-z0-9_-]{1,128}$/;

/** True for a JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The line a record is written as. */
export function recordLine(record: JobRecord): Buffer {
  return Buffer.from(JSON.stringify(record) + '\n');
}

/** A line of spaces (and its newline) as long as `length`: what a finished job's line becomes. */
export function blankLine(length: number): Buffer {
  const line = Buffer.alloc(length, 0x20);
  line[length - 1] = 0x0a;
  return line;
}

/** The record in a line, or why it is not one. */
export function readRecord(text: string): JobRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text === '' ? 'empty' : 'not JSON';
  }
  if (!isRecord(value)) return 'not a JSON object';
  if (value.version !== 1) return 'not a version 1 record';
  if (typeof value.id !== 'string' || !ID.test(value.id)) return 'no valid id';
  if (typeof value.acceptedAt !== 'string' || Number.isNaN(Date.parse(value.acceptedAt))) {
    return 'no valid acceptedAt';
  }
  if (value.phase !== 'accepted' && value.phase !== 'reporting') return 'an unknown phase';
  if (!isRecord(value.request)) return 'no request object';
  const started = value.checkStartedAt;
  if (started !== null && (typeof started !== 'string' || Number.isNaN(Date.parse(started))))
    return 'no valid checkStartedAt';
  const record: JobRecord = {
    version: 1,
    id: value.id,
    acceptedAt: value.acceptedAt,
    phase: value.phase,
    request: value.request,
    checkStartedAt: started,
  };
  if (value.phase === 'reporting') {
    const checked = checkTaskResult(value.result, ['passed', 'failed']);
    if (checked.result === undefined) return 'no valid final result';
    record.result = checked.result;
  }
  return record;
}

/** The live records in a journal file's text (the last line of a job wins; blank lines are finished jobs). */
export function readJournal(text: string): {
  records: Map<string, JobRecord>;
  bad: string[];
  reasons: string[];
} {
  const records = new Map<string, JobRecord>();
  const bad: string[] = [];
  const reasons: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const record = readRecord(line);
    if (typeof record === 'string') {
      bad.push(line);
      reasons.push(record);
    } else records.set(record.id, record);
  }
  return { records, bad, reasons };
}

/** True when a folder holds records of unfinished jobs (a journal file with a record). */
export function holdsJobRecords(dir: string): boolean {
  try {
    return /\S/.test(readFileSync(join(dir, JOURNAL_FILE), 'utf8'));
  } catch {
    // Missing or unreadable: nothing this start can recover from it.
    return false;
  }
}
