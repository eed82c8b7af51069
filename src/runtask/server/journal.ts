/**
 * The job journal in `--state-dir`: one JSON file per accepted job, mode 0600 because it holds the run's access
 * token, removed once the final callback is delivered. A lock file keeps two live integrators from sharing (and
 * recovering each other's) jobs.
 *
 * What it survives: the integrator process dying (crash, kill, restart) at any point — the bytes are with the
 * kernel before the platform gets its 200. Records are not fsync'ed: an fsync per request put the disk's latency
 * (milliseconds, and far more under load) into every acknowledgement (README, "Performance"). A machine that
 * loses power within seconds of an acceptance may lose that job; the platform then times the task out, which
 * fails the run rather than passing it.
 *
 * Every file (records and the lock) is written to a temp file and renamed into place, so that a kill or a full
 * disk mid-write never leaves a torn file under a real name. What a start finds unreadable anyway (a torn or
 * foreign file, a record of the wrong shape, an empty lock left by an older version or by a power loss) is set
 * aside as `<name>.corrupt-<time>` with a log line, and the start goes on.
 *
 * While serving, the folder may vanish (the default lives under the temp folder, where cleaners delete things),
 * be replaced, or fill up. The journal keeps the latest record of every live job in memory, so such failures
 * never reach the caller as exceptions: a write that fails is reported (false, a log line, /healthz), and the
 * journal re-creates the folder, its lock and every live record as soon as it can (at once, on each /healthz,
 * and once a second while it is failing).
 *
 * The record operations are synchronous on purpose: a small file written without fsync costs tens of
 * microseconds, less than a round trip through libuv's thread pool (which the running jobs keep busy) or a
 * worker thread, and the acknowledgement waits for it either way.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../../errors.js';
import type { EventLog } from './log.js';
import type { AcceptOutcome, JobRecord, JobStore, StoreHealth, StoreProblem } from './store.js';
import { checkTaskResult } from '../wire/result.js';

export type { JobPhase, JobRecord } from './store.js';
/** A problem the journal met while serving. */
export type JournalProblem = StoreProblem;
/** What /healthz says about the journal. */
export type JournalHealth = StoreHealth;

const LOCK = 'integrator.lock';
const PREFIX = 'job-';
/** The temp files this journal writes: `.<final name>.<12 hex>.tmp`. */
const TEMP = /^\.(?:job-.+|integrator\.lock)\.[0-9a-f]{12}\.tmp$/;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
/** How often a failing journal tries again, and a healthy one checks that its folder is still there. */
const CHECK_MS = 1000;
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

/** The record in a journal file, or why it is not one (a record must name its own file). */
function readRecord(text: string, name: string): JobRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text === '' ? 'empty' : 'not JSON';
  }
  if (!isRecord(value)) return 'not a JSON object';
  if (value.version !== 1) return 'not a version 1 record';
  if (typeof value.id !== 'string' || !ID.test(value.id) || name !== `${PREFIX}${value.id}.json`) {
    return 'its id does not match its file name';
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
  if (value.phase === 'reporting') {
    const checked = checkTaskResult(value.result, ['passed', 'failed']);
    if (checked.result === undefined) return 'no valid final result';
    record.result = checked.result;
  }
  return record;
}

