/**
 * The configuration version download of `runtask serve --with-configuration`: the API URL with the access token,
 * its 302 followed without it, and the archive bounded in size (a larger one is refused, not retried).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchConfigurationVersion } from '../../../src/runtask/callback/configurationVersion.js';
import { PlatformOrigins } from '../../../src/runtask/callback/origins.js';
import { tempDir } from '../../helpers/tmp.js';

const TOKEN = 'abcdefghijklmn.atlasv1.the-run-token';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A platform answering the download with a 302 to a blob of `size` bytes; the headers of each request. */
async function platform(size: number): Promise<{ url: string; seen: Map<string, IncomingHttpHeaders> }> {
  const seen = new Map<string, IncomingHttpHeaders>();
  server = createServer((req, res) => {
    seen.set(req.url ?? '', req.headers);
    if (req.url === '/api/v2/configuration-versions/cv-1/download') {
      res.writeHead(302, { location: '/_archivist/v1/object/secret' }).end();
    } else {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(size, 7));
    }
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('fetching the configuration version', () => {
  it('sends the token to the API URL only, and follows the 302 to the archive', async () => {
    const { url, seen } = await platform(1000);
    const file = join(tempDir('cv'), 'cv.tar.gz');
    const bytes = await fetchConfigurationVersion({
      url: `${url}/api/v2/configuration-versions/cv-1/download`,
      token: TOKEN,
      allowed: new PlatformOrigins([url]),
      file,
      deadlineMs: 5_000,
    });
    expect(bytes).toBe(1000);
    expect(readFileSync(file).length).toBe(1000);
    expect(seen.get('/api/v2/configuration-versions/cv-1/download')?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen.get('/_archivist/v1/object/secret')?.authorization).toBeUndefined();
  });

  it('refuses an archive over the bound, without retrying', async () => {
    const { url, seen } = await platform(64 * 1024);
    const file = join(tempDir('cv'), 'cv.tar.gz');
    const fetching = fetchConfigurationVersion({
      url: `${url}/api/v2/configuration-versions/cv-1/download`,
      token: TOKEN,
      allowed: new PlatformOrigins([url]),
      file,
      deadlineMs: 5_000,
      maxBytes: 10_000,
    });
    await expect(fetching).rejects.toThrow(
      `the configuration version (${url}/api/v2/configuration-versions/cv-1/download) is larger than 10000 bytes`,
    );
    expect(seen.size).toBe(2);
    expect(existsSync(file) ? readFileSync(file).length : 0).toBeLessThanOrEqual(10_000);
  });

  it('refuses a URL that is not on an allowed platform host, sending nothing', async () => {
    const { url, seen } = await platform(10);
    const fetching = fetchConfigurationVersion({
      url: `${url}/api/v2/configuration-versions/cv-1/download`,
      token: TOKEN,
      allowed: new PlatformOrigins(['https://app.terraform.io']),
      file: join(tempDir('cv'), 'cv.tar.gz'),
      deadlineMs: 5_000,
    });
    await expect(fetching).rejects.toThrow('is not on an allowed platform host (https://app.terraform.io)');
    expect(seen.size).toBe(0);
  });

  it('gives up at the deadline with a download still dripping, cutting it off', async () => {
    // The link answers at once, then sends its 1000 bytes one every half second: 500 s to the end.
    let sent = 0;
    const cut = new Promise<number>((resolve) => {
      server = createServer((req, res) => {
        if (req.url === '/api/v2/configuration-versions/cv-1/download') {
          return void res.writeHead(302, { location: '/_archivist/v1/object/secret' }).end();
        }
        res.writeHead(200, { 'content-length': '1000' });
        res.flushHeaders();
        const drip = setInterval(() => {
          sent++;
          res.write('x');
        }, 500);
        res.on('close', () => {
          clearInterval(drip);
          resolve(sent);
        });
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
    const fetching = fetchConfigurationVersion({
      url: `${url}/api/v2/configuration-versions/cv-1/download`,
      token: TOKEN,
      allowed: new PlatformOrigins([url]),
      file: join(tempDir('cv'), 'cv.tar.gz'),
      deadlineMs: 2_000,
      retry: { baseDelayMs: 100, maxDelayMs: 100 },
    });
    await expect(fetching).rejects.toThrow(
      `could not fetch the configuration version (${url}/api/v2/configuration-versions/cv-1/download) in time`,
    );
    // The integrator hung up on the link: it did not wait for the last byte.
    expect(await cut).toBeLessThan(1000);
  }, 30_000);

  it("says a download it could not write by the error's code, not the integrator's path", async () => {
    const { url } = await platform(1000);
    const folder = tempDir('cv');
    const fetching = fetchConfigurationVersion({
      url: `${url}/api/v2/configuration-versions/cv-1/download`,
      token: TOKEN,
      allowed: new PlatformOrigins([url]),
      file: join(folder, 'gone', 'cv.tar.gz'),
      deadlineMs: 5_000,
    });
    const error = (await fetching.catch((e: unknown) => e)) as Error;
    expect(error.message).toBe(
      `could not fetch the configuration version (${url}/api/v2/configuration-versions/cv-1/download): ENOENT`,
    );
    expect(error.message).not.toContain(folder);
  });
});
