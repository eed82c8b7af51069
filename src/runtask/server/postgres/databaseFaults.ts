/**
 * What keeps the PostgreSQL job store from waiting forever on a database that hangs (its server frozen with the
 * connections open, a network that drops packets) or is briefly gone (a restart, a failover):
 *
 *   - node-postgres's own timeouts on every connection of the pool: a statement without an answer fails
 *     (`query_timeout` on the client, `statement_timeout` on the server), connecting or waiting for a pooled
 *     connection fails (`connectionTimeoutMillis`), and TCP keep-alive notices a peer that is gone;
 *   - a watch over the store's statements that notices one overdue well before it times out, so that /healthz
 *     and new requests say so (503) while it lasts, and the log says it at once;
 *   - retries of the writes a job cannot do without (its start, its end, the leases) until they are stored;
 *   - the store's condition: failing from a failure (or an overdue statement) until a statement begun after the
 *     last failure works again, with the log lines and what /healthz says.
 */
import type { EventLog } from '../log.js';
import { withoutPasswords } from '../redact.js';
import type { StoreHealth, StoreProblem } from '../store.js';

/** The timeouts and retry delay of the PostgreSQL store (options, so that tests can use short ones). */
export interface DatabaseTimeouts {
  /** A statement without an answer after this long fails (default 10 s). */
  statementTimeoutMs?: number;
  /** Connecting, or waiting for a free pooled connection, fails after this long (default 10 s). */
  connectTimeoutMs?: number;
  /** A statement unanswered this long makes the store failing: /healthz 503, new jobs refused (default 3 s). */
  overdueMs?: number;
  /** How often a write that failed (a job's start or end, the leases) is tried again (default 1 s). */
  retryEveryMs?: number;
}

