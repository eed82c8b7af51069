/**
 * One request on its way through the emulator: the `Exchange` its steps share (the handlers' context, the
 * target once read, the facts the request log adds), `ExchangeResponse`, the server's response class, which
 * tells the request log when an answer ends and lets a fault replace an answer, and `runSteps`, which runs the
 * steps in order until one has answered.
 */
import {
  ServerResponse,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
} from 'node:http';
import type { RequestTarget } from '../net/requestTarget.js';
import type { RequestContext, Route } from './http.js';

/** What the request log records of an exchange beyond the request itself (set by the steps that learn it). */
export interface ExchangeFacts {
  /** For archivist requests: which file (`shasums`, `shasums-sig`, `provider-binary`) and whose. */
  object?: string;
  owner?: string;
  /** The fault rule (1-based) that fired, if any, and what it did. */
  fault?: string;
}

/**
 * The emulator's response: a `ServerResponse` that calls its `beforeEnd` listener just before the answer's last
 * bytes are handed to the socket (so that the request log holds the record before a client can have its answer),
 * and whose answer a fault may replace (`replaceAnswer`): the handler's status, headers and body are then
 * dropped, and the replacement answers (or cuts the connection) when the handler ends its answer.
 */
export class ExchangeResponse extends ServerResponse<IncomingMessage> {
  private ending: (() => void) | undefined;
  private replacement: (() => void) | undefined;

  /** Sets the listener called once, just before the answer ends. */
  beforeEnd(listener: () => void): void {
    this.ending = listener;
  }

  /** Drops the handler's answer from now on; `replacement` runs instead when the handler ends it. */
  replaceAnswer(replacement: () => void): void {
    this.replacement = replacement;
  }

  /** Starts the answer, unless it is being replaced. */
  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    if (this.replacement) return this;
    if (typeof reason === 'string') return super.writeHead(statusCode, reason, headers);
    return super.writeHead(statusCode, reason ?? headers);
  }

  /** Sends part of the body, unless the answer is being replaced (then the chunk is dropped). */
  override write(
    chunk: unknown,
    encoding?: BufferEncoding | ((error: Error | null | undefined) => void),
    callback?: (error: Error | null | undefined) => void,
  ): boolean {
    if (this.replacement) {
      const done = typeof encoding === 'function' ? encoding : callback;
      if (done) process.nextTick(done, null);
      return true;
    }
    if (typeof encoding === 'function') return super.write(chunk, encoding);
    if (encoding === undefined) return super.write(chunk, callback);
    return super.write(chunk, encoding, callback);
  }

  /** Ends the answer (telling the `beforeEnd` listener first), or runs the replacement of a replaced one. */
  override end(chunk?: unknown, encoding?: BufferEncoding | (() => void), callback?: () => void): this {
    const replacement = this.replacement;
    if (replacement) {
      this.replacement = undefined;
      replacement();
      return this;
    }
    const ending = this.ending;
    this.ending = undefined;
    ending?.();
    if (typeof chunk === 'function') return super.end(chunk as () => void);
    if (typeof encoding === 'function') return super.end(chunk, encoding);
    if (encoding === undefined) return super.end(chunk, callback);
    return super.end(chunk, encoding, callback);
  }
}

/** One request as the emulator's steps see it. */
export interface Exchange {
  req: IncomingMessage;
  res: ExchangeResponse;
  /** What the handler gets; its path and query are set by the target step. */
  ctx: RequestContext;
  /** The target once read; `undefined` before that step, or when the target was malformed. */
  target: RequestTarget | undefined;
  /** The route found for it; `undefined` before the routing step. */
  route: Route | undefined;
  /** When the request arrived (ms, the emulator's clock). */
  started: number;
  /** What the request log adds to the record: the fault that fired, the archivist object. */
  facts: ExchangeFacts;
}

/** A step of the pipeline: `'answered'` when the request has its answer (or lost its connection) and the later steps must not run. */
export type Step = (exchange: Exchange) => StepResult | Promise<StepResult>;

/** What a step tells the pipeline. */
export type StepResult = 'next' | 'answered';

/** A new exchange for a request, before any step. */
export function openExchange(req: IncomingMessage, res: ExchangeResponse, started: number): Exchange {
  const ctx: RequestContext = {
    req,
    res,
    method: req.method ?? 'GET',
    path: '',
    query: new URLSearchParams(),
    params: {},
    body: undefined,
  };
  return { req, res, ctx, target: undefined, route: undefined, started, facts: {} };
}

/** Runs `steps` in order until one answers; what a step throws goes to `fail`. */
export async function runSteps(
  exchange: Exchange,
  steps: readonly Step[],
  fail: (exchange: Exchange, error: unknown) => void,
): Promise<void> {
  try {
    for (const step of steps) if ((await step(exchange)) === 'answered') return;
  } catch (error) {
    fail(exchange, error);
  }
}
