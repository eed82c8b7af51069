/**
 * `listenLocally` (src/emulator/http.ts), how both emulator servers listen: on 127.0.0.1 and a free port unless
 * told otherwise, keeping connections alive 5 s, and a busy port refused as a usage error naming the server.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { listenLocally } from '../../src/emulator/http.js';

describe('listenLocally', () => {
  it('listens on 127.0.0.1 and a free port by default, with a 5 s keep-alive', async () => {
    const server = createServer((_req, res) => res.end());
    const listening = await listenLocally(server, {}, 'the test server');
    try {
      const { address, port } = server.address() as AddressInfo;
      expect(address).toBe('127.0.0.1');
      expect(port).toBeGreaterThan(0);
      expect(listening.url).toBe(`http://127.0.0.1:${port}`);
      expect(server.keepAliveTimeout).toBe(5_000);
    } finally {
      await listening.close(0);
    }
  });

  it('takes the host and port it is given, and names the server when the port is taken', async () => {
    const first = createServer();
    const listening = await listenLocally(first, { host: '127.0.0.1', port: 0 }, 'the first');
    try {
      const error: unknown = await listenLocally(
        createServer(),
        { port: listening.port },
        'the second',
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).message).toBe(
        `the second cannot listen on 127.0.0.1:${listening.port}: EADDRINUSE`,
      );
    } finally {
      await listening.close(0);
    }
  });
});
