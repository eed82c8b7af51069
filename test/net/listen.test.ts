/**
 * `src/net/listen.ts`, the one listen/close of the three servers (the emulator, the integrator, the platform of
 * `runtask send`), over loopback: a port in use is a usage error (exit 2) naming the server, from each command
 * alike; the URL is the address bound; closing ends idle keep-alive connections at once, lets a request in flight
 * finish (and refuses new connections meanwhile), cuts it at the bound, and may be called twice.
 */
import {
  createServer,
  request,
  Agent,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode, UsageError, exitCodeFor } from '../../src/errors.js';
import { startEmulator } from '../../src/emulator/server.js';
import { listen, listenError, type Listening } from '../../src/net/listen.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

/** Longer than any test may take: a close that waits this long has not ended what it should have. */
const FOREVER = 10 * 60_000;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A plain server on a free loopback port (not through `listen`), holding that port for the test. */
async function occupiedPort(): Promise<number> {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => busy.close(() => resolve())));
  return (busy.address() as AddressInfo).port;
}

/** A server through `listen`, keeping connections alive far longer than any test; closed after the test. */
async function started(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; listening: Listening }> {
  const server = createServer(handler);
  server.keepAliveTimeout = FOREVER;
  const listening = await listen(server, { host: '127.0.0.1', port: 0, name: 'the test server' });
  cleanups.push(() => listening.close(0));
  return { server, listening };
}

/** What a GET got: the status, the `Connection` header and the whole body, or the error that ended it. */
type Got = { status: number; connection: string | undefined; body: string } | { error: string };

