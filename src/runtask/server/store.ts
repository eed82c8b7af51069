/**
 * The job-store contract: what the job manager needs from wherever the accepted jobs are kept, so that a final
 * callback is sent even when the process that accepted the job is gone. Two implementations: the journal in
 * `--state-dir` (journal.ts, one machine, the default) and PostgreSQL (postgres.ts, several instances sharing
 * one database). test/runtask/server/store.contract.ts runs the same cases against both.
 *
 * A job is keyed by its id (the task result id when it is a safe name): a second `accept` of a live id is a
 * duplicate, whichever instance of the store it reaches. A job is held by the store instance that accepted it
 * (or took it over): the journal holds every job of its state dir for as long as its process lives (the dir's
 * lock); PostgreSQL holds each job by a lease that the store renews while the instance lives, so that the jobs
 * of an instance that died are taken over by another once their lease ran out, and not before.
 */
import { performance } from 'node:perf_hooks';
import type { TaskResult } from '../../terraform/runtask/payload.js';

/** This process's monotonic clock, in milliseconds (it goes on while the process is stopped): `heldUntil`'s. */
export const clock = (): number => performance.now();

/**
 * `queued`: accepted by a front (`--role front`), waiting in the shared queue for a worker; its check has not
 * started. `accepted`: held by an instance, the check has not produced its result yet. `reporting`: the final
 * result awaits delivery.
 */
export type JobPhase = 'queued' | 'accepted' | 'reporting';

/**
 * What an instance does (`runtask serve --role`): `all` accepts requests and runs the checks of the jobs it
 * accepted (and of queued ones when it has free slots); `front` accepts, verifies and queues, running no
 * handler; `worker` runs the queued jobs' handlers and answers no run task request. front and worker need a
 * shared store with a queue (PostgreSQL).
 */
export type Role = 'all' | 'front' | 'worker';
export const ROLES: readonly Role[] = ['all', 'front', 'worker'];

/** What the store keeps per job: enough to send the final callback after the accepting process is gone. */
export interface JobRecord {
  version: 1;
  id: string;
  acceptedAt: string;
  phase: JobPhase;
  /** The request as received, access token included (kept only until the job is finished). */
  request: Record<string, unknown>;
  /**
   * When the check started (its handler or plan download), stored before it starts; null: not started yet. A
   * job taken over that never started is run by its new holder; one that started is reported failed.
   */
  checkStartedAt: string | null;
  result?: TaskResult;
}

/** A problem the store met while serving. */
export interface StoreProblem {
  at: string;
  /** An error code (`ENOSPC`, `ENOENT`, `ETAKEN`; PostgreSQL's SQLSTATE or the driver's `ECONNREFUSED`…). */
  code: string;
  message: string;
}

/** What /healthz says about the store. */
export interface StoreHealth {
  /** `failing`: records cannot be written now, and new jobs are refused with 503. */
  status: 'ok' | 'failing';
  /** Incidents since the start. */
  problems: number;
  lastProblem?: StoreProblem;
  /** Jobs in flight whose latest record is not stored (they still run and report). */
  unsaved: number;
}

/** What `accept` did: stored and held here, already live (here or on another instance), or not stored. */
export type AcceptOutcome = 'accepted' | 'duplicate' | 'unsaved';

/**
 * The shared queue of a store that several instances use (PostgreSQL): fronts put jobs in it unheld, workers
 * take them as their slots free up. Its jobs keep the platform's progress window open while they wait: any
 * instance sends their `running` callbacks, one instance per job and heartbeat (`dueForProgress` hands each to one
 * caller).
 */
export interface JobQueue {
  /** How often a worker with free slots asks for queued jobs. */
  readonly pollEveryMs: number;
  /** Stores a job in phase `queued`, held by nobody; the outcomes are `accept`'s. */
  enqueue(record: JobRecord): Promise<AcceptOutcome>;
  /** Up to `max` queued jobs, oldest first, now held here in phase `accepted` (each handed to one caller). */
  claim(max: number): Promise<JobRecord[]>;
  /** Queued jobs whose last `running` callback (or acceptance) is older than `everyMs`, for one caller each. */
  dueForProgress(everyMs: number): Promise<JobRecord[]>;
  /** How many jobs wait in the queue (for /metrics). */
  depth(): Promise<number>;
}

/** The job store of one integrator instance. */
export interface JobStore {
  /** What kind of store, for messages (`the state dir`, `the database`), /healthz and /metrics. */
  readonly kind: 'journal' | 'postgres';
  /** Where the jobs are, for logs and the start-up line (never a password). */
  readonly where: string;
  /**
   * How often the job manager asks `takeOver` for jobs whose holder is gone; undefined when nobody else's jobs
   * can ever appear after the start (the journal: its lock keeps other processes out).
   */
  readonly takeOverEveryMs: number | undefined;
  /** The shared queue, for `--role front` and `--role worker`; undefined for the journal. */
  readonly queue?: JobQueue;

  /**
   * Stores a new job, held by this instance, before the platform gets its 200. `duplicate`: a job with this id
   * is live (a retried request). `unsaved`: it cannot be stored now; the request must be refused before its
   * 200 (the store forgets it).
   */
  accept(record: JobRecord): Promise<AcceptOutcome>;

  /**
   * Stores that the job's check starts now (`checkStartedAt`), before it starts. `lost`: the job is no longer
   * held here (taken over): it must not start. `unsaved`: not stored now; the caller tries again later.
   */
  started(record: JobRecord): Promise<'stored' | 'lost' | 'unsaved'>;

  /**
   * Stores the final result (phase `reporting`) before its delivery: the claim of the right to send it (another
   * holder would deliver the same result). `lost`: the job is no longer held here (taken over): nothing may be sent
   * for it. `unsaved`: not stored now (the write may still land); the caller may send only while `heldUntil`
   * says the job is surely held here, and claims again otherwise.
   */
  report(record: JobRecord): Promise<'stored' | 'lost' | 'unsaved'>;

  /**
   * Until when (`performance.now()`) the job is surely held here, so that no other instance can have it: the
   * journal, while it is open (its lock); PostgreSQL, the lease as last moved on (postgresHoldings.ts).
   * -Infinity for a job not held here.
   */
  heldUntil(id: string): number;

  /** Calls `listener` with each job taken over by another instance (a shared store; the journal never loses one). */
  onLost?(listener: (id: string) => void): void;

  /**
   * Forgets a job: its final callback is delivered (or can never be), or it was refused before its 200. Its
   * access token is gone from the store once this resolves, unless the store cannot be written now: then the
   * store keeps the job (PostgreSQL: renewing its lease) and tries again until its end is stored.
   */
  finish(id: string): Promise<void>;

  /**
   * Jobs whose holder is gone, now held by this instance, oldest first: the journal's records a previous process
   * left (on the first call after the start); PostgreSQL's jobs whose lease ran out. Each is returned to one
   * caller only.
   */
  takeOver(): Promise<JobRecord[]>;

  /** What the store can do now, for /healthz. */
  health(): StoreHealth;

  /**
   * Lets go of the store. `crash`: as a crash would (the journal's lock file stays, the leases are not given
   * back): for tests of takeover and recovery.
   */
  release(options?: { crash?: boolean }): Promise<void>;
}
