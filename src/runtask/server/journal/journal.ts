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
 * One file rather than one file per job, its finished lines blanked in place (journalFile.ts); every rewrite (the
 * file, the lock) goes to a temp file renamed into place (atomicWrite.ts); what a start finds unreadable is set
 * aside and the start goes on (journalStart.ts).
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
 *
 * Its other parts: the record format (journalRecord.ts), the lock (journalLock.ts), the group commit
 * (journalSync.ts) and the incidents (journalIncidents.ts). This module is the store: the live records, the
 * appends, the repairs.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../../../errors.js';
import { codeOf, coded } from '../errorCode.js';
import { JournalFile, goneCode, type JobLine } from './journalFile.js';
import { JournalIncidents } from './journalIncidents.js';
import {
  LOCK_FILE,
  foreignOwner,
  heldHere,
  lockHolder,
  takeLock,
  writeHint,
  writeLock,
} from './journalLock.js';
import { JOURNAL_FILE, recordLine } from './journalRecord.js';
import { readLeftover } from './journalStart.js';
import { GroupCommit, type JournalOptions } from './journalSync.js';
import type { EventLog } from '../log.js';
import type { AcceptOutcome, JobRecord, JobStore, StoreHealth } from '../store.js';

export type { JobPhase, JobRecord } from '../store.js';
export { JOURNAL_FILE, holdsJobRecords } from './journalRecord.js';
export type { JournalOptions } from './journalSync.js';

