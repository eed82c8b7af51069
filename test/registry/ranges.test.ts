/**
 * The downloader's Range requests (src/registry/ranges.ts), against loopback servers that answer them well and
 * badly: an answer is taken only when it is exactly the range asked for (RFC 9110 §14: its Content-Range, the unit
 * in any case, and a body that long; a suffix longer than the file is the whole file). A host that ignores ranges
 * (200) or refuses a suffix range (416) gives none; another range, a Content-Range missing or inconsistent, or a
 * body longer or shorter than it says is a DownloadError naming the file, never its link. Bodies are asked for
 * unencoded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDownloader, DownloadError } from '../../src/registry/downloads.js';
import { Output } from '../../src/ui/output.js';
import { Capture } from '../helpers/cli.js';

const FILE = Buffer.from('0123456789abcdefghij');

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server answering every GET with `answer`; its URL, and the headers of the requests it got. */
async function serve(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: IncomingMessage['headers'][] = [];
  server = createServer((req, res) => {
    seen.push(req.headers);
    answer(req, res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/z.zip?secret=s3cr3t`, seen };
}

function downloader() {
  const output = new Output({ stdout: new Capture(), stderr: new Capture(), env: {} });
  return createDownloader({ output, baseDelayMs: 0, timeoutMs: 2000 });
}

/** Answers `206` with these headers and body, whatever was asked. */
function partial(headers: Record<string, string>, body: Buffer) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(206, { ...headers, 'content-length': body.length });
    res.end(body);
  };
}

describe('the downloader’s Range requests', () => {
  it('takes the range asked for, a suffix longer than the file as the whole file, asking for identity', async () => {
    const { url, seen } = await serve((req, res) => {
      const [, a, b] = /bytes=(\d*)-(\d*)/.exec(req.headers.range ?? '')!;
      const [start, end] =
        a === '' ? [Math.max(0, FILE.length - Number(b)), FILE.length - 1] : [Number(a), Number(b)];
      res.writeHead(206, { 'content-range': `Bytes ${start}-${end}/${FILE.length}` });
      res.end(FILE.subarray(start, end + 1));
    });
    const d = downloader();
    expect(await d.range(url, 'z.zip', 5, 9)).toEqual({ data: FILE.subarray(5, 10), start: 5, total: 20 });
    expect(await d.range(url, 'z.zip', -4)).toEqual({ data: FILE.subarray(16), start: 16, total: 20 });
    expect(await d.range(url, 'z.zip', -100)).toEqual({ data: FILE, start: 0, total: 20 });
    expect(seen.map((h) => [h.range, h['accept-encoding']])).toEqual([
      ['bytes=5-9', 'identity'],
      ['bytes=-4', 'identity'],
      ['bytes=-100', 'identity'],
    ]);
  });

  it('gives none when the host answers 200 (ranges ignored) or 416 to a suffix', async () => {
    const whole = await serve((_req, res) => res.end(FILE));
    expect(await downloader().range(whole.url, 'z.zip', -4)).toBeUndefined();
    server!.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    const refused = await serve((_req, res) => res.writeHead(416, { 'content-range': 'bytes */20' }).end());
    expect(await downloader().range(refused.url, 'z.zip', -4)).toBeUndefined();
  });

  it.each([
    ['whole (a small file, all of it sent at once)', (res: ServerResponse) => res.end(FILE)],
    [
      'still coming (a large file)',
      (res: ServerResponse) => {
        res.writeHead(200, { 'content-length': String(64 << 20) });
        res.write(Buffer.alloc(64 << 10));
      },
    ],
  ])('closes the connection of a 200 it leaves unread at once: the answer %s', async (_, answer) => {
    // Kept alive for a minute by the server: only the client closing the connection ends it within the test.
    let closed!: () => void;
    const gone = new Promise<void>((resolve) => (closed = resolve));
    const { url } = await serve((req, res) => {
      req.socket.once('close', closed);
      answer(res);
    });
    server!.keepAliveTimeout = 60_000;
    expect(await downloader().range(url, 'z.zip', -4)).toBeUndefined();
    await gone;
  });

  it.each([
    [
      'another range',
      partial({ 'content-range': 'bytes 0-4/20' }, FILE.subarray(0, 5)),
      /another range \(bytes 0-4\/20\)/,
    ],
    ['no Content-Range', partial({}, FILE.subarray(5, 10)), /another range \(no Content-Range\)/],
    [
      'an unknown total',
      partial({ 'content-range': 'bytes 5-9/*' }, FILE.subarray(5, 10)),
      /Content-Range bytes 5-9\/\*/,
    ],
    [
      'a longer body',
      partial({ 'content-range': 'bytes 5-9/20' }, FILE.subarray(5, 15)),
      /another range \(a longer body\)/,
    ],
    [
      'a range past its total',
      partial({ 'content-range': 'bytes 5-9/8' }, FILE.subarray(5, 10)),
      /bytes 5-9\/8/,
    ],
  ])('refuses %s, naming the file and not its link', async (_what, answer, message) => {
    const { url } = await serve(answer);
    const error = (await downloader()
      .range(url, 'z.zip', 5, 9)
      .catch((e: unknown) => e)) as DownloadError;
    expect(error).toBeInstanceOf(DownloadError);
    expect(error.message).toMatch(/^z\.zip: the host answered a range request with another range/);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('s3cr3t');
  });
});
