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
 * The record operations are synchronous on purpose: a small file written without fsync costs tens of
 * microseconds, less than a round trip through libuv's thread pool (which the running jobs keep busy) or a
 * worker thread, and the acknowledgement waits for it either way.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import type { TaskResult } from './payload.js';

/** `accepted`: the check has not produced its result yet. `reporting`: the final result awaits delivery. */
export type JobPhase = 'accepted' | 'reporting';

/** What the journal keeps per job: enough to send the final callback after a restart. */
export interface JobRecord {
  version: 1;
  id: string;
  acceptedAt: string;
  phase: JobPhase;
  /** The request as received, access token included. */
  request: Record<string, unknown>;
  result?: TaskResult;
}

const LOCK = 'integrator.lock';
const PREFIX = 'job-';
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

/** The journal of one integrator. */
export class Journal {
  private constructor(readonly dir: string) {}

  /** Opens (creating) the state dir and takes its lock; refuses a dir another live integrator holds. */
  static async open(dir: string): Promise<Journal> {
    const full = resolve(dir);
    try {
      await mkdir(full, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new UsageError(
        `cannot create the state dir ${full}: ${(error as NodeJS.ErrnoException).code ?? error}`,
        {
          hint: 'Give --state-dir a folder the integrator may write to.',
        },
      );
    }
    const lock = join(full, LOCK);
    const owner = await readFile(lock, 'utf8').then(
      (text) => Number((JSON.parse(text) as { pid?: unknown }).pid),
      () => undefined,
    );
    if (heldHere.has(full) || (owner !== undefined && owner !== process.pid && isAlive(owner))) {
      throw new UsageError(
        `the state dir ${full} is in use by another running integrator (pid ${owner ?? process.pid})`,
        {
          hint: `Give each integrator instance its own --state-dir, or stop the other one first. If none is running, delete ${lock}.`,
        },
      );
    }
    await writeFile(lock, JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }) + '\n', {
      mode: 0o600,
    });
    heldHere.add(full);
    return new Journal(full);
  }

  private file(id: string): string {
    return join(this.dir, `${PREFIX}${id}.json`);
  }

  /**
   * Writes a record, readable by the owner only. A new job's record is created in place (one file operation
   * on the path of every acknowledgement; a record cut short by a crash is unreadable, is set aside at the next
   * start, and belonged to a request that got no 200, which the platform sends again). A record that replaces
   * another (`reporting`) goes through a temp file and a rename, so that one of the two is always whole.
   */
  save(record: JobRecord): Promise<void> {
    const path = this.file(record.id);
    const text = JSON.stringify(record) + '\n';
    try {
      if (record.phase === 'accepted') {
        try {
          writeFileSync(path, text, { flag: 'wx', mode: 0o600 });
          return Promise.resolve();
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
      }
      const temp = join(this.dir, `.${PREFIX}${record.id}.${randomBytes(6).toString('hex')}.tmp`);
      writeFileSync(temp, text, { flag: 'wx', mode: 0o600 });
      renameSync(temp, path);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** Forgets a job (its final callback is delivered, or can never be). */
  remove(id: string): Promise<void> {
    try {
      rmSync(this.file(id), { force: true });
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** The records a previous process left; unreadable files are named and moved aside. */
  async list(): Promise<{ records: JobRecord[]; unreadable: string[] }> {
    const records: JobRecord[] = [];
    const unreadable: string[] = [];
    for (const name of await readdir(this.dir)) {
      if (name.startsWith(`.${PREFIX}`) && name.endsWith('.tmp')) {
        // A write that never reached its rename: the previous record (if any) is still in place.
        await rm(join(this.dir, name), { force: true });
        continue;
      }
      if (!name.startsWith(PREFIX) || !name.endsWith('.json')) continue;
      const path = join(this.dir, name);
      try {
        const record = JSON.parse(await readFile(path, 'utf8')) as JobRecord;
        if (record.version !== 1 || typeof record.id !== 'string' || typeof record.request !== 'object') {
          throw new Error('not a job record');
        }
        records.push(record);
      } catch {
        unreadable.push(name);
        await rename(path, `${path}.unreadable`).catch(() => undefined);
      }
    }
    records.sort((a, b) => a.acceptedAt.localeCompare(b.acceptedAt));
    return { records, unreadable };
  }

  /** Gives up the lock; `keepLockFile` leaves the file behind as a crash would (for tests of recovery). */
  async release(options: { keepLockFile?: boolean } = {}): Promise<void> {
    heldHere.delete(this.dir);
    if (!options.keepLockFile) await rm(join(this.dir, LOCK), { force: true });
  }
}
