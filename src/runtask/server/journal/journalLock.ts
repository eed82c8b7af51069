/**
 * The lock file of a state dir, `integrator.lock`: it names the pid of the integrator that holds the dir, so that
 * two live integrators never share (and recover each other's) jobs. A lock whose process is gone is taken over;
 * one that cannot be read as a lock (empty, torn, garbage) is set aside, since it cannot name a live owner.
 */
import { join } from 'node:path';
import { mkdirSync, readFileSync } from 'node:fs';
import { UsageError } from '../../../errors.js';
import { writeFileAtomically } from '../../../atomicWrite.js';
import { codeOf } from '../errorCode.js';
import { isRecord } from './journalRecord.js';
import { setAside } from './journalStart.js';
import type { EventLog } from '../log.js';

/** The lock file's name in the state dir. */
export const LOCK_FILE = 'integrator.lock';
/** State dirs held by integrators of this process (a pid check cannot tell them apart). */
export const heldHere = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid a lock file names, or undefined when the text is not a lock file. */
function lockOwner(text: string): number | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (isRecord(value) && Number.isSafeInteger(value.pid) && (value.pid as number) > 0) {
      return value.pid as number;
    }
  } catch {
    // Not JSON: torn or foreign.
  }
  return undefined;
}

/** The pid a lock's text names when that is another live process than this one. */
export function foreignOwner(text: string): number | undefined {
  const owner = lockOwner(text);
  return owner !== undefined && owner !== process.pid && isAlive(owner) ? owner : undefined;
}

/**
 * The pid of another live integrator whose lock is now in `dir` (it started there while the folder was gone), or
 * undefined.
 */
export function lockHolder(dir: string): number | undefined {
  try {
    return foreignOwner(readFileSync(join(dir, LOCK_FILE), 'latin1'));
  } catch {
    return undefined;
  }
}

/** Writes this process's lock into `dir` (atomically). */
export function writeLock(dir: string): void {
  writeFileAtomically(
    join(dir, LOCK_FILE),
    JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }) + '\n',
    { mode: 0o600 },
  );
}

/** What to do about a state dir that cannot be written. */
export function writeHint(error: unknown): string {
  return codeOf(error) === 'ENOSPC'
    ? 'The disk holding --state-dir is full: free some space, or give --state-dir another folder.'
    : 'Give --state-dir a folder the integrator may write to.';
}

/**
 * Creates the state dir `dir` and takes its lock: refuses a dir another live integrator (or another
 * journal of this process) holds, sets aside a lock file that is not one, and writes this process's lock.
 */
export function takeLock(dir: string, log: EventLog): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new UsageError(`cannot create the state dir ${dir}: ${codeOf(error)}`, {
      hint: 'Give --state-dir a folder the integrator may write to.',
    });
  }
  const lock = join(dir, LOCK_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(lock, 'latin1');
  } catch (error) {
    if (codeOf(error) !== 'ENOENT' && codeOf(error) !== 'EISDIR') {
      throw new UsageError(`cannot read ${lock}: ${codeOf(error)}`, {
        hint: 'Give --state-dir a folder the integrator may read and write.',
      });
    }
    if (codeOf(error) === 'EISDIR') text = '';
  }
  let owner: number | undefined;
  if (text !== undefined) {
    owner = lockOwner(text);
    if (owner === undefined) setAside(dir, LOCK_FILE, 'not a lock file', log);
  }
  if (heldHere.has(dir) || (owner !== undefined && owner !== process.pid && isAlive(owner))) {
    throw new UsageError(
      `the state dir ${dir} is in use by another running integrator (pid ${owner ?? process.pid})`,
      {
        hint: `Give each integrator instance its own --state-dir, or stop the other one first. If none is running, delete ${lock}.`,
      },
    );
  }
  try {
    writeLock(dir);
  } catch (error) {
    throw new UsageError(`cannot write ${lock}: ${codeOf(error)}`, { hint: writeHint(error) });
  }
  heldHere.add(dir);
}
