/**
 * Test-only integrators on node:http and loopback: each answers the POST with a chosen status, then acts out a
 * behaviour (calling back correctly or breaking the contract on purpose); plus callback documents to send.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

/** What a test integrator received. */
export interface Received {
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  json: Record<string, unknown>;
}

/** How a test integrator reports back. */
export interface IntegratorTools {
  /** PATCHes the callback URL; `token: null` sends no Authorization header. */
  patch(
    doc: unknown,
    options?: { token?: string | null; contentType?: string; method?: string; body?: string },
  ): Promise<{ status: number; body: string }>;
}

/** A test-only integrator: answers `status` at once, then acts out `behave`. */
export interface FakeIntegrator {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** Starts a small node:http integrator on loopback. */
export async function startFakeIntegrator(
  behave: (request: Received, tools: IntegratorTools) => Promise<void> | void,
  /** The answer to the POST, or a function of the attempt number (1-based). */
  status: number | ((attempt: number) => number) = 200,
): Promise<FakeIntegrator> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      const request = { headers: req.headers, rawHeaders: req.rawHeaders, body, json };
      received.push(request);
      res.writeHead(typeof status === 'number' ? status : status(received.length)).end();
      const tools: IntegratorTools = {
        async patch(doc, options = {}) {
          const token = options.token === undefined ? String(json.access_token) : options.token;
          const headers: Record<string, string> = {
            'content-type': options.contentType ?? 'application/vnd.api+json',
          };
          if (token !== null) headers.authorization = `Bearer ${token}`;
          const response = await fetch(String(json.task_result_callback_url), {
            method: options.method ?? 'PATCH',
            headers,
            body: options.body ?? JSON.stringify(doc),
          });
          return { status: response.status, body: await response.text() };
        },
      };
      void Promise.resolve(behave(request, tools)).catch(() => undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    received,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** A callback document with this status (and optional message and outcomes). */
export function doc(status: string, extra: { message?: string; outcomes?: unknown[] } = {}): unknown {
  const document: { data: Record<string, unknown> } = {
    data: {
      type: 'task-results',
      attributes: { status, ...(extra.message ? { message: extra.message } : {}) },
    },
  };
  if (extra.outcomes) document.data.relationships = { outcomes: { data: extra.outcomes } };
  return document;
}

/** One outcome on the wire. */
export function outcome(id: string, attributes: Record<string, unknown> = {}): unknown {
  return {
    type: 'task-result-outcomes',
    attributes: { 'outcome-id': id, description: `finding ${id}`, ...attributes },
  };
}

/**
 * A starter of fake integrators, all closed after the calling file's tests. Call it at a test file's top level
 * (it registers the `afterAll`).
 */
export function fakeIntegrators(): (
  behave: (request: Received, tools: IntegratorTools) => Promise<void> | void,
  status?: number | ((attempt: number) => number),
) => Promise<FakeIntegrator> {
  const started: FakeIntegrator[] = [];
  afterAll(async () => {
    await Promise.all(started.map((i) => i.close()));
  });
  return async (behave, status = 200) => {
    const fake = await startFakeIntegrator(behave, status);
    started.push(fake);
    return fake;
  };
}
