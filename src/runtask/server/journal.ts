/**
 * The job journal in `--state-dir`: one append-only file, `journal.jsonl`, holding a JSON line per record of every
 * accepted job (mode 0600, because it holds the run's access token), and a lock file that keeps two live
 * integrators from sharing (and recovering each other's) jobs.
 *
 * What it survives: the integrator process dying (crash, kill, restart) at any point — a job's record is appended
 * (a write to the kernel) before the platform gets its 200. The file is not fsync'ed by default: an fsync puts the
 * disk's latency into acknowledgements (docs/performance.md).
 * A machine that loses power within seconds of an acceptance may lose that job; the platform then times the task
 * out, which fails the run rather than passing it. With `sync` (JournalOptions), an acceptance also waits for an
 * fdatasync of the file; the syncs are grouped (group commit): while one runs, in libuv's thread pool, the records
 * appended meanwhile wait for the next, which covers them all, so that one sync serves many acknowledgements.
 *
 * Why one file rather than one file per job: creating a file costs an inode, a directory entry and its
 * journaling in the filesystem (docs/performance.md); an append to an open file costs microseconds. A finished
 * job's lines are overwritten with
 * spaces in place (its access token is gone from the file at once, as an unlinked file's would be from the
 * folder), and the file is rewritten without the blanks once they outweigh the live records (or truncated when
 * no job is live). A state dir an older version left (`job-<id>.json` files) is read at the start, its records
 * moved into the file.
 *
 * Every rewrite (the file, the lock) goes to a temp file that is synced and renamed into place, so that a kill or
 * a full disk mid-write never leaves a torn file under the real name; an append that fails midway is cut off
 * again. What a start finds unreadable anyway (lines that are not records, a torn or foreign legacy file, an
 * empty lock left by an older version or by a power loss) is set aside as `<name>.corrupt-<time>` with a log
 * line, and the start goes on.
 *
 * While serving, the folder may vanish (the default lives under the temp folder, where cleaners delete things),
 * be replaced, or fill up. The journal keeps the latest record of every live job in memory, so such failures
 * never reach the caller as exceptions: a write that fails is reported (false, a log line, /healthz), and the
 * journal re-creates the folder, its lock and every live record as soon as it can (at once, on each /healthz,
 * and once a second while it is failing). A file removed under the open descriptor is noticed by its link count,
 * checked after every append, so that no acknowledgement rests on a file that is no longer in the folder.
 *
 * The appends are synchronous on purpose (microseconds, less than a round trip through the thread pool), one per
 * turn of the event loop for all the records of that turn; only the syncs, which wait for the disk, are not.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../../errors.js';
import type { EventLog } from './log.js';
import type { AcceptOutcome, JobRecord, JobStore, StoreHealth, StoreProblem } from './store.js';
import { checkTaskResult } from '../../terraform/runtask/result.js';

export type { JobPhase, JobRecord } from './store.js';
/** A problem the journal met while serving. */
export type JournalProblem = StoreProblem;
/** What /healthz says about the journal. */
export type JournalHealth = StoreHealth;

const LOCK = 'integrator.lock';
/** The journal file: one JSON record per line; blank lines are finished jobs. */
export const JOURNAL_FILE = 'journal.jsonl';
/** The one-file-per-job records of older versions, read (and removed) at the start. */
const PREFIX = 'job-';
/** The temp files this journal writes: `.<final name>.<12 hex>.tmp`. */
const TEMP = /^\.(?:job-.+|integrator\.lock|journal\.jsonl)\.[0-9a-f]{12}\.tmp$/;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
/** How often a failing journal tries again, and a healthy one checks that its folder is still there. */
const CHECK_MS = 1000;
/** Blanked bytes past which the file is rewritten, when they also outweigh the live records. */
const COMPACT_BYTES = 1024 * 1024;
/** Rewrites are written in pieces of about this size. */
const CHUNK_BYTES = 256 * 1024;
/** State dirs held by integrators of this process (a pid check cannot tell them apart). */
const heldHere = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
}

/** An error with a code, for failures found without a system call failing (a file removed under the journal). */
function coded(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Writes `text` to `path` through a temp file and a rename, so that `path` is always whole or absent. */
function writeAtomically(dir: string, name: string, text: string): void {
  const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, text, { flag: 'wx', mode: 0o600 });
    renameSync(temp, join(dir, name));
  } catch (error) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The folder itself is gone or unusable: there is no temp file left to remove.
    }
    throw error;
  }
}

