/**
 * Each call site goes through the one retry policy, seen from the wire: a loopback server scripts the answers
 * and counts the requests. These are the rules a call site did not follow before it used src/net/retry.ts —
 * downloads honour Retry-After and retry 425/507 and stop at a file too large; an upload link asking for hours
 * is not waited on; the registry client retries 425/507 and takes X-RateLimit-Reset from a 429 only; the
 * callback client does not retry a TLS mismatch until its deadline; the plan JSON fetch honours Retry-After.
 * Backoffs are set far longer than the test timeout where the rule is that the server's wait replaces them, so
 * the old behaviour fails by timing out, and no assertion is on time.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHostname } from '../../src/config/index.js';
import { ApiError } from '../../src/errors.js';
import { createDownloader, DownloadError } from '../../src/registry/downloads.js';
import { createRegistryClient } from '../../src/registry/http.js';
import { uploadFile } from '../../src/registry/uploads.js';
import { sendCallback } from '../../src/runtask/callback/client.js';
import { PlatformOrigins } from '../../src/runtask/callback/origins.js';
import { fetchPlanJson } from '../../src/runtask/callback/planJson.js';
import { captureOutput } from '../release/helpers.js';
import { tempDir } from '../helpers/tmp.js';

/** One scripted answer: a status with headers and body. After the script: 200 with `last`. */
interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A loopback server answering `script` in turn, then 200 with `last`; it counts requests and connections. */
async function scripted(script: Scripted[], last = '{}') {
  const requests: IncomingMessage[] = [];
  let connections = 0;
  const queue = [...script];
  const server = createServer((req, res) => {
    requests.push(req);
    req.resume();
    req.on('end', () => {
      const next = queue.shift() ?? { status: 200, body: last };
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(next.body ?? '');
    });
  });
  server.on('connection', () => connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, requests, connections: () => connections };
}

describe('downloads', () => {
  it('a file over the size limit is not downloaded again: one request', async () => {
    const server = await scripted([], 'x'.repeat(100));
    const error = await createDownloader({ output: captureOutput().output, baseDelayMs: 0 })
      .bytes(`${server.url}/file`, 'SHA256SUMS', 10)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as DownloadError).reason).toBe('too large');
    expect(server.requests).toHaveLength(1);
  });

  it("honour Retry-After: the server's 0 s replaces a 10-minute backoff", async () => {
    const server = await scripted([{ status: 503, headers: { 'retry-after': '0' } }], 'sums');
    const body = await createDownloader({ output: captureOutput().output, baseDelayMs: 600_000 }).bytes(
      `${server.url}/file`,
      'SHA256SUMS',
    );
    expect(body.toString()).toBe('sums');
    expect(server.requests).toHaveLength(2);
  });

  it('retry 425 and 507 like every other transient answer', async () => {
    const server = await scripted([{ status: 425 }, { status: 507 }], 'sums');
    const body = await createDownloader({ output: captureOutput().output, baseDelayMs: 0 }).bytes(
      `${server.url}/file`,
      'SHA256SUMS',
    );
    expect(body.toString()).toBe('sums');
    expect(server.requests).toHaveLength(3);
  });
});

describe('uploads', () => {
  it('a link that asks to come back in an hour is not waited on: the failure is reported at once', async () => {
    const server = await scripted([{ status: 429, headers: { 'retry-after': '3600' } }]);
    const error = await uploadFile({
      url: `${server.url}/_archivist/v1/object/secret`,
      filename: 'SHA256SUMS',
      body: { data: new Uint8Array([1, 2, 3]) },
      output: captureOutput().output,
      retry: { limit: 4, baseDelayMs: 1, maxDelayMs: 2 },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe('Uploading SHA256SUMS failed: 429');
    expect(server.requests).toHaveLength(1);
  });
});

describe('the registry client', () => {
  const client = (url: string) =>
    createRegistryClient({
      apiHost: parseHostname(url, 'test'),
      token: 't0ken',
      output: captureOutput().output,
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
    });

  it('retries a read answered 425 or 507', async () => {
    const server = await scripted([{ status: 425 }, { status: 507 }]);
    await client(server.url).request('GET', '/api/v2/ping');
    expect(server.requests).toHaveLength(3);
  });

  it('takes X-RateLimit-Reset from a 429 only: a 503 carrying one waits the backoff', async () => {
    const server = await scripted([{ status: 503, headers: { 'x-ratelimit-reset': '100' } }]);
    await client(server.url).request('GET', '/api/v2/ping');
    expect(server.requests).toHaveLength(2);
  });
});

describe('the integrator', () => {
  it('does not retry a callback whose platform does not speak TLS until the deadline: one attempt', async () => {
    const server = await scripted([]);
    const url = `https://127.0.0.1:${server.port}/api/v2/task-results/1/callback`;
    const outcome = await sendCallback({
      url,
      token: 'run-token',
      result: { status: 'passed' },
      allowed: new PlatformOrigins([new URL(url).origin]),
      deadlineMs: 60_000,
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
    });
    expect(outcome).toMatchObject({ kind: 'gave-up', attempts: 1 });
    expect(server.connections()).toBe(1);
  });

  it("honours Retry-After on the plan JSON: the server's 0 s replaces a 10-minute backoff", async () => {
    const server = await scripted([{ status: 503, headers: { 'retry-after': '0' } }], '{"plan":1}');
    const file = path.join(tempDir(), 'plan.json');
    const url = `${server.url}/api/v2/plans/plan-1/json-output`;
    const bytes = await fetchPlanJson({
      url,
      token: 'run-token',
      allowed: new PlatformOrigins([server.url]),
      file,
      deadlineMs: 600_000,
      retry: { baseDelayMs: 600_000, maxDelayMs: 600_000 },
    });
    expect(bytes).toBe(10);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"plan":1}');
    expect(server.requests).toHaveLength(2);
  });
});
