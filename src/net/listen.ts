/**
 * Listening and closing, the same for the three servers the product runs (the emulator of `provider emulate`,
 * the integrator of `runtask serve`, the platform of `runtask send`). `listen` binds a host and port and says
 * which URL it got, or why it could not, as a usage error (exit 2) naming the server. Its `close` stops accepting
 * connections, ends idle keep-alive connections at once, lets the requests in flight finish (each ends its
 * connection when it is answered) within a bound, and then cuts whatever is left.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../errors.js';

/** How long `close` waits for requests in flight by default, in milliseconds. */
export const CLOSE_GRACE_MS = 1000;

/** Where a server listens, and how errors name it. */
export interface ListenOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The server in error messages, e.g. `the emulator`. */
  name: string;
}

/** A listening server. */
export interface Listening {
  /** `http://host:port` of the address actually bound (an IPv6 address in brackets), without a trailing slash. */
  url: string;
  /** The port actually bound. */
  port: number;
  /**
   * Stops accepting connections, ends idle keep-alive connections, waits up to `graceMs` (default
   * `CLOSE_GRACE_MS`; 0 cuts at once) for the requests in flight, then destroys every connection left. Resolves
   * once every connection is closed; a second call returns the first call's promise.
   */
  close(graceMs?: number): Promise<void>;
}

/** Why a server could not listen, as the usage error the commands exit with (2). */
export function listenError(error: NodeJS.ErrnoException, options: ListenOptions): UsageError {
  const hints: Record<string, string> = {
    EADDRINUSE: 'Another process uses that port: pick another --port (0 picks a free one).',
    EACCES:
      'That port needs privileges this process does not have (ports below 1024 usually do): pick another --port.',
  };
  return new UsageError(
    `${options.name} cannot listen on ${options.host}:${options.port}: ${error.code ?? error.message}`,
    { hint: hints[error.code ?? ''] ?? 'Check --host and --port.', cause: error },
  );
}

/** Makes `server` listen on `options.host` and `options.port`; resolves once it does, or rejects with `listenError`. */
export async function listen<Res extends typeof ServerResponse<IncomingMessage>>(
  server: Server<typeof IncomingMessage, Res>,
  options: ListenOptions,
): Promise<Listening> {
  const close = closer(server);
  await new Promise<void>((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException): void => reject(listenError(error, options));
    server.once('error', fail);
    server.listen(options.port, options.host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, port: address.port, close };
}

/** The `close` of a server: follows the requests in flight from now on, so that closing can wait for them. */
function closer<Res extends typeof ServerResponse<IncomingMessage>>(
  server: Server<typeof IncomingMessage, Res>,
): (graceMs?: number) => Promise<void> {
  const inFlight = new Set<ServerResponse>();
  let closing: Promise<void> | undefined;
  // Runs before the server's own handler, so that a request arriving while closing is answered with `Connection:
  // close` however soon its handler answers.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    inFlight.add(res);
    if (closing) lastOnItsConnection(res);
    res.once('close', () => {
      inFlight.delete(res);
      // Its connection is idle now: end it (and any other idle one) instead of keeping it alive.
      if (closing) server.closeIdleConnections();
    });
  });
  return (graceMs = CLOSE_GRACE_MS) => {
    closing ??= new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      for (const res of inFlight) lastOnItsConnection(res);
      server.closeIdleConnections();
      if (graceMs <= 0) server.closeAllConnections();
      else timer = setTimeout(() => server.closeAllConnections(), graceMs);
    });
    return closing;
  };
}

/** Asks for the connection to be closed after this answer, when the answer has not begun yet. */
function lastOnItsConnection(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
}
