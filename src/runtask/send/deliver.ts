/**
 * One POST of the run task request, exactly as the platform sends it (run-tasks.md §1.2): the three documented
 * headers (`X-TFC-Task-Signature` is an empty string without a key) plus what HTTP itself needs, the exact
 * bytes that were signed, no redirects followed. Never throws for HTTP or network outcomes.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PLATFORM_USER_AGENT } from './request.js';

/** How one attempt ended: an HTTP status (with the start of the body), or a network error. */
export type Delivery =
  | { kind: 'answered'; status: number; body: string; ms: number }
  | { kind: 'failed'; error: string; ms: number };

/** What to send. */
export interface DeliverInput {
  url: URL;
  body: Buffer;
  /** Lowercase hex HMAC-SHA512 of `body`, or `''` without a key. */
  signature: string;
  timeoutMs: number;
  signal: AbortSignal;
}

const BODY_KEPT = 64 * 1024;

function readAnswer(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      if (size < BODY_KEPT) chunks.push(chunk);
      size += chunk.length;
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8').slice(0, BODY_KEPT)));
    response.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** Sends the request once. */
export function deliverRequest(input: DeliverInput): Promise<Delivery> {
  const started = Date.now();
  const send = input.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (delivery: Delivery): void => {
      if (settled) return;
      settled = true;
      resolve(delivery);
    };
    const req = send(input.url, {
      method: 'POST',
      // One connection per attempt, closed after it: a retry never rides on a connection the integrator dropped.
      agent: false,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': PLATFORM_USER_AGENT,
        'X-TFC-Task-Signature': input.signature,
        'Content-Length': String(input.body.length),
      },
      timeout: input.timeoutMs,
      signal: input.signal,
    });
    req.on('response', (response) => {
      void readAnswer(response).then((body) =>
        finish({ kind: 'answered', status: response.statusCode ?? 0, body, ms: Date.now() - started }),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${input.timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const reason = input.signal.aborted ? 'interrupted' : (error.code ?? error.message);
      finish({ kind: 'failed', error: reason, ms: Date.now() - started });
    });
    req.end(input.body);
  });
}
