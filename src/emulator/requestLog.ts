/**
 * The request log: one record per request (method, path, status, whether an Authorization header was present,
 * content type and length, bytes received, the Range asked for). Never a token, never the secret part of a link. `logRequest` is the
 * emulator's step that writes a request's record when its answer ends, or when its connection closes without one.
 */
import { appendFileSync } from 'node:fs';
import type { Exchange, ExchangeFacts, Step } from './exchange.js';
import { redactLinks } from './links.js';

/** One logged request. */
export interface RequestRecord extends ExchangeFacts {
  time: string;
  method: string;
  /** The path, with archivist secrets replaced by `[secret]`. */
  path: string;
  /** The query string without `?`, if any. */
  query?: string;
  status: number;
  /** True when the request carried an `Authorization` header (its value is never recorded). */
  authorization: boolean;
  contentType: string | null;
  /** The `Content-Length` header, when sent. */
  contentLength: number | null;
  /** Request body bytes received. */
  bytes: number;
  durationMs: number;
  userAgent: string | null;
  /** The `Range` header, when sent (a partial read of a download, or a client asking whether ranges are served). */
  range?: string;
}

/** Keeps records in memory (for tests) and appends them to a JSONL file when one is given. */
export class RequestLog {
  readonly records: RequestRecord[] = [];

  constructor(
    private readonly file: string | undefined,
    private readonly keep = 100_000,
    /** Told when the file cannot be written; the emulator keeps serving (and keeps the records in memory). */
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Records one request. Never throws: it runs as answers end and connections close. */
  add(record: RequestRecord): void {
    const safe = { ...record, path: redactLinks(record.path) };
    if (this.records.length >= this.keep) this.records.shift();
    this.records.push(safe);
    if (!this.file) return;
    try {
      appendFileSync(this.file, JSON.stringify(safe) + '\n');
    } catch (error) {
      this.onError(error);
    }
  }

  /** Forgets the in-memory records (the file is kept). */
  clear(): void {
    this.records.length = 0;
  }
}

/**
 * Step: records the request when its answer is complete (before its last bytes leave, so a client that has its
 * answer always finds the record), or with status 0 when the connection closes without an answer (a reset, an
 * upload cut short: its `bytes` say how much arrived).
 */
export function logRequest(log: RequestLog, now: () => number): Step {
  return (exchange) => {
    const { res } = exchange;
    let logged = false;
    const add = (status: number): void => {
      if (logged) return;
      logged = true;
      log.add(recordOf(exchange, status, now()));
    };
    res.beforeEnd(() => add(res.statusCode));
    res.on('close', () => add(res.headersSent ? res.statusCode : 0));
    return 'next';
  };
}

/** The record of an exchange answered with `status` at `time`. */
function recordOf(exchange: Exchange, status: number, time: number): RequestRecord {
  const { req, ctx, target } = exchange;
  const length = req.headers['content-length'];
  // What the log shows: the target as it came until it is read (a malformed one stays so, links redacted by
  // `add`), then its path and query.
  const path = target ? target.path : (req.url ?? '');
  return {
    time: new Date(exchange.started).toISOString(),
    method: ctx.method,
    path,
    ...(target?.search ? { query: target.search.slice(1) } : {}),
    status,
    authorization: req.headers.authorization !== undefined,
    contentType: req.headers['content-type'] ?? null,
    contentLength: length === undefined ? null : Number(length),
    bytes: ctx.bytesIn ?? ctx.body?.length ?? 0,
    durationMs: time - exchange.started,
    userAgent: req.headers['user-agent'] ?? null,
    ...(req.headers.range === undefined ? {} : { range: req.headers.range }),
    ...exchange.facts,
  };
}
