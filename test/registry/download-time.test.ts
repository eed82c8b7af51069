/**
 * How long a download may take (src/registry/downloads.ts), against a loopback server that drips: a small file
 * (SHA256SUMS, a signature) must be whole within the timeout, so a byte now and then, each well within the idle
 * timeout, ends it; an archive has no total time, but one that brings fewer than 1 KiB in a window of the
 * timeout is given up, and one that keeps moving (2 KiB at a time, for longer than the timeout) completes. Each
 * given-up attempt is retried, as a timeout is, then named.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDownloader, DownloadError, MIN_BYTES_PER_WINDOW } from '../../src/registry/downloads.js';
import { Output } from '../../src/ui/output.js';
import { Capture } from '../helpers/cli.js';
import { tempRoot } from '../helpers/tmp.js';

const TIMEOUT_MS = 1500;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server answering every GET with `send`; returns its base URL and the number of requests it got. */
async function serve(send: (res: ServerResponse) => void): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = createServer((_req, res) => {
    requests++;
    send(res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
  };
}

/** Headers, then `chunk` every `everyMs`, `count` times (without end when undefined). */
function drip(chunk: Buffer, everyMs: number, count?: number) {
  return (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      if (count !== undefined && sent === count) {
        clearInterval(timer);
        return void res.end();
      }
      sent++;
      res.write(chunk);
    }, everyMs);
    res.on('close', () => clearInterval(timer));
  };
}

function downloader() {
  const output = new Output({ stdout: new Capture(), stderr: new Capture(), env: {} });
  return createDownloader({ output, baseDelayMs: 0, timeoutMs: TIMEOUT_MS });
}

describe('a download that drips', () => {
  it('a small file sent a byte every 100 ms is given up at the timeout, each of its 4 attempts', async () => {
    const s = await serve(drip(Buffer.from('a'), 100));
    const error = await downloader()
      .bytes(`${s.url}/SHA256SUMS`, 'the SHA256SUMS', 1024 * 1024)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as DownloadError).reason).toMatch(/ETIMEDOUT.*'request'/);
    expect(s.requests()).toBe(4);
  }, 30_000);

  it.each(['toFile', 'digest'] as const)(
    'an archive sent a byte every 100 ms (%s) is given up as too slow, each of its 4 attempts',
    async (how) => {
      const s = await serve(drip(Buffer.from('a'), 100));
      const d = downloader();
      const link = `${s.url}/terraform-provider-example_1.0.0_linux_amd64.zip`;
      const file = path.join(tempRoot(), 'zip');
      const read = how === 'toFile' ? d.toFile(link, 'the zip', file) : d.digest(link, 'the zip');
      const error = await read.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DownloadError);
      expect((error as DownloadError).reason).toMatch(
        new RegExp(`^too slow: \\d+ bytes in 1\\.5 s, under ${MIN_BYTES_PER_WINDOW} bytes$`),
      );
      expect(s.requests()).toBe(4);
    },
    30_000,
  );

  it('an archive that keeps moving, 2 KiB at a time for longer than the timeout, completes', async () => {
    const chunk = Buffer.alloc(2048, 'z');
    const s = await serve(drip(chunk, 250, 10));
    const file = path.join(tempRoot(), 'zip');
    const digest = await downloader().toFile(`${s.url}/big.zip`, 'the zip', file);
    const whole = Buffer.concat(Array.from({ length: 10 }, () => chunk));
    expect(digest).toEqual({ sha256: createHash('sha256').update(whole).digest('hex'), bytes: whole.length });
    expect(fs.readFileSync(file).equals(whole)).toBe(true);
    expect(s.requests()).toBe(1);
  }, 30_000);
});
