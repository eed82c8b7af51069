/**
 * A small stand-in for the platform's side of a run task, on node:http and loopback only: it records every
 * request, answers callbacks (or fails them on demand: 500/503/429/reset/401/422), serves the plan JSON through
 * a 307 to a blob URL on itself, and coordinates the test handler (which reports in and waits for its orders).
 * Tests await what it records; nothing here sleeps. `TestPlatform.perFile()` is one for the calling test file.
 */
import { randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/** One request the platform received. */
export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body when it was JSON. */
  json: unknown;
  at: number;
}

/** A scripted answer: a status (with optional body and headers) or a connection reset. */
export type Scripted = { status: number; body?: string; headers?: Record<string, string> } | { reset: true };

/** What the test handler reports when it starts. */
export interface HandlerReport {
  key: string;
  env: Record<string, string>;
  payload: Record<string, unknown>;
  payloadFile: string;
  plan: unknown;
  cwd: string;
  pid: number;
}

/** Orders for the test handler. */
export interface HandlerOrders {
  stdout?: string;
  stderr?: string;
  exitCode?: number;
  /** Never exit (for timeouts and shutdown). */
  hang?: boolean;
  /** Start a `sleep` child first and report its pid (to check the process group is killed). */
  spawnChild?: boolean;
}

const CALLBACK = /^\/api\/v2\/task-results\/([^/]+)\/callback$/;
const PLAN = /^\/api\/v2\/plans\/([^/]+)\/json-output$/;
const BLOB = /^\/_archivist\/v1\/object\/([^/]+)$/;

type Waiter = { match: (r: Recorded) => boolean; resolve: (r: Recorded) => void };

/** The test platform. */
export class TestPlatform {
  readonly requests: Recorded[] = [];
  /** Plan JSON documents by plan id; unknown ids get a small default plan. */
  readonly plans = new Map<string, unknown>();
  private readonly scripts = new Map<string, Scripted[]>();
  private readonly waiters = new Set<Waiter>();
  private readonly orders = new Map<string, (orders: HandlerOrders) => void>();
  private readonly pendingOrders = new Map<string, HandlerOrders>();
  private readonly blobs = new Map<string, string>();
  /** Every connection, so that close() can cut long-polling handlers. */
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private origin: string | undefined;

  private constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** Starts a platform on a free loopback port. */
  static async start(): Promise<TestPlatform> {
    const platform = new TestPlatform();
    await platform.listen();
    return platform;
  }

  /**
   * The calling test file's platform: listening from before its first test until after its last. Usable in
   * tests and hooks, not while the file is being collected (its URL is not known yet).
   */
  static perFile(): TestPlatform {
    const platform = new TestPlatform();
    beforeAll(() => platform.listen());
    afterAll(() => platform.close());
    return platform;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    if (this.origin === undefined) throw new Error('the test platform is not listening yet');
    return this.origin;
  }

  private async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers the next requests to `key` (a task result id, a plan id, or `blob`) with these, in order. */
  script(key: string, answers: Scripted[]): void {
    this.scripts.set(key, [...(this.scripts.get(key) ?? []), ...answers]);
  }

  /** Forgets the answers still scripted for `key`. */
  clearScript(key: string): void {
    this.scripts.delete(key);
  }

  /** The callback PATCHes received for a task result id. */
  callbacks(taskResultId: string): Recorded[] {
    return this.requests.filter((r) => r.method === 'PATCH' && CALLBACK.exec(r.path)?.[1] === taskResultId);
  }

  /** Resolves with the first request (already received or still to come) that matches. */
  waitFor(match: (r: Recorded) => boolean): Promise<Recorded> {
    const found = this.requests.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.add({ match, resolve }));
  }

  /** Resolves once `count` callbacks with `status` were received for a task result id. */
  async waitForCallbacks(taskResultId: string, status: string, count = 1): Promise<Recorded[]> {
    const matching = (): Recorded[] => this.callbacks(taskResultId).filter((r) => statusOf(r) === status);
    while (matching().length < count) {
      const seen = matching().length;
      await this.waitFor((r) => r.method === 'PATCH' && statusOf(r) === status && matching().length > seen);
    }
    return matching();
  }

  /** Resolves with the report of the handler started for `key` (the run id). */
  async waitForHandler(key: string): Promise<HandlerReport> {
    const r = await this.waitFor((x) => x.path === '/handler/start' && (x.json as HandlerReport).key === key);
    return r.json as HandlerReport;
  }

  /** Resolves with the pid of the child the handler for `key` started. */
  async waitForChild(key: string): Promise<number> {
    const r = await this.waitFor(
      (x) => x.path === '/handler/child' && (x.json as { key: string }).key === key,
    );
    return (r.json as { pid: number }).pid;
  }

  /** Tells the handler for `key` what to print and how to exit (now, or as soon as it reports in). */
  release(key: string, orders: HandlerOrders): void {
    const waiting = this.orders.get(key);
    if (waiting) waiting(orders);
    else this.pendingOrders.set(key, orders);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = body === '' ? undefined : JSON.parse(body);
    } catch {
      json = undefined;
    }
    const path = new URL(req.url ?? '/', this.url).pathname;
    const recorded: Recorded = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      body,
      json,
      at: Date.now(),
    };
    this.requests.push(recorded);
    for (const waiter of [...this.waiters]) {
      if (waiter.match(recorded)) {
        this.waiters.delete(waiter);
        waiter.resolve(recorded);
      }
    }
    const callback = CALLBACK.exec(path);
    const plan = PLAN.exec(path);
    const blob = BLOB.exec(path);
    const key = callback?.[1] ?? plan?.[1] ?? (blob ? 'blob' : undefined);
    const scripted = key === undefined ? undefined : this.scripts.get(key)?.shift();
    if (scripted !== undefined) {
      if ('reset' in scripted) return void req.socket.destroy();
      res.writeHead(scripted.status, scripted.headers ?? {});
      return void res.end(scripted.body ?? '');
    }
    if (callback) return json200(res, { data: { id: callback[1], type: 'task-results' } });
    if (plan) {
      const secret = randomBytes(12).toString('hex');
      this.blobs.set(secret, plan[1]!);
      res.writeHead(307, { location: `${this.url}/_archivist/v1/object/${secret}` });
      return void res.end();
    }
    if (blob) {
      const planId = this.blobs.get(blob[1]!);
      if (planId === undefined) return void res.writeHead(404).end();
      return json200(
        res,
        this.plans.get(planId) ?? { format_version: '1.2', plan_id: planId, resource_changes: [] },
      );
    }
    if (path === '/handler/start') {
      const reportKey = (json as HandlerReport).key;
      const ready = this.pendingOrders.get(reportKey);
      this.pendingOrders.delete(reportKey);
      const orders =
        ready ?? (await new Promise<HandlerOrders>((resolve) => this.orders.set(reportKey, resolve)));
      this.orders.delete(reportKey);
      return json200(res, orders);
    }
    if (path === '/handler/child') return json200(res, {});
    res.writeHead(404).end();
  }
}

function json200(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/vnd.api+json' });
  res.end(JSON.stringify(body));
}

/** The status attribute of a recorded callback. */
export function statusOf(r: Recorded): string | undefined {
  return (r.json as { data?: { attributes?: { status?: string } } } | undefined)?.data?.attributes?.status;
}
