/**
 * The integrator's own HTTP client (src/runtask/callback/http.ts): a download that follows redirects has one
 * deadline for all its hops, not a fresh one at each.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NetworkError, sendToFile } from '../../../src/runtask/callback/http.js';
import { tempDir } from '../../helpers/tmp.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe('sendToFile', () => {
  it('holds every redirect to the one deadline it was given', async () => {
    // Five hops, each answering its redirect after 400 ms, then the file: each hop well within 1 s, all of them
    // together twice that.
    const asked: string[] = [];
    server = createServer((req, res) => {
      asked.push(req.url ?? '');
      const hop = Number((req.url ?? '').split('/').pop());
      if (hop === 5) return void res.writeHead(200).end('the file');
      const timer = setTimeout(() => res.writeHead(302, { location: `/hop/${hop + 1}` }).end(), 400);
      res.on('close', () => clearTimeout(timer));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hop/0`;
    const file = join(tempDir('hops'), 'file');
    const error = await sendToFile(url, file, { headers: {}, timeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('ETIMEDOUT');
    expect(asked).not.toContain('/hop/5');
    expect(existsSync(file)).toBe(false);
    server.closeAllConnections();
  });
});
