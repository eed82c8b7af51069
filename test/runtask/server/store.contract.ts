/**
 * The job-store contract (src/runtask/server/store.ts) as one suite, run against each implementation by its own
 * test file: store-journal.test.ts (the journal in a state dir) and store-postgres.test.ts (PostgreSQL, in the
 * integrator's own table, on a real server started by the test). A case that only a shared store can have (two live instances
 * at once: a retried request on another instance, a lease lost while the holder lives) is defined for shared
 * stores only; for the journal the same guarantee is its lock, which the suite checks instead.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JobRecord, JobStore } from '../../../src/runtask/server/store.js';

/** Where one case's jobs are kept: a state dir, a database. */
export interface Backing {
  /**
   * Opens an instance of the store on this backing. `leaseMs`: how long its jobs stay held once it stops
   * renewing them; `renews: false`: an instance that lives on but never renews (a paused process).
   */
  open(options?: { leaseMs?: number; renews?: boolean }): Promise<JobStore>;
  /** Everything the backing holds, as text (to look for a token). */
  dump(): Promise<string>;
}

/** One implementation under test. */
export interface StoreKind {
  name: string;
  /** Several live instances share the jobs (PostgreSQL); the journal admits one live instance per state dir. */
  shared: boolean;
  /** A fresh, empty backing for one case. */
  fresh(): Promise<Backing>;
}

let counter = 0;

/** A record as the job manager stores it, with its own access token. */
export function recordOf(id: string, token = `token-${randomBytes(8).toString('hex')}`): JobRecord {
  counter++;
  return {
    version: 1,
    id,
    // Distinct and increasing: the order takeOver promises.
    acceptedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString(),
    phase: 'accepted',
    request: {
      payload_version: 1,
      access_token: token,
      task_result_id: id,
      task_result_callback_url: `https://app.terraform.io/api/v2/task-results/${id}/callback`,
      run_id: 'run-contract',
    },
    checkStartedAt: null,
  };
}

function reporting(record: JobRecord): JobRecord {
  return { ...record, phase: 'reporting', result: { status: 'passed', message: 'all good' } };
}