/** How often a failing journal tries again, and a healthy one checks that its folder is still there. */
const CHECK_MS = 1000;

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
  /** The journal file, while it is open. */
  private file: JournalFile | undefined;
  /** Lines to append at the end of this turn of the event loop, and the saves waiting for them. */
  private pendingLines: (JobLine & { resolve: (written: boolean) => void })[] = [];
  /** The syncs of the file (`durable`). */
  private readonly commits = new GroupCommit({
    openFile: () => this.file,
    syncFailed: (error) => this.problem(error, 'cannot sync the journal file', true),
    isUnsaved: (id) => this.unsaved.has(id),
  });
  private readonly incidents: JournalIncidents;
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
    this.incidents = new JournalIncidents(dir, log);
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  /**
   * Opens (creating) the state dir and takes its lock (journalLock.ts); refuses a dir another live integrator
   * holds. Then reads what a previous process left in the journal file, and starts a fresh file with it.
   */
  static open(dir: string, log: EventLog, options: JournalOptions = {}): Journal {
    const full = resolve(dir);
    takeLock(full, log);
    const journal = new Journal(full, log, options.sync === true);
    try {
      journal.load();
    } catch (error) {
      clearInterval(journal.timer);
      heldHere.delete(full);
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot write ${join(full, JOURNAL_FILE)}: ${codeOf(error)}`, {
        hint: writeHint(error),
      });
    }
    return journal;
  }

  /** Takes over what a previous process left (journalStart.ts) into a fresh file. */
  private load(): void {
    const records = readLeftover(this.dir, this.log);
    for (const record of records) this.live.set(record.id, record);
    this.leftover = records;
    this.rewrite();
  }

  /** The latest line of every live job, serialized once. */
  private *liveLines(): Generator<JobLine> {
    for (const [id, record] of this.live) {
      let line = this.lines.get(id);
      if (line === undefined) {
        line = recordLine(record);
        this.lines.set(id, line);
      }
      yield { id, line };
    }
  }

  /**
   * Writes every live record into a fresh journal file and switches to it: the start, a repair, and a
   * compaction. Throws when the folder cannot be written (nothing is switched then).
   */
  private rewrite(): void {
    const file = JournalFile.write(this.dir, this.liveLines());
    this.retire();
    this.file = file;
    this.unsaved.clear();
    // Every live record is synced in the new file: whoever waits for a sync of the old one, or for an append, may
    // go on.
    this.commits.settle();
    for (const line of this.pendingLines.splice(0)) line.resolve(true);
  }

  /** Lets go of the current file (its descriptor is closed once no sync runs on it). */
  private retire(): void {
    if (this.file === undefined) return;
    this.commits.retire(this.file.fd);
    this.file = undefined;
  }

  /**
   * Writes a job's record; resolves true once it is in the file and synced. On false the job is known here only
   * (it is re-written once the folder can be written again), the failure is logged, and /healthz says so: a new
   * job should then be refused (before its 200), a job already accepted still runs and reports.
   */
  private async save(record: JobRecord): Promise<boolean> {
    this.live.set(record.id, record);
    const line = recordLine(record);
    this.lines.set(record.id, line);
    this.unsaved.add(record.id);
    if (!this.incidents.failing && this.file !== undefined) {
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
      if (this.incidents.lastProblem?.code !== 'ENOENT') break;
    }
    return !this.unsaved.has(record.id);
  }

  /**
   * Appends the lines queued in this turn of the event loop in one write (the requests read in one turn are
   * acknowledged in the next, so a busy integrator writes once per turn rather than once per request), checks that
   * the file is still in the folder, and resolves their saves: at once, or after a sync (`durable`, journalSync.ts;
   * after each sync, the file is checked again).
   */
  private flush(): void {
    const batch = this.pendingLines.splice(0);
    if (batch.length === 0) return;
    if (this.incidents.failing || this.file === undefined) {
      for (const line of batch) line.resolve(false);
      return;
    }
    try {
      this.file.append(batch);
    } catch (error) {
      this.problem(error, `cannot write the record of job ${batch[0]!.id}`);
      for (const line of batch) line.resolve(false);
      return;
    }
    if (this.removedUnder()) {
      for (const line of batch) line.resolve(false);
      return;
    }
    for (const { id } of batch) this.unsaved.delete(id);
    if (this.durable) {
      for (const { id, resolve } of batch) this.commits.wait(id, resolve);
      this.commits.start();
    } else for (const line of batch) line.resolve(true);
  }

  /** True (and a problem) when the journal file is no longer in the folder (removed, or the folder replaced). */
  private removedUnder(): boolean {
    if (this.file === undefined || this.incidents.takenBy !== undefined) return false;
    let links: number;
    try {
      links = this.file.links();
    } catch (error) {
      this.problem(error, 'cannot check the journal file');
      return true;
    }
    if (links > 0) return false;
    this.problem(coded(goneCode(this.dir), 'removed'), 'the journal file is no longer in the state dir');
    return true;
  }

  /** Forgets a job (its final callback is delivered, or can never be, or it was refused before its 200). */
  remove(id: string): void {
    this.live.delete(id);
    this.lines.delete(id);
    this.unsaved.delete(id);
    if (this.incidents.takenBy !== undefined || this.file === undefined) return;
    try {
      // Its access token leaves the file now (the blanks are written over the lines in place).
      this.file.blank(id);
      if (this.incidents.failing) return;
      if (this.live.size === 0) this.file.truncate();
      else if (this.file.needsCompaction()) this.rewrite();
    } catch (error) {
      // The folder is unusable; a repair writes the file without this record once it is not.
      this.problem(error, `cannot remove the record of job ${id}`);
    }
  }

  /**
   * What /healthz reports. Checks first that the folder and its lock are still there (one read), so that a
   * removed folder is noticed and re-created by the next health check at the latest.
   */
  health(): StoreHealth {
    this.check();
    return this.incidents.health(this.unsaved.size);
  }

  /** Repairs a failing journal, or notices a removed folder, lock or file (then repairs). */
  private check(): void {
    if (this.incidents.takenBy !== undefined) return;
    if (!this.incidents.failing) {
      let text: string;
      try {
        text = readFileSync(join(this.dir, LOCK_FILE), 'latin1');
      } catch (error) {
        this.problem(error, 'the state dir or its lock file is gone');
        for (const id of this.live.keys()) this.unsaved.add(id);
        return this.repair();
      }
      const other = foreignOwner(text);
      if (other !== undefined) return this.yieldTo(other);
      if (this.removedUnder()) this.repair();
      return;
    }
    this.repair();
  }

  /**
   * Leaves the state dir to the integrator that took it: this one never writes or removes anything there again
   * (its accepted jobs still run and report; new ones are refused with 503 until it is restarted on a folder of
   * its own), and says so once.
   */
  private yieldTo(pid: number): void {
    if (this.incidents.takenBy !== undefined) return;
    this.incidents.taken(pid, this.live.size);
    this.retire();
  }

  /** Notes a failure (journalIncidents.ts); a lost file or failed sync means every record is written again. */
  private problem(error: unknown, what: string, everyRecord = false): void {
    const code = codeOf(error);
    if (everyRecord || code === 'ENOENT' || code === 'ENOTDIR') {
      // The file is gone (or the folder replaced), or a sync failed: every live record must be written again.
      for (const id of this.live.keys()) this.unsaved.add(id);
    }
    this.incidents.failed(code, what, this.live.size);
  }

  /**
   * Re-creates the folder, its lock and the journal file with every live record; stops at the first failure (the
   * folder is still unusable). Leaves the journal failing or ok.
   */
  private repair(): void {
    let recreated = false;
    const other = this.incidents.takenBy ?? lockHolder(this.dir);
    if (other !== undefined) return this.yieldTo(other);
    const written = this.unsaved.size;
    try {
      recreated = mkdirSync(this.dir, { recursive: true, mode: 0o700 }) !== undefined;
      writeLock(this.dir);
      this.rewrite();
    } catch (error) {
      this.problem(
        error,
        recreated ? 'cannot write in the re-created state dir' : 'cannot write the state dir',
      );
      return;
    }
    this.incidents.restored(recreated, written, this.live.size);
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
  async report(record: JobRecord): Promise<'stored' | 'unsaved'> {
    return (await this.save(record)) ? 'stored' : 'unsaved';
  }

  /** JobStore: every job of the state dir is held here while the journal is open (its lock keeps others out). */
  heldUntil(_id: string): number {
    return heldHere.has(this.dir) ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
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
    await this.commits.idle();
    if (this.unsaved.size > 0) this.repair();
    if (this.unsaved.size > 0) {
      this.log.error(
        'journal.lost',
        `${this.unsaved.size} unfinished job(s) could not be written to ${this.dir}: the next start cannot report them`,
        { state_dir: this.dir, jobs: this.unsaved.size },
      );
    }
    const clean = !options.keepLockFile && !options.crash && this.incidents.takenBy === undefined;
    const empty = this.live.size === 0 && this.file !== undefined;
    this.retire();
    if (!clean) return;
    try {
      if (empty) rmSync(join(this.dir, JOURNAL_FILE), { force: true });
      rmSync(join(this.dir, LOCK_FILE), { force: true });
    } catch {
      // The folder is gone or unusable: no lock is left to remove.
    }
  }
}
