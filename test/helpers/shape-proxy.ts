/**
 * A loopback proxy in front of an emulator that replaces chosen answers with documents of the wrong shape, as a
 * misconfigured proxy or an old Terraform Enterprise would send them. Everything else is passed through byte
 * for byte, so the emulator's request log still tells what was written.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The answer that replaces a real one: a status (default 200), a body and its media type. */
export interface ReplacedAnswer {
  status?: number;
  contentType?: string;
  body: string;
}

/** Which request to answer differently, and how (given the real answer's parsed JSON, or undefined). */
export interface Rewrite {
  method: string;
  /** Matched against the path without the query string. */
  path: RegExp;
  answer: (real: unknown) => ReplacedAnswer;
}

/** A running proxy. */
export interface ShapeProxy {
  url: string;
  /** How many answers each rewrite replaced, in order. */
  hits: number[];
  close(): Promise<void>;
}

/** A JSON:API answer with the given document. */
export function jsonAnswer(document: unknown, status = 200): ReplacedAnswer {
  return { status, contentType: 'application/vnd.api+json', body: JSON.stringify(document) };
}

/** Starts a proxy to `target` (an emulator URL) applying `rewrites`; the request still reaches the target. */
export async function startShapeProxy(target: string, rewrites: Rewrite[]): Promise<ShapeProxy> {
  const upstream = new URL(target);
  const hits = rewrites.map(() => 0);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const forwarded = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer: IncomingMessage) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            const path = new URL(req.url ?? '/', 'http://proxy.invalid').pathname;
            const index = rewrites.findIndex((r) => r.method === req.method && r.path.test(path));
            if (index < 0) {
              res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
              return;
            }
            hits[index] = (hits[index] ?? 0) + 1;
            let real: unknown;
            try {
              real = JSON.parse(Buffer.concat(body).toString('utf8'));
            } catch {
              real = undefined;
            }
            const replaced = rewrites[index]!.answer(real);
            res
              .writeHead(replaced.status ?? 200, { 'content-type': replaced.contentType ?? 'text/plain' })
              .end(replaced.body);
          });
        },
      );
      forwarded.on('error', () => res.destroy());
      forwarded.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
