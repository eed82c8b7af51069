/**
 * The emulator's request pipeline (src/emulator/exchange.ts): its response class tells the request log when an
 * answer ends, before the client can have it, and lets a fault replace an answer, with no server patching a
 * response's methods at run time; the steps run in order until one answers, and what a step throws goes to the
 * failure answer. Over loopback, on a real server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ExchangeResponse,
  openExchange,
  runSteps,
  type Exchange,
  type Step,
} from '../../src/emulator/exchange.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { listen, type Listening } from '../../src/net/listen.js';

let listening: Listening | undefined;
afterEach(async () => {
  await listening?.close(0);
  listening = undefined;
});

/** A loopback server whose responses are `ExchangeResponse`s, handled by `handler`. */
async function serve(handler: (req: IncomingMessage, res: ExchangeResponse) => void): Promise<string> {
  const server = createServer<typeof IncomingMessage, typeof ExchangeResponse>(
    { ServerResponse: ExchangeResponse },
    handler,
  );
  listening = await listen(server, { host: '127.0.0.1', port: 0, name: 'the test server' });
  return listening.url;
}

/** A GET's status, headers and body. */
function get(url: string): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('ExchangeResponse', () => {
  it('calls beforeEnd once, before the answer leaves: the client never has an answer the listener missed', async () => {
    const told: number[] = [];
    const url = await serve((_req, res) => {
      res.beforeEnd(() => told.push(res.statusCode));
      res.writeHead(201, { 'content-type': 'text/plain' });
      res.write('part, ');
      res.end('end');
      res.end();
    });
    const answer = await get(`${url}/`);
    expect(told).toEqual([201]);
    expect(answer).toMatchObject({ status: 201, body: 'part, end' });
  });

  it('replaceAnswer drops the handler’s status, headers and body (calling its write callbacks) for the replacement', async () => {
    const callbacks: string[] = [];
    const told: number[] = [];
    const url = await serve((_req, res) => {
      res.beforeEnd(() => told.push(res.statusCode));
      res.replaceAnswer(() => {
        for (const name of res.getHeaderNames()) res.removeHeader(name);
        res.writeHead(503, { 'x-replaced': 'yes' }).end('replaced');
      });
      res.setHeader('x-handler', 'set');
      res.writeHead(201, { 'x-handler-head': 'written' });
      res.write('dropped', () => callbacks.push('write'));
      res.write('dropped too', 'utf8', () => callbacks.push('write with encoding'));
      res.end('dropped at the end');
    });
    const answer = await get(`${url}/`);
    expect(answer.status).toBe(503);
    expect(answer.body).toBe('replaced');
    expect(answer.headers['x-replaced']).toBe('yes');
    expect(answer.headers['x-handler']).toBeUndefined();
    expect(answer.headers['x-handler-head']).toBeUndefined();
    expect(callbacks).toEqual(['write', 'write with encoding']);
    // The request log is told the replacement's status.
    expect(told).toEqual([503]);
  });
});

describe('runSteps', () => {
  it('runs the steps in order until one answers; a throw goes to the failure answer, later steps skipped', async () => {
    const ran: string[] = [];
    const failures: unknown[] = [];
    const step =
      (name: string, result: 'next' | 'answered' | Error): Step =>
      (exchange: Exchange) => {
        ran.push(`${name} ${exchange.ctx.method}`);
        if (result instanceof Error) throw result;
        if (result === 'answered') exchange.res.end(name);
        return result;
      };
    const boom = new Error('boom');
    const url = await serve((req, res) => {
      const steps =
        req.url === '/answered'
          ? [step('a', 'next'), step('b', 'answered'), step('c', 'answered')]
          : [step('a', 'next'), step('b', boom), step('c', 'answered')];
      void runSteps(openExchange(req, res, 0), steps, (exchange, error) => {
        failures.push(error);
        exchange.res.writeHead(500).end('failed');
      });
    });
    expect(await get(`${url}/answered`)).toMatchObject({ status: 200, body: 'b' });
    expect(ran).toEqual(['a GET', 'b GET']);
    ran.length = 0;
    expect(await get(`${url}/throws`)).toMatchObject({ status: 500, body: 'failed' });
    expect(ran).toEqual(['a GET', 'b GET']);
    expect(failures).toEqual([boom]);
  });
});

describe('no server patches a response at run time', () => {
  it('src/ assigns no end, write or writeHead of a response (the pipeline records through ExchangeResponse)', () => {
    const patched = sources(join(REPO_ROOT, 'src')).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /\.(end|write|writeHead)\s*=[^=]/.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(patched).toEqual([]);
  });
});
