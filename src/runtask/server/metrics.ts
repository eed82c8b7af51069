/**
 * `GET /metrics`: the integrator's counters in the Prometheus text format (prom-client), in a registry of its own
 * per integrator (never prom-client's global one), so that several integrators in one process count apart.
 *
 * Requests are counted when their answer is written (server.ts), by route, HTTP status and outcome; the job side
 * is read from each route's event log (the events the jobs write anyway: `handler.finished`, `callback.*`), so
 * that counting adds nothing to the job code; queue depth and running jobs are read from the job managers at each
 * scrape. Label values are route paths, statuses and fixed words: never a token, a run id or a callback URL.
 */
import type { ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EventLog, LogEvent } from './log.js';

/** What a request came to: a job, a copy of one, a verification, or a refusal (by its status). */
export type RequestOutcome = 'accepted' | 'duplicate' | 'verification' | 'rejected' | 'unavailable' | 'error';

/** The `route` label of a request whose path no route serves (route labels are paths, so it cannot clash). */
export const UNMATCHED_ROUTE = 'unmatched';

/** What the request side notes on an answer, for counting once it is written. */
interface RequestTag {
  route?: string;
  outcome?: RequestOutcome;
  /** /healthz and /metrics: not run task requests, not counted. */
  probe?: boolean;
}

const tags = new WeakMap<ServerResponse, RequestTag>();

/** Notes the route, the outcome of a 200, or that the request is a probe (see `countAnswer`). */
export function tagRequest(res: ServerResponse, tag: RequestTag): void {
  tags.set(res, { ...tags.get(res), ...tag });
}

/** The outcome an answer without a noted one stands for. */
function outcomeOf(status: number): RequestOutcome {
  if (status === 503) return 'unavailable';
  if (status >= 500) return 'error';
  return status >= 400 ? 'rejected' : 'accepted';
}

/** What a scrape reads from one route's jobs. */
export interface RouteGauges {
  route: string;
  counts(): { queued: number; running: number; reporting: number };
}

/** The store's state, for `runtask_store_up`. */
export interface StoreGauge {
  kind: string;
  ok(): boolean;
  /** Jobs waiting in each route's shared queue (PostgreSQL), read at each scrape. */
  depth?: () => Promise<{ route: string; depth: number }[]>;
}

/** Handler durations, in seconds: from a quick script to the platform's 60-minute limit. */
const DURATION_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** The delivery label of each callback event. */
const DELIVERY: Record<string, string> = {
  'callback.sent': 'delivered',
  'callback.refused': 'refused',
  'callback.failed': 'gave_up',
  'callback.not_allowed': 'not_allowed',
  'callback.deferred': 'deferred',
};

/** The metrics of one integrator. */
export class IntegratorMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'status' | 'outcome'>;
  private readonly durations: Histogram<'route' | 'result'>;
  private readonly callbacks: Counter<'route' | 'status' | 'delivery'>;
  readonly takeovers: Counter;

  constructor(routes: () => Iterable<RouteGauges>, store: StoreGauge) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'runtask_requests_total',
      help: 'Requests to run task routes, by route (unmatched: no route serves the path), HTTP status and outcome (accepted, duplicate, verification, rejected, unavailable, error).',
      labelNames: ['route', 'status', 'outcome'],
      registers,
    });
    const gauge = (name: string, help: string, phase: keyof ReturnType<RouteGauges['counts']>): void => {
      new Gauge({
        name,
        help,
        labelNames: ['route'],
        registers,
        collect() {
          this.reset();
          for (const route of routes()) this.set({ route: route.route }, route.counts()[phase]);
        },
      });
    };
    gauge(
      'runtask_jobs_queued',
      'Accepted jobs waiting for a free check slot (the queue depth), by route.',
      'queued',
    );
    gauge(
      'runtask_jobs_running',
      'Jobs whose check (plan download and handler) is running, by route.',
      'running',
    );
    gauge('runtask_jobs_reporting', 'Jobs sending their final callback, by route.', 'reporting');
    this.durations = new Histogram({
      name: 'runtask_handler_duration_seconds',
      help: 'How long handlers ran, by route and result (passed, failed, timeout: killed at its timeout; aborted: stopped by a shutdown).',
      labelNames: ['route', 'result'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.callbacks = new Counter({
      name: 'runtask_callbacks_total',
      help: 'Callbacks to the platform, by route, status sent (running, passed, failed) and delivery (delivered, refused, gave_up, not_allowed, deferred: left for the next start).',
      labelNames: ['route', 'status', 'delivery'],
      registers,
    });
    this.takeovers = new Counter({
      name: 'runtask_job_takeovers_total',
      help: 'Jobs taken over from another instance that stopped renewing its lease. Always 0 with the local journal, which no other instance shares: only a shared job store can take jobs over.',
      registers,
    });
    new Gauge({
      name: 'runtask_store_up',
      help: 'Whether the job store takes new jobs (1) or new requests are refused with 503 (0), by kind of store.',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        this.set({ kind: store.kind }, store.ok() ? 1 : 0);
      },
    });
    const depth = store.depth;
    if (depth !== undefined) {
      new Gauge({
        name: 'runtask_queue_depth',
        help: 'Jobs accepted by a front that wait in the shared queue for a worker, by route (the same on every instance of the database; absent when the database cannot be read).',
        labelNames: ['route'],
        registers,
        async collect() {
          this.reset();
          const depths = await depth().catch(() => []);
          for (const { route, depth: n } of depths) this.set({ route }, n);
        },
      });
    }
  }

  /** Counts one written answer, unless it was a probe (see `tagRequest`). */
  countAnswer(res: ServerResponse): void {
    const tag = tags.get(res) ?? {};
    if (tag.probe === true) return;
    this.requests.inc({
      route: tag.route ?? UNMATCHED_ROUTE,
      status: String(res.statusCode),
      outcome: tag.outcome ?? outcomeOf(res.statusCode),
    });
  }

  /** Counts the handler runs and callbacks a route's log reports; returns the unsubscribe function. */
  watch(route: string, log: EventLog): () => void {
    return log.subscribe((event: LogEvent) => {
      const { fields } = event;
      if (event.event === 'handler.finished' && typeof fields.duration_ms === 'number') {
        const result =
          fields.aborted === true ? 'aborted' : fields.timed_out === true ? 'timeout' : String(fields.status);
        this.durations.observe({ route, result }, fields.duration_ms / 1000);
        return;
      }
      const delivery = DELIVERY[event.event];
      if (delivery !== undefined) this.callbacks.inc({ route, status: String(fields.status), delivery });
    });
  }

  /** The text format's content type. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric, in the text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
