/**
 * The journal's group commit (`sync` in JournalOptions): the lines appended while one fdatasync of the journal
 * file runs, in libuv's thread pool, wait for the next, which covers them all, so that one sync serves many
 * acknowledgements. It also holds the descriptors of replaced files until the sync running on one of them is over.
 */
import { closeSync, fdatasync } from 'node:fs';
import type { JournalFile } from './journalFile.js';

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

/** What the group commit needs from its journal. */
export interface SyncedJournal {
  /** The open journal file, whose appended lines the next sync covers. */
  openFile(): JournalFile | undefined;
  /** A sync of the open file failed: every live record must be written again. */
  syncFailed(error: NodeJS.ErrnoException): void;
  /** True while a job's latest record is not known to be in the file. */
  isUnsaved(id: string): boolean;
}

/** Who waits for a sync: the job whose line it covers. */
interface Waiter {
  id: string;
  resolve: (synced: boolean) => void;
}

/** The syncs of one journal. */
export class GroupCommit {
  /** Appended lines waiting for the next sync. */
  private waiters: Waiter[] = [];
  private syncing: Promise<void> | undefined;
  /** Descriptors of replaced files, closed once the sync running on one of them is over. */
  private retired: number[] = [];

  constructor(private readonly journal: SyncedJournal) {}

  /** Queues a save for the next sync (`start` starts it): `resolve` hears whether job `id`'s line is synced. */
  wait(id: string, resolve: (synced: boolean) => void): void {
    this.waiters.push({ id, resolve });
  }

  /**
   * Starts a sync for every line appended since the last one started (group commit), unless one is running: the
   * lines appended meanwhile wait for the next.
   */
  start(): void {
    const file = this.journal.openFile();
    if (this.syncing !== undefined || this.waiters.length === 0 || file === undefined) return;
    const batch = this.waiters.splice(0);
    this.syncing = new Promise<void>((done) => {
      fdatasync(file.fd, (error) => {
        this.syncing = undefined;
        const synced = error === null;
        const current = file === this.journal.openFile();
        if (current && error !== null) this.journal.syncFailed(error);
        this.closeRetired();
        // A rewrite meanwhile synced every live record in its new file.
        for (const waiter of batch)
          waiter.resolve((synced || !current) && !this.journal.isUnsaved(waiter.id));
        done();
        this.start();
      });
    });
  }

  /** Every live record is synced in a new file: whoever waits for a sync may go on. */
  settle(): void {
    for (const waiter of this.waiters.splice(0)) waiter.resolve(true);
  }

  /** Lets go of a replaced file's descriptor (now, or once the sync running on it is over). */
  retire(fd: number): void {
    this.retired.push(fd);
    if (this.syncing === undefined) this.closeRetired();
  }

  /** Resolves once no sync runs. */
  async idle(): Promise<void> {
    while (this.syncing !== undefined) await this.syncing;
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
}
