/**
 * An upload whose 2xx answer is cut short (the host closes the connection inside its answer's body): a 2xx to a
 * PUT of this Content-Length means the host has every byte, so the upload is done, and the file is not sent
 * again (src/registry/uploads.ts). An answer that is not a 2xx and is cut short is still retried.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, VerificationError, exitCodeFor } from '../../src/errors.js';
import { FileChangedError, type VerifiedFileSource } from '../../src/verifiedFiles.js';
import { uploadFile } from '../../src/registry/uploads.js';
import { captureOutput } from '../release/helpers.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A host that reads each PUT whole, answers `status` with half of a 100-byte body, then cuts the connection. */
async function cuttingHost(status: number): Promise<{ url: string; received: number[] }> {
  const received: number[] = [];
  server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      received.push(bytes);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"status":"stored", "pad":"');
      setTimeout(() => req.socket.destroy(), 20);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/_archivist/v1/object/x`,
    received,
  };
}

const body = { data: new Uint8Array(4096).fill(7) };
const retry = { limit: 2, baseDelayMs: 1, maxDelayMs: 2 };

describe('an upload whose answer is cut short', () => {
  it('a 200 cut inside its body: done, the file sent once', async () => {
    const host = await cuttingHost(200);
    const { output } = captureOutput();
    await uploadFile({
      url: host.url,
      filename: 'terraform-provider-example_1.0.0_SHA256SUMS',
      body,
      output,
      retry,
    });
    expect(host.received).toEqual([4096]);
  });

  it('a 503 cut inside its body: retried, then named by the file', async () => {
    const host = await cuttingHost(503);
    const { output } = captureOutput();
    const error = await uploadFile({ url: host.url, filename: 'the-file', body, output, retry }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toMatch(/^Uploading the-file failed/);
    expect(host.received).toEqual([4096, 4096, 4096]);
  });
});

describe('a host that answers 200 before the body is whole', () => {
  it('does not make a file that changed while it streamed an upload: exit 3, sent once', async () => {
    let requests = 0;
    server = createServer((req, res) => {
      requests++;
      // The answer's head at once, its body later: the upload's body fails while got reads the answer.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":');
      setTimeout(() => res.end('"stored"}'), 500);
      req.resume();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/_archivist/v1/object/x`;
    // The first chunk matches; the second is found changed (as readVerified finds it) after the answer came.
    const source: VerifiedFileSource = {
      readVerified: () => ({
        sent: () => undefined,
        async *[Symbol.asyncIterator]() {
          yield Buffer.alloc(1024, 1);
          await new Promise((resolve) => setTimeout(resolve, 100));
          throw new FileChangedError('the-file changed since it was verified');
        },
      }),
    };
    const { output } = captureOutput();
    const error = await uploadFile({
      url,
      filename: 'the-file',
      body: { path: 'the-file', bytes: 2048, sha256: 'a'.repeat(64), source },
      output,
      retry,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VerificationError);
    expect(exitCodeFor(error)).toBe(3);
    expect(requests).toBe(1);
  });
});
