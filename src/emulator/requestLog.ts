/**
 * The request log: one record per request (method, path, status, whether an Authorization header was present,
 * content type and length, bytes received). Never a token, never the secret part of a link.
 */
import { appendFileSync } from 'node:fs';
import { redactLinks } from './links.js';

/** One logged request. */
export interface RequestRecord {
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
  /** For archivist requests: which file (`shasums`, `shasums-sig`, `provider-binary`) and whose. */
  object?: string;
  owner?: string;
  /** The fault rule (1-based) that fired, if any, and what it did. */
  fault?: string;
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