/** Asks `takeOver` until `count` jobs came back in all (bounded: the lease, the takeover poll, then some). */
async function takeOverUntil(stores: JobStore[], count: number, tries = 120): Promise<JobRecord[][]> {
  const got: JobRecord[][] = stores.map(() => []);
  for (let attempt = 0; attempt < tries; attempt++) {
    const rounds = await Promise.all(stores.map((store) => store.takeOver()));
    rounds.forEach((records, i) => got[i]!.push(...records));
    if (got.flat().length >= count) return got;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return got;
}

/** The contract's cases for `kind`. */
export function describeJobStore(kind: StoreKind): void {
  describe(`the job store contract: ${kind.name}`, () => {
    it('accepts a job once per id: a second accept of a live id is a duplicate', async () => {
      const backing = await kind.fresh();
      const store = await backing.open();
      try {
        expect(store.health()).toMatchObject({ status: 'ok', problems: 0, unsaved: 0 });
        expect(await store.accept(recordOf('task-result-1'))).toBe('accepted');
        expect(await store.accept(recordOf('task-result-1'))).toBe('duplicate');
        expect(await store.accept(recordOf('task-result-2'))).toBe('accepted');
      } finally {
        await store.release();
      }
    });

    it('keeps both phases for a new instance: the accepted request and the stored final result', async () => {
      const backing = await kind.fresh();
      const first = await backing.open({ leaseMs: 2000 });
      const accepted = recordOf('phase-accepted');
      const reported = recordOf('phase-reporting');
      expect(await first.accept(accepted)).toBe('accepted');
      expect(await first.accept(reported)).toBe('accepted');
      expect(await first.report(reporting(reported))).toBe('stored');
      await first.release({ crash: true });

      const second = await backing.open({ leaseMs: 2000 });
      try {
        const [records] = await takeOverUntil([second], 2);
        expect(records).toEqual([accepted, reporting(reported)]);
        // Each job is handed over once.
        expect(await second.takeOver()).toEqual([]);
      } finally {
        await second.release();
      }
    });

    it('keeps no access token once a job is finished, and hands the job to nobody after that', async () => {
      const backing = await kind.fresh();
      const store = await backing.open({ leaseMs: 2000 });
      const token = `secret-${randomBytes(12).toString('hex')}`;
      const record = recordOf('finished', token);
      expect(await store.accept(record)).toBe('accepted');
      expect(await backing.dump()).toContain(token);
      expect(await store.report(reporting(record))).toBe('stored');
      await store.finish(record.id);
      expect(await backing.dump()).not.toContain(token);
      await store.release({ crash: true });

      const next = await backing.open({ leaseMs: 2000 });
      try {
        expect(await next.takeOver()).toEqual([]);
      } finally {
        await next.release();
      }
    });

    it('a job still held at a graceful release goes to the next instance', async () => {
      const backing = await kind.fresh();
      // A lease far longer than the test: the job comes back because it was given back, not because it lapsed.
      const first = await backing.open({ leaseMs: 600_000 });
      const record = recordOf('given-back');
      expect(await first.accept(record)).toBe('accepted');
      await first.release();
      const next = await backing.open({ leaseMs: 600_000 });
      try {
        const [records] = await takeOverUntil([next], 1, 40);
        expect(records).toEqual([record]);
      } finally {
        await next.release();
      }
    });

    if (kind.shared) {
      it('a retried request on another live instance is the same job', async () => {
        const backing = await kind.fresh();
        const a = await backing.open();
        const b = await backing.open();
        try {
          expect(await a.accept(recordOf('retried'))).toBe('accepted');
          expect(await b.accept(recordOf('retried'))).toBe('duplicate');
          // Copies arriving together on both: one is accepted.
          const outcomes = await Promise.all([
            a.accept(recordOf('together')),
            b.accept(recordOf('together')),
          ]);
          expect(outcomes.sort()).toEqual(['accepted', 'duplicate']);
        } finally {
          await a.release();
          await b.release();
        }
      });

      it("takes over a dead instance's job once its lease ran out, not while the holder renews it", async () => {
        const backing = await kind.fresh();
        const holder = await backing.open({ leaseMs: 3000 });
        const other = await backing.open({ leaseMs: 3000 });
        try {
          const record = recordOf('leased');
          expect(await holder.accept(record)).toBe('accepted');
          // Two leases' worth of asking while the holder renews: never handed over.
          for (let i = 0; i < 24; i++) {
            expect(await other.takeOver()).toEqual([]);
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
          await holder.release({ crash: true });
          const [records] = await takeOverUntil([other], 1);
          expect(records).toEqual([record]);
        } finally {
          await other.release();
        }
      });

      it('exactly one of several instances asking at once gets each job', async () => {
        const backing = await kind.fresh();
        const dead = await backing.open({ leaseMs: 2000 });
        const ids = ['race-1', 'race-2', 'race-3', 'race-4', 'race-5'];
        for (const id of ids) expect(await dead.accept(recordOf(id))).toBe('accepted');
        await dead.release({ crash: true });
        const takers = await Promise.all([1, 2, 3].map(() => backing.open({ leaseMs: 2000 })));
        try {
          const got = await takeOverUntil(takers, ids.length);
          const all = got.flat().map((r) => r.id);
          expect(all.sort()).toEqual(ids);
          // And none comes back to anyone afterwards.
          for (const taker of takers) expect(await taker.takeOver()).toEqual([]);
        } finally {
          for (const taker of takers) await taker.release();
        }
      });

      it('an instance that lost its lease cannot write the job any more; the new holder can', async () => {
        const backing = await kind.fresh();
        const paused = await backing.open({ leaseMs: 2000, renews: false });
        const other = await backing.open({ leaseMs: 2000 });
        const token = `secret-${randomBytes(12).toString('hex')}`;
        const record = recordOf('fenced', token);
        try {
          expect(await paused.accept(record)).toBe('accepted');
          const [records] = await takeOverUntil([other], 1);
          expect(records).toEqual([record]);
          // The paused instance wakes up: it may not start the check; its result and its finish change nothing.
          const startedNow = { ...record, checkStartedAt: new Date().toISOString() };
          expect(await paused.started(startedNow)).toBe('lost');
          expect(await paused.report(reporting(record))).toBe('lost');
          await paused.finish(record.id);
          expect(await backing.dump()).toContain(token);
          // The new holder starts, reports and finishes.
          expect(await other.started(startedNow)).toBe('stored');
          expect(
            await other.report({ ...reporting(record), result: { status: 'failed', message: 'x' } }),
          ).toBe('stored');
          await other.finish(record.id);
          expect(await backing.dump()).not.toContain(token);
        } finally {
          await paused.release({ crash: true });
          await other.release();
        }
      });
    } else {
      it('admits one live instance: a second is refused until the first is gone, then takes its jobs', async () => {
        const backing = await kind.fresh();
        const first = await backing.open();
        const record = recordOf('locked');
        expect(await first.accept(record)).toBe('accepted');
        await expect(backing.open()).rejects.toThrow(/in use by another running integrator/);
        await first.release({ crash: true });
        const next = await backing.open();
        try {
          expect(await next.takeOver()).toEqual([record]);
        } finally {
          await next.release();
        }
      });
    }
  });
}
