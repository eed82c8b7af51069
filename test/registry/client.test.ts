/**
 * The HTTP layer (src/registry/http.ts) against the emulator, two tiny servers of another origin, and servers
 * whose answers stall, drip or never end after their headers (each read ends: timeouts, a 16 MiB cap).
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseHostname } from '../../src/config/index.js';
import type { Emulator } from '../../src/emulator/server.js';
import { ApiError, UnexpectedAnswerError } from '../../src/errors.js';
import { listGpgKeys } from '../../src/registry/gpgKeys.js';
import {
  MAX_ANSWER_BYTES,
  createRegistryClient,
  type RegistryClientOptions,
} from '../../src/registry/http.js';
import { providerResource } from '../../src/registry/schemas.js';
import { captureOutput, keyId } from '../release/helpers.js';
import { emulatorWithKeys } from '../commands/verify/helpers.js';

const JSONAPI_TYPE = 'application/vnd.api+json';

/** A server on another origin that records the headers it gets and answers 200 `{}` (or redirects). */
async function recorder(
  redirectTo?: string,
): Promise<{ url: string; seen: IncomingHttpHeaders[]; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    if (redirectTo) res.writeHead(302, { location: `${redirectTo}/landing` }).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

describe('RegistryClient', () => {
  let emulator: Emulator;
  const servers: Server[] = [];
  const client = (options: Partial<RegistryClientOptions> = {}) => {
    const sink = captureOutput({ verbose: true });
    const c = createRegistryClient({
      apiHost: parseHostname(emulator.url, 'test'),
      token: emulator.ownerToken,
      output: sink.output,
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
      ...options,
    });
    return { client: c, stderr: sink.stderr };
  };
  const errorOf = async (promise: Promise<unknown>): Promise<ApiError> => {
    const error = await promise.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  };

  beforeAll(async () => {
    emulator = await emulatorWithKeys(['signer']);
  });
  beforeEach(() => {
    emulator.requestLog.clear();
    emulator.faults.clear();
  });
  afterAll(async () => {
    await emulator.close();
    for (const server of servers) server.close();
  });

  it('lists the GPG keys of a namespace', async () => {
    const keys = await listGpgKeys(client().client, emulator.organization);
    expect(keys.map((k) => k.attributes['key-id'])).toEqual([keyId('signer')]);
    expect(emulator.requestLog.records[0]).toMatchObject({ authorization: true, contentType: null });
  });

  it('follows pagination to the last page', async () => {
    const { client: c } = client();
    const base = `/api/v2/organizations/${emulator.organization}/registry-providers`;
    for (let i = 0; i < 130; i++) {
      await c.request('POST', base, {
        json: {
          data: {
            type: 'registry-providers',
            attributes: { name: `p${i}`, namespace: emulator.organization, 'registry-name': 'private' },
          },
        },
      });
    }
    expect(emulator.requestLog.records[0]).toMatchObject({ contentType: 'application/vnd.api+json' });
    emulator.requestLog.clear();
    const all = await c.list(base, providerResource());
    expect(all).toHaveLength(130);
    expect(new Set(all.map((p) => p.attributes.name)).size).toBe(130);
    expect(emulator.requestLog.records.map((r) => r.query)).toEqual([
      'page%5Bnumber%5D=1&page%5Bsize%5D=100',
      'page%5Bnumber%5D=2&page%5Bsize%5D=100',
    ]);
  });

  it('sends the token only to the API origin, redirects included', async () => {
    const other = await recorder();
    const api = await recorder(other.url);
    servers.push(other.server, api.server);
    const c = createRegistryClient({
      apiHost: parseHostname(api.url, 'test'),
      token: 'secret-token',
      output: captureOutput().output,
    });
    await c.request('GET', `${other.url}/direct`);
    expect(other.seen[0]?.authorization).toBeUndefined();
    await c.request('GET', '/api/v2/redirected');
    expect(api.seen[0]?.authorization).toBe('Bearer secret-token');
    expect(api.seen[0]?.accept).toBe('application/vnd.api+json');
    expect(other.seen).toHaveLength(2);
    expect(other.seen[1]?.authorization).toBeUndefined();
  });

  it('retries 5xx on reads, and traces each attempt without the token', async () => {
    emulator.faults.add({ method: 'GET', path: '/api/registry/private/v2/gpg-keys', status: 503, times: 2 });
    const { client: c, stderr } = client();
    const keys = await listGpgKeys(c, emulator.organization);
    expect(keys).toHaveLength(1);
    expect(emulator.requestLog.records.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(stderr()).toMatch(/↻ retry 1 of GET .*\(status 503\)/);
    expect(stderr()).toMatch(/↻ retry 2 of GET/);
    expect(stderr()).not.toContain(emulator.ownerToken);
  });

  it('honours Retry-After on 429', async () => {
    emulator.faults.add({
      method: 'GET',
      path: '/api/registry/private/v2/gpg-keys',
      status: 429,
      retryAfter: 1,
      times: 1,
    });
    const started = Date.now();
    await listGpgKeys(client().client, emulator.organization);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(emulator.requestLog.records.map((r) => r.status)).toEqual([429, 200]);
  });

  it('does not retry a create (POST) on 5xx: reconciling is the caller’s job', async () => {
    emulator.faults.add({ method: 'POST', path: '/api/registry/private/v2/gpg-keys', status: 503, times: 1 });
    const error = await errorOf(
      client().client.request('POST', '/api/registry/private/v2/gpg-keys', { json: {} }),
    );
    expect(error.status).toBe(503);
    expect(emulator.requestLog.records).toHaveLength(1);
  });

  it('gives up after the retry limit with the last status', async () => {
    emulator.faults.add({ method: 'GET', path: '/api/registry/private/v2/gpg-keys', status: 502 });
    const error = await errorOf(
      listGpgKeys(client({ retry: { limit: 2, baseDelayMs: 1 } }).client, emulator.organization),
    );
    expect(error.status).toBe(502);
    expect(error.hint).toContain('try again later');
    expect(emulator.requestLog.records).toHaveLength(3);
  });

  it('turns 401 into an ApiError whose hint names terraform login and TF_TOKEN_<host>', async () => {
    const error = await errorOf(
      client({ token: 'wrong' }).client.request('GET', '/api/registry/private/v2/gpg-keys'),
    );
    expect(error.status).toBe(401);
    expect(error.hint).toContain(`terraform login ${new URL(emulator.url).host}`);
    expect(error.hint).toContain('TF_TOKEN_127_0_0_1');
  });

  it('turns 404 into an ApiError whose hint names the permissions', async () => {
    const error = await errorOf(
      client().client.request('GET', '/api/v2/organizations/nope/registry-providers'),
    );
    expect(error.status).toBe(404);
    expect(error.hint).toContain('owners team');
    expect(error.hint).toContain('Manage Private Registry');
  });

  it('carries the server detail of a 422', async () => {
    const body = {
      data: { type: 'gpg-keys', attributes: { namespace: emulator.organization, 'ascii-armor': 'nope' } },
    };
    const error = await errorOf(
      client().client.request('POST', '/api/registry/private/v2/gpg-keys', { json: body }),
    );
    expect(error.status).toBe(422);
    expect(error.serverDetail).toContain('ASCII armor is invalid');
    expect(error.serverDetail).toContain('/data/attributes/ascii-armor');
    expect(error.hint).toContain('ASCII armor is invalid');
  });

  it('reports an unreachable host as an ApiError with status 0', async () => {
    const closed = await recorder();
    closed.server.close();
    const c = createRegistryClient({
      apiHost: parseHostname(closed.url, 'test'),
      token: 't0ken',
      output: captureOutput().output,
      retry: { limit: 1, baseDelayMs: 1 },
    });
    const error = await errorOf(c.request('GET', '/api/v2/ping'));
    expect(error.status).toBe(0);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.hint).toContain('--hostname');
  });

  /** A server of another origin whose every answer is `answer`'s; a client of it with a 1.5 s timeout. */
  async function answering(answer: (res: ServerResponse) => void) {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      answer(res);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const c = createRegistryClient({
      apiHost: parseHostname(url, 'test'),
      token: 't0ken',
      output: captureOutput().output,
      retry: { limit: 1, baseDelayMs: 1 },
      timeout: { response: 1500 },
    });
    return { client: c, requests: () => requests, server };
  }

  it('an answer that stalls after its headers and a first byte ends at the timeout, retried, exit 4', async () => {
    const s = await answering((res) => {
      res.writeHead(200, { 'content-type': JSONAPI_TYPE, 'content-length': '100' });
      res.write('{"data":');
    });
    const error = await errorOf(s.client.get('/api/v2/x', z.unknown()));
    s.server.closeAllConnections();
    expect(error.status).toBe(0);
    expect(error.message).toMatch(/^GET \/api\/v2\/x on http:\/\/127\.0\.0\.1:\d+ failed: ETIMEDOUT/);
    expect(s.requests()).toBe(2);
  }, 30_000);

  it('an answer that drips a byte every 100 ms ends at the timeout, whole or not', async () => {
    const s = await answering((res) => {
      res.writeHead(200, { 'content-type': JSONAPI_TYPE });
      const timer = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(timer));
    });
    const error = await errorOf(s.client.get('/api/v2/x', z.unknown()));
    s.server.closeAllConnections();
    expect(error.status).toBe(0);
    expect(error.message).toMatch(/failed: ETIMEDOUT: Timeout awaiting 'request' for 1500ms/);
    expect(s.requests()).toBe(2);
  }, 30_000);

  it('an answer without end is given up at 16 MiB: exit 4, not retried', async () => {
    let sent = 0;
    const s = await answering((res) => {
      res.writeHead(200, { 'content-type': JSONAPI_TYPE });
      const chunk = Buffer.alloc(64 * 1024, ' ');
      const more = (): void => {
        for (let room = true; room && !res.destroyed; sent += chunk.length) room = res.write(chunk);
      };
      res.on('drain', more);
      more();
    });
    const error = await errorOf(s.client.get('/api/v2/x', z.unknown()));
    s.server.closeAllConnections();
    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error.message).toMatch(
      /^GET \/api\/v2\/x on http:\/\/127\.0\.0\.1:\d+: the answer is larger than 16 MiB/,
    );
    expect(s.requests()).toBe(1);
    // Stopped near the cap, not read to the end: what was sent is the cap and what the sockets buffer.
    expect(sent).toBeLessThan(MAX_ANSWER_BYTES + 8 * 1024 * 1024);
  }, 30_000);

  it('a refusal still carries the server’s words, read from the streamed answer', async () => {
    const s = await answering((res) => {
      res.writeHead(422, { 'content-type': JSONAPI_TYPE });
      res.end(JSON.stringify({ errors: [{ status: '422', title: 'invalid', detail: 'version is taken' }] }));
    });
    const error = await errorOf(s.client.get('/api/v2/x', z.unknown()));
    expect(error.status).toBe(422);
    expect(error.serverDetail).toContain('version is taken');
  });
});