/** Writes all of `buffer` at `position` (a regular file may take a write in parts). */
function writeAll(fd: number, buffer: Buffer, position: number): void {
  let done = 0;
  while (done < buffer.length) {
    done += writeSync(fd, buffer, done, buffer.length - done, position + done);
  }
}

/** Makes a rename in `dir` durable; best effort (some filesystems cannot sync a folder). */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // EINVAL/EISDIR where folders cannot be synced: the rename is as durable as that filesystem makes it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A line of spaces (and its newline) as long as `length`: what a finished job's line becomes. */
function blankLine(length: number): Buffer {
  const line = Buffer.alloc(length, 0x20);
  line[length - 1] = 0x0a;
  return line;
}

/** The record in a line or a legacy file, or why it is not one (a legacy file must name its own record). */
function readRecord(text: string, name?: string): JobRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text === '' ? 'empty' : 'not JSON';
  }
  if (!isRecord(value)) return 'not a JSON object';
  if (value.version !== 1) return 'not a version 1 record';
  if (
    typeof value.id !== 'string' ||
    !ID.test(value.id) ||
    (name !== undefined && name !== `${PREFIX}${value.id}.json`)
  ) {
    return name === undefined ? 'no valid id' : 'its id does not match its file name';
  }
  if (typeof value.acceptedAt !== 'string' || Number.isNaN(Date.parse(value.acceptedAt))) {
    return 'no valid acceptedAt';
  }
  if (value.phase !== 'accepted' && value.phase !== 'reporting') return 'an unknown phase';
  if (!isRecord(value.request)) return 'no request object';
  const record: JobRecord = {
    version: 1,
    id: value.id,
    acceptedAt: value.acceptedAt,
    phase: value.phase,
    request: value.request,
  };
  const started = value.checkStartedAt;
  if (started === null || (typeof started === 'string' && !Number.isNaN(Date.parse(started))))
    record.checkStartedAt = started;
  if (value.phase === 'reporting') {
    const checked = checkTaskResult(value.result, ['passed', 'failed']);
    if (checked.result === undefined) return 'no valid final result';
    record.result = checked.result;
  }
  return record;
}

