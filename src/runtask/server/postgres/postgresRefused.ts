/**
 * Requests refused with 503 whose insert may have been carried out all the same. A job is refused when its insert
 * gets no answer in time (a database that hangs); the statement may still run once the database answers again,
 * leaving a job that nobody holds in memory, which another instance would take over and run later. The platform
 * sends a refused request again, so such a copy must never run: a tombstone naming that attempt (`ABANDON` in
 * postgresStatements.ts: its row, if it landed and was never taken over or started, becomes the tombstone) is
 * stored as soon as the database answers, tried again until then, and before the same id is accepted here again.
 * An insert still on its way (a backend that stalls) finds the tombstone when it lands, and does nothing. A row
 * that landed and that a retry was answered as a duplicate of (on another instance, or front, that reached the
 * database meanwhile) is kept and run instead: the platform holds a 200 for it.
 */
import type { Retries } from './databaseFaults.js';
import type { EventLog } from '../log.js';
import type { JobRecord } from '../store.js';

/**
 * What a tombstone did to the refused attempt's row: `removed` (it had landed), `kept` (it had landed and a retry
 * was answered as its duplicate: given back to be run), `none` (no such row), `failed` (not stored: tried again).
 */
export type RefusedFate = 'removed' | 'kept' | 'none' | 'failed';

/** The keys of these removals among the writes tried again, before the job's id. */
const KEY = '\0refused:';

/** The copies of refused requests still to remove. */
export class RefusedCopies {
  private readonly pending = new Map<string, () => Promise<boolean>>();

  constructor(
    private readonly retries: Retries,
    /** Leaves the tombstone of `record`'s attempt by `holder` (null: queued). */
    private readonly remove: (record: JobRecord, holder: string | null) => Promise<RefusedFate>,
    private readonly log: EventLog,
  ) {}

  /** Whether a key of `Retries` is one of these removals (not a job's write). */
  static owns(key: string): boolean {
    return key.startsWith(KEY);
  }

  /** The request of `record` was refused with 503 after its insert was sent: its row, if any, is to go. */
  add(record: JobRecord, holder: string | null): void {
    const attempt = async (): Promise<boolean> => {
      const fate = await this.remove(record, holder);
      if (fate === 'failed') return false;
      if (this.pending.get(record.id) === attempt) this.pending.delete(record.id);
      if (fate === 'removed') {
        this.log.warn(
          'store.abandoned',
          `removed job ${record.id}: its request was refused with 503 (the database did not answer in time), but stored after all`,
          { job: record.id },
        );
      } else if (fate === 'kept') {
        this.log.warn(
          'store.retried',
          `kept job ${record.id}: its request was refused with 503 but stored after all, and its retry was answered as a duplicate of it; it runs on the instance that takes it`,
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
