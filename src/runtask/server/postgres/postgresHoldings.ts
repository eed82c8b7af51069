/**
 * The jobs one PostgreSQL store holds: the fence each was taken with, and until when its lease surely lasts by
 * this process's own clock. A statement that moves a lease on (`now() + lease` on the database) was sent at a
 * moment of this process's monotonic clock no later than the database ran it, so the lease lasts at least one
 * lease from that moment: until then no other instance can take the job over, and this one may send its
 * callbacks without asking the database. Past it (a paused process, a database that does not answer), the job
 * may be another's: nothing is sent for it before a write under its fence proves it is still held here.
 */
import type { EventLog } from '../log.js';

/** A job of this instance. */
export interface Held {
  fence: number;
  /** The moment (`performance.now()`) until which the lease surely lasts. */
  until: number;
  /** Its final callback is done: only its end remains to be stored. */
  ending?: boolean;
  /** The write of its result in flight, shared by the callers that wait for it. */
  claiming?: Promise<'stored' | 'lost' | 'unsaved'>;
}

/** The jobs held by one store, with their leases as this process knows them. */
export class Holdings {
  private readonly jobs = new Map<string, Held>();
  private readonly listeners: Array<(id: string) => void> = [];

  constructor(
    private readonly leaseMs: number,
    private readonly log: EventLog,
  ) {}

  /** A job now held here under `fence`, by a statement sent at `sentAt` that gave it a whole lease. */
  hold(id: string, fence: number, sentAt: number): Held {
    const held: Held = { fence, until: sentAt + this.leaseMs };
    this.jobs.set(id, held);
    return held;
  }

  /** A statement sent at `sentAt` moved the job's lease on. */
  extend(held: Held, sentAt: number): void {
    held.until = Math.max(held.until, sentAt + this.leaseMs);
  }

  get(id: string): Held | undefined {
    return this.jobs.get(id);
  }

  has(id: string): boolean {
    return this.jobs.has(id);
  }

  /** Forgets a job whose end is stored. */
  delete(id: string): void {
    this.jobs.delete(id);
  }

  entries(): Array<[string, Held]> {
    return [...this.jobs.entries()];
  }

  get size(): number {
    return this.jobs.size;
  }

  clear(): void {
    this.jobs.clear();
  }

  /** Until when (`clock()`) the job is surely held here: -Infinity when it is not held here at all. */
  until(id: string): number {
    return this.jobs.get(id)?.until ?? Number.NEGATIVE_INFINITY;
  }

  /** Calls `listener` with the id of each job taken over by another instance from now on. */
  onLost(listener: (id: string) => void): void {
    this.listeners.push(listener);
  }

  /** A job whose lease ran out and was taken by another instance: nothing of it is written from here again. */
  lost(id: string): void {
    if (!this.jobs.delete(id)) return;
    this.log.warn(
      'store.lease_lost',
      `job ${id} was taken over by another instance (this one did not renew its lease in time)`,
      { job: id },
    );
    for (const listener of this.listeners) listener(id);
  }
}
