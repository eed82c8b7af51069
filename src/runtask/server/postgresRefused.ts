/**
 * Requests refused with 503 whose insert may have been carried out all the same. A job is refused when its insert
 * gets no answer in time (a database that hangs); the statement may still run once the database answers again,
 * leaving a job that nobody holds in memory, which another instance would take over and run later. The platform
 * sends a refused request again, so such a copy must never run: a tombstone naming that attempt (`ABANDON` in
 * postgresStatements.ts: its row, if it landed and was never taken over or started, becomes the tombstone) is
 * stored as soon as the database answers, tried again until then, and before the same id is accepted here again.
 * An insert still on its way (a backend that stalls) finds the tombstone when it lands, and does nothing.
 */
import type { Retries } from './databaseFaults.js';
import type { EventLog } from './log.js';
import type { JobRecord } from './store.js';

/** The keys of these removals among the writes tried again, before the job's id. */
const KEY = '\0refused:';

/** The copies of refused requests still to remove. */
export class RefusedCopies {
  private readonly pending = new Map<string, () => Promise<boolean>>();

  constructor(
    private readonly retries: Retries,
    /** Leaves the tombstone of `record`'s attempt by `holder` (null: queued): 1 when its row had landed, else 0; -1 on a failure. */
    private readonly remove: (record: JobRecord, holder: string | null) => Promise<number>,
    private readonly log: EventLog,
  ) {}

  /** Whether a key of `Retries` is one of these removals (not a job's write). */
  static owns(key: string): boolean {
    return key.startsWith(KEY);
  }

  /** The request of `record` was refused with 503 after its insert was sent: its row, if any, is to go. */
  add(record: JobRecord, holder: string | null): void {
    const attempt = async (): Promise<boolean> => {
      const removed = await this.remove(record, holder);
      if (removed < 0) return false;
      if (this.pending.get(record.id) === attempt) this.pending.delete(record.id);
      if (removed > 0) {
        this.log.warn(
          'store.abandoned',
          `removed job ${record.id}: its request was refused with 503 (the database did not answer in time), but stored after all`,
          { job: record.id },
        );
      }
      return true;
    };
    this.pending.set(record.id, attempt);
    this.retries.add(`${KEY}${record.id}`, attempt);
  }

  /** True once no refused copy of `id` is left (removing it now if there is one); false: not removed yet. */
  async settled(id: string): Promise<boolean> {
    const attempt = this.pending.get(id);
    return attempt === undefined || (await attempt());
  }
}