/** The journal of one integrator: the job store of one machine. */
export class Journal implements JobStore {
  /** Only this process's jobs are ever here (the lock): nothing to take over after the start. */
  readonly takeOverEveryMs = undefined;
  /** The records of a previous process are handed over once, on the first `takeOver`. */
  private tookOver = false;
  /** The latest record of every live job: what the folder should hold, re-written from here after a loss. */
  private readonly live = new Map<string, JobRecord>();
  /** Live jobs whose latest record is not known to be on disk. */
  private readonly unsaved = new Set<string>();
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
  ) {
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  /**
   * Opens (creating) the state dir and takes its lock; refuses a dir another live integrator holds. A lock file
   * that cannot be read as one (empty, torn, garbage) is set aside: it cannot name a live owner.
   */
  static open(dir: string, log: EventLog): Journal {
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
    try {
      writeAtomically(full, LOCK, Journal.lockText());
    } catch (error) {
      throw new UsageError(`cannot write ${lock}: ${codeOf(error)}`, {
        hint:
          codeOf(error) === 'ENOSPC'
            ? 'The disk holding --state-dir is full: free some space, or give --state-dir another folder.'
            : 'Give --state-dir a folder the integrator may write to.',
      });
    }
    heldHere.add(full);
    return new Journal(full, log);
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

  /** Renames a file that cannot be used to `<name>.corrupt-<time>`, and says so. */
  private static setAside(dir: string, name: string, reason: string, log: EventLog): void {
    const movedTo = `${name}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    try {
      renameSync(join(dir, name), join(dir, movedTo));
    } catch (error) {
      throw new UsageError(`cannot set aside ${join(dir, name)} (${reason}): ${codeOf(error)}`, {
        hint: `Move ${join(dir, name)} away yourself, or give --state-dir another folder.`,
      });
    }
    log.warn('journal.set_aside', `${name} in the state dir is ${reason}: moved it aside to ${movedTo}`, {
      file: name,
      moved_to: movedTo,
      reason,
    });
  }

  private file(id: string): string {
    return `${PREFIX}${id}.json`;
  }

  /**
   * Writes a job's record, readable by the owner only; true when it is on disk. On false the job is known here
   * only (it is re-written once the folder can be written again), the failure is logged, and /healthz says so:
   * a new job should then be refused (before its 200), a job already accepted still runs and reports.
   */
  save(record: JobRecord): boolean {
    this.live.set(record.id, record);
    this.unsaved.add(record.id);
    if (!this.failing) {
      try {
        writeAtomically(this.dir, this.file(record.id), JSON.stringify(record) + '\n');
        this.unsaved.delete(record.id);
        return true;
      } catch (error) {
        this.problem(error, `cannot write the record of job ${record.id}`);
      }
    }
    // A cleaner still removing the folder can take it away again mid-repair: a few tries, then 503.
    for (let attempt = 0; attempt < 3 && this.unsaved.has(record.id); attempt++) {
      this.repair();
      if (this.lastProblem?.code !== 'ENOENT') break;
    }
    return !this.unsaved.has(record.id);
  }

  /** Forgets a job (its final callback is delivered, or can never be, or it was refused before its 200). */
  remove(id: string): void {
    this.live.delete(id);
    this.unsaved.delete(id);
    if (this.takenBy !== undefined) return;
    try {
      rmSync(join(this.dir, this.file(id)), { force: true });
    } catch (error) {
      // The folder is unusable; a repair removes what is left of this record once it is not.
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

  /** Repairs a failing journal, or notices a removed folder or lock (then repairs). */
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
      if (other !== undefined) this.yieldTo(other);
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
    this.log.error(
      'journal.taken',
      `another integrator (pid ${pid}) took the state dir ${this.dir} while it was gone: this one stops journaling; restart it with its own --state-dir`,
      { state_dir: this.dir, pid, jobs: this.live.size },
    );
  }

  /** Notes a failure; the first of an incident is logged and counted, the rest only update `lastProblem`. */
  private problem(error: unknown, what: string): void {
    const code = codeOf(error);
    this.lastProblem = { at: new Date().toISOString(), code, message: `${what}: ${code}` };
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      // The folder itself is gone (or replaced): every record in it is, too.
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
   * Re-creates the folder, its lock and every unsaved live record, and removes records of jobs that are gone;
   * stops at the first failure (the folder is still unusable). Leaves the journal failing or ok.
   */
  private repair(): void {
    let recreated = false;
    let written = 0;
    const other = this.takenBy ?? this.otherOwner();
    if (other !== undefined) return this.yieldTo(other);
    try {
      recreated = mkdirSync(this.dir, { recursive: true, mode: 0o700 }) !== undefined;
      writeAtomically(this.dir, LOCK, Journal.lockText());
      for (const id of [...this.unsaved]) {
        writeAtomically(this.dir, this.file(id), JSON.stringify(this.live.get(id)) + '\n');
        this.unsaved.delete(id);
        written++;
      }
      for (const name of readdirSync(this.dir)) {
        const id = name.startsWith(PREFIX) && name.endsWith('.json') ? name.slice(PREFIX.length, -5) : '';
        if (id !== '' && !this.live.has(id)) rmSync(join(this.dir, name), { force: true });
      }
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

  /** The records a previous process left; what cannot be read is set aside (`*.corrupt-<time>`) and logged. */
  list(): JobRecord[] {
    const records: JobRecord[] = [];
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
      this.live.set(record.id, record);
      records.push(record);
    }
    records.sort((a, b) => a.acceptedAt.localeCompare(b.acceptedAt));
    return records;
  }

  /** JobStore: a job already live in this journal is a duplicate; a record not on disk is forgotten again. */
  accept(record: JobRecord): Promise<AcceptOutcome> {
    if (this.live.has(record.id)) return Promise.resolve('duplicate');
    if (this.save(record)) return Promise.resolve('accepted');
    this.remove(record.id);
    return Promise.resolve('unsaved');
  }

  /** JobStore: the final result, written before its delivery (kept in memory and re-written when unsaved). */
  report(record: JobRecord): Promise<boolean> {
    return Promise.resolve(this.save(record));
  }

  /** JobStore: the record (and its token) removed. */
  finish(id: string): Promise<void> {
    this.remove(id);
    return Promise.resolve();
  }

  /** JobStore: what a previous process left, on the first call; nothing after that (the lock keeps others out). */
  takeOver(): Promise<JobRecord[]> {
    if (this.tookOver) return Promise.resolve([]);
    this.tookOver = true;
    return Promise.resolve(this.list());
  }

  /**
   * Gives up the lock; `keepLockFile` leaves the file behind as a crash would (for tests of recovery). Jobs still
   * live stay in the journal for the next start; those whose record could not be written are lost, and said so.
   */
  release(options: { keepLockFile?: boolean; crash?: boolean } = {}): Promise<void> {
    clearInterval(this.timer);
    heldHere.delete(this.dir);
    if (this.unsaved.size > 0) this.repair();
    if (this.unsaved.size > 0) {
      this.log.error(
        'journal.lost',
        `${this.unsaved.size} unfinished job(s) could not be written to ${this.dir}: the next start cannot report them`,
        { state_dir: this.dir, jobs: this.unsaved.size },
      );
    }
    if (!options.keepLockFile && !options.crash && this.takenBy === undefined) {
      try {
        rmSync(join(this.dir, LOCK), { force: true });
      } catch {
        // The folder is gone or unusable: no lock is left to remove.
      }
    }
    return Promise.resolve();
  }
}