function get(url: string, agent?: Agent): Promise<Got> {
  return new Promise((resolve) => {
    const req = request(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });
}

/** Whether a new TCP connection to `port` is accepted (`connected`) or refused (its error code). */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('listen', () => {
  it('a port in use: a usage error (exit 2) naming the server, the address and EADDRINUSE, with a hint', async () => {
    const port = await occupiedPort();
    const server = createServer();
    const error = await listen(server, { host: '127.0.0.1', port, name: 'the test server' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(
      `the test server cannot listen on 127.0.0.1:${port}: EADDRINUSE`,
    );
    expect((error as UsageError).hint).toMatch(/another process uses that port: pick another --port/i);
    expect(exitCodeFor(error)).toBe(ExitCode.usage);
    expect(server.listening).toBe(false);
  });

  it('EACCES (a port that needs privileges) and any other failure are usage errors too, with their own hints', () => {
    const options = { host: '127.0.0.1', port: 80, name: 'the emulator' };
    const denied = listenError(Object.assign(new Error('listen EACCES'), { code: 'EACCES' }), options);
    expect(denied).toBeInstanceOf(UsageError);
    expect(denied.message).toBe('the emulator cannot listen on 127.0.0.1:80: EACCES');
    expect(denied.hint).toMatch(/needs privileges.*pick another --port/);
    expect(exitCodeFor(denied)).toBe(ExitCode.usage);
    const other = listenError(
      Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }),
      options,
    );
    expect(other.message).toBe('the emulator cannot listen on 127.0.0.1:80: ENOTFOUND');
    expect(other.hint).toBe('Check --host and --port.');
  });

  it('the emulator on a port in use: the same usage error, naming the emulator (it was an internal error)', async () => {
    const port = await occupiedPort();
    const dataDir = tempDir();
    const error = await startEmulator({ port, dataDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`the emulator cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
  });

  it('`provider emulate` and `provider runtask serve` on a port in use exit 2 with that message', async () => {
    const port = await occupiedPort();
    const dir = tempDir();
    const emulate = await runCli(['emulate', '--port', String(port), '--data-dir', join(dir, 'data')]);
    expect(emulate.exitCode).toBe(2);
    expect(emulate.stderr).toContain(`the emulator cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
    expect(emulate.stderr).toContain('pick another --port');
    const serve = await runCli(
      ['runtask', 'serve', '--port', String(port), '--state-dir', join(dir, 'state'), '--exec', 'true'],
      { cwd: dir },
    );
    expect(serve.exitCode).toBe(2);
    expect(serve.stderr).toContain(`the integrator cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
    expect(serve.stderr).toContain('pick another --port');
  });

  it('the URL is the address actually bound, with the port picked for 0', async () => {
    const { server, listening } = await started((_req, res) => res.end('ok'));
    const { port } = server.address() as AddressInfo;
    expect(listening.port).toBe(port);
    expect(listening.url).toBe(`http://127.0.0.1:${port}`);
    expect(await get(`${listening.url}/`)).toMatchObject({ status: 200, body: 'ok' });
  });
});

describe('close', () => {
  it('with an idle keep-alive connection: ends it and returns without waiting for the bound', async () => {
    const { listening } = await started((_req, res) => res.end('ok'));
    const agent = new Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    expect(await get(`${listening.url}/`, agent)).toMatchObject({ status: 200, connection: 'keep-alive' });
    const idle = Object.values(agent.freeSockets).flat();
    expect(idle).toHaveLength(1);
    const ended = new Promise<void>((resolve) => idle[0]!.once('close', () => resolve()));
    // The bound is longer than the test's timeout: only ending the idle connection lets close return.
    await listening.close(FOREVER);
    await ended;
  });

  it('waits for a request in flight: new connections are refused, the answer arrives whole, then it returns', async () => {
    const arrived = deferred();
    const release = deferred();
    const { listening } = await started((_req, res) => {
      arrived.resolve();
      void release.promise.then(() => res.end('finished'));
    });
    const agent = new Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    const answer = get(`${listening.url}/slow`, agent);
    await arrived.promise;
    let closed = false;
    const closing = listening.close(FOREVER).then(() => (closed = true));
    expect(await tryConnect(listening.port)).toBe('ECONNREFUSED');
    expect(closed).toBe(false);
    release.resolve();
    // The answer is whole, and asks the client not to reuse the connection.
    expect(await answer).toEqual({ status: 200, connection: 'close', body: 'finished' });
    await closing;
    expect(closed).toBe(true);
  });

  it('an answer already begun when closing starts: it finishes, then its keep-alive connection is ended', async () => {
    const arrived = deferred();
    const release = deferred();
    const { listening } = await started((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('begun, ');
      arrived.resolve();
      void release.promise.then(() => res.end('finished'));
    });
    const agent = new Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    const answer = get(`${listening.url}/stream`, agent);
    await arrived.promise;
    const closing = listening.close(FOREVER);
    release.resolve();
    expect(await answer).toEqual({ status: 200, connection: 'keep-alive', body: 'begun, finished' });
    // The bound is longer than the test's timeout: only ending the connection once idle lets close return.
    await closing;
  });

  it('cuts a request still in flight at the bound', async () => {
    const arrived = deferred();
    const { listening } = await started(() => arrived.resolve());
    const answer = get(`${listening.url}/never`);
    await arrived.promise;
    await listening.close(20);
    expect(await answer).toEqual({ error: 'ECONNRESET' });
  });

  it('a bound of 0 cuts requests in flight at once (a hard stop)', async () => {
    const arrived = deferred();
    const { listening } = await started(() => arrived.resolve());
    const answer = get(`${listening.url}/never`);
    await arrived.promise;
    await listening.close(0);
    expect(await answer).toEqual({ error: 'ECONNRESET' });
  });

  it('the emulator lets a request in flight (a delayed answer) finish and logs it, instead of cutting it', async () => {
    const emulator = await startEmulator({ faults: [{ path: '/healthz', delayMs: 200 }] });
    cleanups.push(() => emulator.close());
    const answer = get(`${emulator.url}/healthz`);
    // The rule fired: the request is waiting out its delay.
    while (emulator.faults.fired[0] !== 1) await new Promise((resolve) => setImmediate(resolve));
    await emulator.close();
    expect(await answer).toEqual({ status: 200, connection: 'close', body: 'ok\n' });
    expect(emulator.requestLog.records).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/healthz',
        status: 200,
        fault: 'rule 1: delay after 200ms',
      }),
    ]);
  });

  it('twice is fine: the second call returns the first one’s promise, and a later call resolves too', async () => {
    const { listening } = await started((_req, res) => res.end('ok'));
    const first = listening.close();
    const second = listening.close();
    expect(second).toBe(first);
    await Promise.all([first, second]);
    await listening.close();
    expect(await tryConnect(listening.port)).toBe('ECONNREFUSED');
  });
});