/** The node-postgres pool settings for these timeouts (options of `pg.Pool`, which hands them to each client). */
export function poolSettings(timeouts: DatabaseTimeouts): Record<string, number | boolean> {
  const statement = timeouts.statementTimeoutMs ?? 10_000;
  return {
    query_timeout: statement,
    statement_timeout: statement,
    connectionTimeoutMillis: timeouts.connectTimeoutMs ?? 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/** An error with a code, for failures this module finds itself. */
export function timedOut(message: string): Error {
  return Object.assign(new Error(message), { code: 'ETIMEDOUT' });
}

/** What `work` settles to, or `value` once `ms` went by without it (`work` goes on). */
export async function settleWithin<T, U>(work: Promise<T>, ms: number, value: U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<U>((resolve) => {
    timer = setTimeout(() => resolve(value), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The store's statements in flight, and whether one of them is overdue. */
export class StatementWatch {
  private readonly running = new Map<number, number>();
  private next = 0;

  constructor(
    private readonly overdueMs: number,
    /** Called once per statement that becomes overdue. */
    private readonly onOverdue: () => void,
  ) {}

  /** Runs one statement (or one call of the queue library) under the watch. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const id = this.next++;
    this.running.set(id, Date.now());
    const timer = setTimeout(this.onOverdue, this.overdueMs);
    timer.unref();
    try {
      return await work();
    } finally {
      clearTimeout(timer);
      this.running.delete(id);
    }
  }

  /** True while a statement has waited for its answer longer than `overdueMs`. */
  overdue(): boolean {
    const limit = Date.now() - this.overdueMs;
    for (const since of this.running.values()) if (since <= limit) return true;
    return false;
  }
}

/**
 * Writes that failed, each tried again every `everyMs` until it reports done (stored, or no longer this
 * instance's to write). The attempts of one round run together.
 */
export class Retries {
  private readonly pending = new Map<string, () => Promise<boolean>>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly everyMs: number) {}

  /** Tries `attempt` again later (replacing a pending attempt for the same key). */
  add(key: string, attempt: () => Promise<boolean>): void {
    this.pending.set(key, attempt);
    this.arm();
  }

  has(key: string): boolean {
    return this.pending.has(key);
  }

  /** The keys still waiting. */
  keys(): string[] {
    return [...this.pending.keys()];
  }

  /** Tries every pending write once now (or waits for the round running). */
  flush(): Promise<void> {
    this.round ??= Promise.all(
      [...this.pending].map(async ([key, attempt]) => {
        const done = await attempt().catch(() => false);
        if (done && this.pending.get(key) === attempt) this.pending.delete(key);
      }),
    )
      .then(() => undefined)
      .finally(() => {
        this.round = undefined;
        this.arm();
      });
    return this.round;
  }

  /** No more rounds (what is pending stays pending). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private arm(): void {
    if (this.stopped || this.timer !== undefined || this.round !== undefined || this.pending.size === 0)
      return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.everyMs);
    this.timer.unref();
  }
}

/** The error code of a failure: PostgreSQL's SQLSTATE, the driver's (`ECONNREFUSED`…), or one made up for it. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code !== '') return code;
  // node-postgres's own timeouts (a statement, a connection) carry no code.
  return /\btimeout\b|timed out/i.test(String((error as Error)?.message)) ? 'ETIMEDOUT' : 'EDATABASE';
}

/** Where the store is, for its messages: the database as shown, its passwords to keep out of them. */
export interface StoreIdentity {
  log: EventLog;
  /** The database URL as shown (`redactDatabaseUrl`). */
  where: string;
  /** The URL's passwords (`passwordsOf`). */
  secrets: readonly string[];
}

/**
 * Whether the store works now. A failure makes it failing (logged once per incident); a statement that began
 * after the last failure and worked makes it work again. The statements run under `watch`, whose overdue
 * statements count as failures.
 */
export class StoreCondition {
  readonly watch: StatementWatch;
  private failing = false;
  private problems = 0;
  private lastProblem: StoreProblem | undefined;
  /** Failures noted so far (each one, not only each incident's first): see `ok`. */
  private incidents = 0;

  constructor(
    private readonly identity: StoreIdentity,
    overdueMs: number,
    /** How many jobs the store holds, for the log line of a failure. */
    private readonly jobs: () => number,
  ) {
    this.watch = new StatementWatch(overdueMs, () =>
      this.problem(timedOut(`no answer for ${overdueMs} ms`), 'a statement is overdue'),
    );
  }

  /** A mark to give `ok` once the statement that begins now worked. */
  mark(): number {
    return this.incidents;
  }

  /** True while failing, or while a statement is overdue. */
  down(): boolean {
    return this.failing || this.watch.overdue();
  }

  /**
   * A statement that began at mark `since` worked: the store works again, unless a failure was noted since it
   * began (a statement sent before the server went away may still come back fine after the failure).
   */
  ok(since: number): void {
    if (!this.failing || since !== this.incidents) return;
    this.failing = false;
    this.identity.log.info('store.restored', `the job store ${this.identity.where} works again`, {
      database: this.identity.where,
    });
  }

  /** A failure of `what`: the store is failing (logged at the first failure of an incident). */
  problem(error: unknown, what: string): void {
    this.incidents++;
    const code = codeOf(error);
    const detail = withoutPasswords(String((error as Error)?.message ?? error), this.identity.secrets);
    const message = `${what}: ${detail}`;
    this.lastProblem = { at: new Date().toISOString(), code, message };
    if (this.failing) return;
    this.failing = true;
    this.problems++;
    this.identity.log.error('store.failed', `the job store ${this.identity.where} failed: ${message}`, {
      code,
      database: this.identity.where,
      jobs: this.jobs(),
    });
  }

  /** What /healthz says, `unsaved` being the jobs whose latest record is not stored. */
  health(unsaved: number): StoreHealth {
    return {
      status: this.down() ? 'failing' : 'ok',
      problems: this.problems,
      ...(this.lastProblem === undefined ? {} : { lastProblem: this.lastProblem }),
      unsaved,
    };
  }
}