/** The live records in a journal file's text (the last line of a job wins; blank lines are finished jobs). */
function readJournal(text: string): { records: Map<string, JobRecord>; bad: string[]; reasons: string[] } {
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

/** True when a folder holds records of unfinished jobs (a journal file with a record, or legacy files). */
export function holdsJobRecords(dir: string): boolean {
  try {
    for (const name of readdirSync(dir)) {
      if (name.startsWith(PREFIX) && name.endsWith('.json')) return true;
      if (name === JOURNAL_FILE && /\S/.test(readFileSync(join(dir, name), 'utf8'))) return true;
    }
  } catch {
    // Unreadable: nothing this start can recover from it.
  }
  return false;
}

/** How the journal writes. */
export interface JournalOptions {
  /**
   * Sync the file before an acceptance or a final result resolves (grouped: one sync covers every record appended
   * while the previous one ran), so that a power loss right after the 200 loses nothing. Off by default: the
   * records are with the kernel before the 200, which a crash or kill of the process cannot lose, and a sync puts
   * the disk's latency (milliseconds; far more on a busy disk) into every acknowledgement.
   */
  sync?: boolean;
}

/** Who waits for a sync: the job whose line it covers. */
interface Waiter {
  id: string;
  resolve: (synced: boolean) => void;
}

/** The journal of one integrator: the job store of one machine. */
export class Journal implements JobStore {
  /** Only this process's jobs are ever here (the lock): nothing to take over after the start. */
  readonly takeOverEveryMs = undefined;
  /** The records a previous process left, read at the start; handed over once, on the first `takeOver`. */
  private leftover: JobRecord[] | undefined = [];
  /** The latest record of every live job: what the file should hold, re-written from here after a loss. */
  private readonly live = new Map<string, JobRecord>();
  /** The latest line of every live job, as written: a rewrite copies these rather than serializing again. */
  private readonly lines = new Map<string, Buffer>();
  /** Live jobs whose latest record is not known to be in the file. */
  private readonly unsaved = new Set<string>();
  /** The journal file, open for writing at positions (never O_APPEND: blanking writes into the middle). */
  private fd: number | undefined;
  /** Where the next line goes. */
  private size = 0;
  /** Bytes of blanked lines in the file. */
  private blanked = 0;
  /** Where each live job's lines are in the file: [offset, length]. */
  private spans = new Map<string, [number, number][]>();
  /** Lines to append at the end of this turn of the event loop, and the saves waiting for them. */
  private pendingLines: { id: string; line: Buffer; resolve: (written: boolean) => void }[] = [];
  /** Appended lines waiting for the next sync, and whether one is running. */
  private waiters: Waiter[] = [];
  private syncing: Promise<void> | undefined;
  /** Descriptors of replaced files, closed once the sync running on one of them is over. */
  private retired: number[] = [];
  private failing = false;
  /** The pid of another live integrator that took this state dir after it was removed: never written again. */
  private takenBy: number | undefined;
  private problems = 0;
  private lastProblem: JournalProblem | undefined;
  private readonly timer: NodeJS.Timeout;

  readonly kind = 'journal';

  get where(): string {
    return this.dir;
  }

  private constructor(
    readonly dir: string,
    private readonly log: EventLog,
    /** Each acceptance waits for a sync of the file (grouped): see `JournalOptions.sync`. */
    private readonly durable: boolean,
  ) {
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  /**
   * Opens (creating) the state dir and takes its lock; refuses a dir another live integrator holds. A lock file
   * that cannot be read as one (empty, torn, garbage) is set aside: it cannot name a live owner. Then reads what
   * a previous process left (the journal file, and the files of an older version), and starts a fresh file with it.
   */
  static open(dir: string, log: EventLog, options: JournalOptions = {}): Journal {
    const full = resolve(dir);
    try {
      mkdirSync(full, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new UsageError(`cannot create the state dir ${full}: ${codeOf(error)}`, {
        hint: 'Give --state-dir a folder the integrator may write to.',
      });
    }
    const lock = join(full, LOCK);
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
      owner = Journal.lockOwner(text);
      if (owner === undefined) Journal.setAside(full, LOCK, 'not a lock file', log);
    }
    if (heldHere.has(full) || (owner !== undefined && owner !== process.pid && isAlive(owner))) {
      throw new UsageError(
        `the state dir ${full} is in use by another running integrator (pid ${owner ?? process.pid})`,
        {
          hint: `Give each integrator instance its own --state-dir, or stop the other one first. If none is running, delete ${lock}.`,
        },
      );
    }
    const hint = (error: unknown): string =>
      codeOf(error) === 'ENOSPC'
        ? 'The disk holding --state-dir is full: free some space, or give --state-dir another folder.'
        : 'Give --state-dir a folder the integrator may write to.';
    try {
      writeAtomically(full, LOCK, Journal.lockText());
    } catch (error) {
      throw new UsageError(`cannot write ${lock}: ${codeOf(error)}`, { hint: hint(error) });
    }
    heldHere.add(full);
    const journal = new Journal(full, log, options.sync === true);
    try {
      journal.load();
    } catch (error) {
      clearInterval(journal.timer);
      heldHere.delete(full);
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot write ${join(full, JOURNAL_FILE)}: ${codeOf(error)}`, {
        hint: hint(error),
      });
    }
    return journal;
  }

  /** The pid a lock file names, or undefined when the text is not a lock file. */
  private static lockOwner(text: string): number | undefined {
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

  private static lockText(): string {
    return JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }) + '\n';
  }

  private static asideName(name: string): string {
    return `${name}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  }

  /** Renames a file that cannot be used to `<name>.corrupt-<time>`, and says so. */
  private static setAside(dir: string, name: string, reason: string, log: EventLog): void {
    const movedTo = Journal.asideName(name);
    try {
      renameSync(join(dir, name), join(dir, movedTo));
    } catch (error) {
      throw new UsageError(`cannot set aside ${join(dir, name)} (${reason}): ${codeOf(error)}`, {
        hint: `Move ${join(dir, name)} away yourself, or give --state-dir another folder.`,
      });
    }
    Journal.saidAside(name, movedTo, reason, log);
  }

  private static saidAside(name: string, movedTo: string, reason: string, log: EventLog): void {
    log.warn('journal.set_aside', `${name} in the state dir is ${reason}: moved it aside to ${movedTo}`, {
      file: name,
      moved_to: movedTo,
      reason,
    });
  }

  /**
   * Reads what a previous process left: the journal file (lines that are not records are copied aside to
   * `journal.jsonl.corrupt-<time>`) and the one-file-per-job records of an older version (set aside one by one
   * when unreadable). Writes them into a fresh journal file, then removes the older files.
   */
  private load(): void {
    const found = new Map<string, JobRecord>();
    const legacy: string[] = [];
    for (const name of readdirSync(this.dir)) {
      if (TEMP.test(name)) {
        // A write that never reached its rename: the previous file (if any) is still in place.
        rmSync(join(this.dir, name), { force: true });
        continue;
      }
      if (!name.startsWith(PREFIX) || !name.endsWith('.json')) continue;
      let text: string;
      try {
        text = readFileSync(join(this.dir, name), 'utf8');
      } catch (error) {
        Journal.setAside(this.dir, name, `unreadable (${codeOf(error)})`, this.log);
        continue;
      }
      const record = readRecord(text, name);
      if (typeof record === 'string') {
        Journal.setAside(this.dir, name, `not a job record (${record})`, this.log);
        continue;
      }
      found.set(record.id, record);
      legacy.push(name);
    }
    let text = '';
    try {
      text = readFileSync(join(this.dir, JOURNAL_FILE), 'utf8');
    } catch (error) {
      if (codeOf(error) !== 'ENOENT') {
        Journal.setAside(this.dir, JOURNAL_FILE, `unreadable (${codeOf(error)})`, this.log);
      }
    }
    const { records, bad, reasons } = readJournal(text);
    for (const [id, record] of records) found.set(id, record);
    if (bad.length > 0) {
      const movedTo = Journal.asideName(JOURNAL_FILE);
      writeFileSync(join(this.dir, movedTo), bad.join('\n') + '\n', { flag: 'wx', mode: 0o600 });
      const reason = `${bad.length} line(s) that are not job records (${[...new Set(reasons)].join(', ')})`;
      Journal.saidAside(JOURNAL_FILE, movedTo, reason, this.log);
    }
    const leftover = [...found.values()].sort((a, b) => a.acceptedAt.localeCompare(b.acceptedAt));
    for (const record of leftover) this.live.set(record.id, record);
    this.leftover = leftover;
    this.rewrite();
    for (const name of legacy) rmSync(join(this.dir, name), { force: true });
  }

  /**
   * Writes every live record into a fresh journal file (temp, sync, rename, folder sync) and switches to it: the
   * start, a repair, and a compaction. Throws when the folder cannot be written (nothing is switched then).
   */
  private rewrite(): void {
    const temp = join(this.dir, `.${JOURNAL_FILE}.${randomBytes(6).toString('hex')}.tmp`);
    const spans = new Map<string, [number, number][]>();
    let fd: number | undefined;
    let size = 0;
    try {
      fd = openSync(temp, 'wx', 0o600);
      let chunk: Buffer[] = [];
      let chunkBytes = 0;
      const flush = (): void => {
        writeAll(fd!, Buffer.concat(chunk, chunkBytes), size - chunkBytes);
        chunk = [];
        chunkBytes = 0;
      };
      for (const [id, record] of this.live) {
        let line = this.lines.get(id);
        if (line === undefined) {
          line = Buffer.from(JSON.stringify(record) + '\n');
          this.lines.set(id, line);
        }
        spans.set(id, [[size, line.length]]);
        chunk.push(line);
        chunkBytes += line.length;
        size += line.length;
        if (chunkBytes >= CHUNK_BYTES) flush();
      }
      if (chunkBytes > 0) flush();
      fdatasyncSync(fd);
      renameSync(temp, join(this.dir, JOURNAL_FILE));
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      try {
        rmSync(temp, { force: true });
      } catch {
        // The folder itself is gone or unusable: there is no temp file left to remove.
      }
      throw error;
    }
    syncDir(this.dir);
    this.retire();
    this.fd = fd;
    this.size = size;
    this.blanked = 0;
    this.spans = spans;
    this.unsaved.clear();
    // Every live record is synced in the new file: whoever waits for a sync of the old one, or for an append, may
    // go on.
    for (const waiter of this.waiters.splice(0)) waiter.resolve(true);
    for (const line of this.pendingLines.splice(0)) line.resolve(true);
  }

  /** Lets go of the current file's descriptor (now, or once the sync running on it is over). */
  private retire(): void {
    if (this.fd === undefined) return;
    this.retired.push(this.fd);
    this.fd = undefined;
    if (this.syncing === undefined) this.closeRetired();
  }

  private closeRetired(): void {
    for (const fd of this.retired.splice(0)) {
      try {
        closeSync(fd);
      } catch {
        // Already unusable: nothing to release.
      }
    }
  }

  /**
   * Writes a job's record; resolves true once it is in the file and synced. On false the job is known here only
   * (it is re-written once the folder can be written again), the failure is logged, and /healthz says so: a new
   * job should then be refused (before its 200), a job already accepted still runs and reports.
   */
  private async save(record: JobRecord): Promise<boolean> {
    this.live.set(record.id, record);
    const line = Buffer.from(JSON.stringify(record) + '\n');
    this.lines.set(record.id, line);
    this.unsaved.add(record.id);
    if (!this.failing && this.fd !== undefined) {
      const written = await new Promise<boolean>((resolve) => {
        this.pendingLines.push({ id: record.id, line, resolve });
        if (this.pendingLines.length === 1) setImmediate(() => this.flush());
      });
      if (written) return true;
      if (!this.live.has(record.id)) return false;
      this.unsaved.add(record.id);
    }
    // A cleaner still removing the folder can take it away again mid-repair: a few tries, then 503.
    for (let attempt = 0; attempt < 3 && this.unsaved.has(record.id); attempt++) {
      this.repair();
      if (this.lastProblem?.code !== 'ENOENT') break;
    }
    return !this.unsaved.has(record.id);
  }

  /**
   * Appends the lines queued in this turn of the event loop in one write (the requests read in one turn are
   * acknowledged in the next, so a busy integrator writes once per turn rather than once per request), checks that
   * the file is still in the folder, and resolves their saves: at once, or after a sync (`durable`).
   */
  private flush(): void {
    const batch = this.pendingLines.splice(0);
    if (batch.length === 0) return;
    if (this.failing || this.fd === undefined) {
      for (const line of batch) line.resolve(false);
      return;
    }
    const offset = this.size;
    let bytes = 0;
    for (const line of batch) bytes += line.line.length;
    try {
      writeAll(
        this.fd,
        batch.length === 1
          ? batch[0]!.line
          : Buffer.concat(
              batch.map((line) => line.line),
              bytes,
            ),
        offset,
      );
    } catch (error) {
      try {
        // Lines cut short by a full disk must not stay in the middle of the file.
        ftruncateSync(this.fd, offset);
      } catch {
        // The next rewrite replaces the whole file anyway.
      }
      this.problem(error, `cannot write the record of job ${batch[0]!.id}`);
      for (const line of batch) line.resolve(false);
      return;
    }
    let at = offset;
    for (const { id, line } of batch) {
      const spans = this.spans.get(id);
      if (spans === undefined) this.spans.set(id, [[at, line.length]]);
      else spans.push([at, line.length]);
      at += line.length;
    }
    this.size = at;
    if (this.removedUnder()) {
      for (const line of batch) line.resolve(false);
      return;
    }
    for (const { id } of batch) this.unsaved.delete(id);
    if (this.durable) {
      for (const { id, resolve } of batch) this.waiters.push({ id, resolve });
      this.sync();
    } else for (const line of batch) line.resolve(true);
  }

  /**
   * Starts a sync for every line appended since the last one started (group commit), unless one is running: the
   * lines appended meanwhile wait for the next. After each sync, the file is checked to still be in the folder.
   */
  private sync(): void {
    if (this.syncing !== undefined || this.waiters.length === 0 || this.fd === undefined) return;
    const fd = this.fd;
    const batch = this.waiters.splice(0);
    this.syncing = new Promise<void>((done) => {
      fdatasync(fd, (error) => {
        this.syncing = undefined;
        const synced = error === null;
        if (fd === this.fd && error !== null) this.problem(error, 'cannot sync the journal file', true);
        this.closeRetired();
        // A rewrite meanwhile synced every live record in its new file.
        for (const waiter of batch)
          waiter.resolve((synced || fd !== this.fd) && !this.unsaved.has(waiter.id));
        done();
        this.sync();
      });
    });
  }

  /** True (and a problem) when the journal file is no longer in the folder (removed, or the folder replaced). */
  private removedUnder(): boolean {
    if (this.fd === undefined || this.takenBy !== undefined) return false;
    let links: number;
    try {
      links = fstatSync(this.fd).nlink;
    } catch (error) {
      this.problem(error, 'cannot check the journal file');
      return true;
    }
    if (links > 0) return false;
    // Say what happened to the folder, as a write into it would have.
    let code = 'ENOENT';
    try {
      if (!statSync(this.dir).isDirectory()) code = 'ENOTDIR';
    } catch (error) {
      code = codeOf(error);
    }
    this.problem(coded(code, 'removed'), 'the journal file is no longer in the state dir');
    return true;
  }

  /** Forgets a job (its final callback is delivered, or can never be, or it was refused before its 200). */
  remove(id: string): void {
    this.live.delete(id);
    this.lines.delete(id);
    this.unsaved.delete(id);
    const spans = this.spans.get(id) ?? [];
    this.spans.delete(id);
    if (this.takenBy !== undefined || this.fd === undefined) return;
    try {
      // Its access token leaves the file now (the blanks are written over the lines in place).
      for (const [offset, length] of spans) {
        writeAll(this.fd, blankLine(length), offset);
        this.blanked += length;
      }
      if (this.failing) return;
      if (this.live.size === 0) {
        ftruncateSync(this.fd, 0);
        this.size = 0;
        this.blanked = 0;
      } else if (this.blanked >= COMPACT_BYTES && this.blanked * 2 >= this.size) {
        this.rewrite();
      }
    } catch (error) {
      // The folder is unusable; a repair writes the file without this record once it is not.
      this.problem(error, `cannot remove the record of job ${id}`);
    }
  }

  /**
   * What /healthz reports. Checks first that the folder and its lock are still there (one read), so that a
   * removed folder is noticed and re-created by the next health check at the latest.
   */
  health(): JournalHealth {
    this.check();
    return {
      status: this.failing ? 'failing' : 'ok',
      problems: this.problems,
      ...(this.lastProblem === undefined ? {} : { lastProblem: this.lastProblem }),
      unsaved: this.unsaved.size,
    };
  }

  /** Repairs a failing journal, or notices a removed folder, lock or file (then repairs). */
  private check(): void {
    if (this.takenBy !== undefined) return;
    if (!this.failing) {
      let text: string;
      try {
        text = readFileSync(join(this.dir, LOCK), 'latin1');
      } catch (error) {
        this.problem(error, 'the state dir or its lock file is gone');
        for (const id of this.live.keys()) this.unsaved.add(id);
        return this.repair();
      }
      const other = Journal.foreignOwner(text);
      if (other !== undefined) return this.yieldTo(other);
      if (this.removedUnder()) this.repair();
      return;
    }
    this.repair();
  }

  /**
   * The pid of another live integrator whose lock is now in the state dir (it started there while the folder was
   * gone), or undefined.
   */
  private otherOwner(): number | undefined {
    try {
      return Journal.foreignOwner(readFileSync(join(this.dir, LOCK), 'latin1'));
    } catch {
      return undefined;
    }
  }

  /** The pid a lock's text names when that is another live process than this one. */
  private static foreignOwner(text: string): number | undefined {
    const owner = Journal.lockOwner(text);
    return owner !== undefined && owner !== process.pid && isAlive(owner) ? owner : undefined;
  }

  /**
   * Leaves the state dir to the integrator that took it: this one never writes or removes anything there again
   * (its accepted jobs still run and report; new ones are refused with 503 until it is restarted on a folder of
   * its own), and says so once.
   */
  private yieldTo(pid: number): void {
    if (this.takenBy !== undefined) return;
    this.takenBy = pid;
    this.failing = true;
    this.problems++;
    this.lastProblem = {
      at: new Date().toISOString(),
      code: 'ETAKEN',
      message: `the state dir is now held by another integrator (pid ${pid})`,
    };
    this.retire();
    this.log.error(
      'journal.taken',
      `another integrator (pid ${pid}) took the state dir ${this.dir} while it was gone: this one stops journaling; restart it with its own --state-dir`,
      { state_dir: this.dir, pid, jobs: this.live.size },
    );
  }

  /** Notes a failure; the first of an incident is logged and counted, the rest only update `lastProblem`. */
  private problem(error: unknown, what: string, everyRecord = false): void {
    const code = codeOf(error);
    this.lastProblem = { at: new Date().toISOString(), code, message: `${what}: ${code}` };
    if (everyRecord || code === 'ENOENT' || code === 'ENOTDIR') {
      // The file is gone (or the folder replaced), or a sync failed: every live record must be written again.
      for (const id of this.live.keys()) this.unsaved.add(id);
    }
    if (this.failing) return;
    this.failing = true;
    this.problems++;
    this.log.error('journal.failed', `the journal in ${this.dir} failed: ${what}: ${code}`, {
      code,
      state_dir: this.dir,
      jobs: this.live.size,
    });
  }

  /**
   * Re-creates the folder, its lock and the journal file with every live record; stops at the first failure (the
   * folder is still unusable). Leaves the journal failing or ok.
   */
  private repair(): void {
    let recreated = false;
    const other = this.takenBy ?? this.otherOwner();
    if (other !== undefined) return this.yieldTo(other);
    const written = this.unsaved.size;
    try {
      recreated = mkdirSync(this.dir, { recursive: true, mode: 0o700 }) !== undefined;
      writeAtomically(this.dir, LOCK, Journal.lockText());
      this.rewrite();
    } catch (error) {
      this.problem(
        error,
        recreated ? 'cannot write in the re-created state dir' : 'cannot write the state dir',
      );
      return;
    }
    if (!this.failing) return;
    this.failing = false;
    this.log.info(
      'journal.restored',
      `the journal in ${this.dir} works again${recreated ? ' (folder re-created)' : ''}; re-wrote ${written} job record(s)`,
      { state_dir: this.dir, recreated, records: written, jobs: this.live.size },
    );
  }

  /** JobStore: a job already live in this journal is a duplicate; a record not on disk is forgotten again. */
  async accept(record: JobRecord): Promise<AcceptOutcome> {
    if (this.live.has(record.id)) return 'duplicate';
    if (await this.save(record)) return 'accepted';
    this.remove(record.id);
    return 'unsaved';
  }

  /** JobStore: the check's start, written before it starts (re-written when unsaved, as every record). */
  async started(record: JobRecord): Promise<'stored' | 'unsaved'> {
    return (await this.save(record)) ? 'stored' : 'unsaved';
  }

  /** JobStore: the final result, written before its delivery (kept in memory and re-written when unsaved). */
  report(record: JobRecord): Promise<boolean> {
    return this.save(record);
  }

  /** JobStore: the record (and its token) removed. */
  finish(id: string): Promise<void> {
    this.remove(id);
    return Promise.resolve();
  }

  /** JobStore: what a previous process left, on the first call; nothing after that (the lock keeps others out). */
  takeOver(): Promise<JobRecord[]> {
    const records = this.leftover ?? [];
    this.leftover = undefined;
    return Promise.resolve(records);
  }

  /**
   * Gives up the lock; `keepLockFile` leaves the file behind as a crash would (for tests of recovery). Jobs still
   * live stay in the journal for the next start; those whose record could not be written are lost, and said so.
   * With no job left, the journal file goes too.
   */
  async release(options: { keepLockFile?: boolean; crash?: boolean } = {}): Promise<void> {
    clearInterval(this.timer);
    heldHere.delete(this.dir);
    this.flush();
    while (this.syncing !== undefined) await this.syncing;
    if (this.unsaved.size > 0) this.repair();
    if (this.unsaved.size > 0) {
      this.log.error(
        'journal.lost',
        `${this.unsaved.size} unfinished job(s) could not be written to ${this.dir}: the next start cannot report them`,
        { state_dir: this.dir, jobs: this.unsaved.size },
      );
    }
    const clean = !options.keepLockFile && !options.crash && this.takenBy === undefined;
    const empty = this.live.size === 0 && this.fd !== undefined;
    this.retire();
    if (!clean) return;
    try {
      if (empty) rmSync(join(this.dir, JOURNAL_FILE), { force: true });
      rmSync(join(this.dir, LOCK), { force: true });
    } catch {
      // The folder is gone or unusable: no lock is left to remove.
    }
  }
}
