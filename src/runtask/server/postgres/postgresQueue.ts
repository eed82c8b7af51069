/**
 * The shared queue of the PostgreSQL job store (`--role front` / `--role worker`): a front inserts the job held by
 * nobody; a worker with free slots claims queued jobs, oldest first, each to one worker, in phase `accepted`: held
 * by a lease from then on, so a claimed job whose worker dies is taken over and reported failed, never run twice.
 * While a job waits, one instance per heartbeat (the one whose UPDATE of the job's `progress_at` wins) sends its
 * `running` callback. The statements are postgresStatements.ts's, run by the store (postgres.ts).
 */
import { timedOut, type StoreCondition } from './databaseFaults.js';
import type { Holdings } from './postgresHoldings.js';
import type { RefusedCopies } from './postgresRefused.js';
import * as sql from './postgresStatements.js';
import { clock, type AcceptOutcome, type JobQueue, type JobRecord } from '../store.js';

/** What the queue uses of its store. */
export interface QueueStore {
  readonly queueName: string;
  readonly holder: string;
  readonly leaseSeconds: number;
  readonly released: boolean;
  readonly held: Holdings;
  readonly refused: RefusedCopies;
  readonly condition: StoreCondition;
  run(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  guarded<T>(what: string, fallback: T, work: () => Promise<T>): Promise<T>;
}

/** The queue of one PostgreSQL store. */
export class PostgresQueue implements JobQueue {
  constructor(
    private readonly store: QueueStore,
    readonly pollEveryMs: number,
  ) {}

  async enqueue(record: JobRecord): Promise<AcceptOutcome> {
    const { store } = this;
    if (!(await store.refused.settled(record.id))) return 'unsaved';
    const queued = JSON.stringify({ ...record, phase: 'queued' });
    const outcome = await store.guarded(`cannot queue job ${record.id}`, 'unsaved' as const, async () => {
      const { rows } = await store.run(sql.ENQUEUE, [store.queueName, record.id, queued]);
      return rows[0]?.fresh === true ? ('accepted' as const) : ('duplicate' as const);
    });
    // Refused with 503: a copy stored after all must never run (postgresRefused.ts).
    if (outcome === 'unsaved') store.refused.add(record, null);
    return outcome;
  }

  async claim(max: number): Promise<JobRecord[]> {
    const { store } = this;
    if (store.released || max < 1) return [];
    const sentAt = clock();
    const values = [store.queueName, max, store.holder, store.leaseSeconds];
    const { rows } = await store.guarded('cannot take jobs from the queue', { rows: [], rowCount: 0 }, () =>
      store.run(sql.CLAIM, values),
    );
    // UPDATE … RETURNING keeps no order: oldest first, as they were queued.
    rows.sort((x, y) => Number(x.seq) - Number(y.seq));
    return rows.map((row) => {
      const record = row.record as JobRecord;
      store.held.hold(record.id, Number(row.fence), sentAt);
      return record;
    });
  }

  async dueForProgress(everyMs: number): Promise<JobRecord[]> {
    const { store } = this;
    if (store.released) return [];
    const { rows } = await store.guarded('cannot read the queued jobs', { rows: [], rowCount: 0 }, () =>
      store.run(sql.DUE_FOR_PROGRESS, [store.queueName, everyMs / 1000]),
    );
    return rows.map((row) => row.record as JobRecord);
  }

  async depth(): Promise<number> {
    const { store } = this;
    // Failing, it would wait for a statement timeout: /metrics answers at once without it.
    if (store.condition.down()) throw timedOut('the job store is failing');
    const { rows } = await store.run(sql.DEPTH, [store.queueName]);
    return Number(rows[0]?.n ?? 0);
  }
}
