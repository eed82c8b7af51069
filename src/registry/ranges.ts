/**
 * Range requests (RFC 9110 §14): some bytes of a file and its whole size, or nothing when the host ignores the
 * Range header and answers 200 with the whole file (its body is then not read), or refuses a suffix range (416).
 * Used to read a zip's central directory and local headers where it lies (src/consumer/rangedZip.ts). An answer
 * is taken only when it is exactly the range asked for: its Content-Range names it, its body is that long. Bodies
 * are asked for unencoded (`Accept-Encoding: identity`), so that offsets are the file's.
 */
import type { IncomingMessage } from 'node:http';
import { HTTPError, type Got } from 'got';
import { documentTimeouts } from '../net/body.js';
import { BodyTooLargeError, readCapped } from '../net/body.js';
import type { Output } from '../ui/output.js';
import { DownloadError } from './downloadError.js';

/** Bytes a Range request gave, and the size of the whole file (its Content-Range). */
export interface RangeBytes {
  data: Buffer;
  /** Where they start in the file. */
  start: number;
  total: number;
}

/** What one Range request asks: `[start, end]`, or with `start` negative the last `-start` bytes. */
interface RangeAsked {
  link: string;
  what: string;
  start: number;
  end?: number | undefined;
  /** The idle timeout; a range is small, so it must also be whole within it (as a small file). */
  idle: number;
}

/** The most one Range request may ask for: a zip's central directory, or one entry's local header. */
export const RANGE_LIMIT = 4 * 1024 * 1024;

/** Unencoded bytes: a range of a compressed answer would not be the file's. */
export const IDENTITY = { headers: { 'accept-encoding': 'identity' }, decompress: false } as const;

/** One Range request. */
export async function rangeOf(
  plain: Got,
  output: Output,
  asked: RangeAsked,
): Promise<RangeBytes | undefined> {
  const { link, what, start, end } = asked;
  const length = start < 0 ? -start : (end ?? Number.POSITIVE_INFINITY) - start + 1;
  if (!(length > 0 && length <= RANGE_LIMIT)) throw new Error(`a range of ${length} bytes (internal error)`);
  const bytes = start < 0 ? `-${-start}` : `${start}-${end}`;
  output.debug(`→ GET ${link} (${what}, bytes ${bytes}, no token)`);
  let answer: IncomingMessage | undefined;
  const stream = plain.stream(link, {
    headers: { ...IDENTITY.headers, range: `bytes=${bytes}` },
    decompress: false,
    timeout: documentTimeouts(asked.idle),
  });
  try {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      stream.once('response', (response: IncomingMessage) => resolve((answer = response)));
      stream.once('error', reject);
    }).catch((error: unknown) => {
      // A host that refuses suffix ranges (416 for a file that is not empty) is one without ranges to use.
      if (error instanceof HTTPError && error.response.statusCode === 416 && start < 0) return undefined;
      throw error;
    });
    if (response?.statusCode !== 206) return undefined;
    const [first, last, total] = contentRange(response, what);
    // A suffix longer than the file is the whole file (RFC 9110 §14.1.3).
    const expected = start < 0 ? [Math.max(0, total + start), total - 1] : [start, Math.min(end!, total - 1)];
    if (first !== expected[0] || last !== expected[1])
      throw badRange(what, `bytes ${first}-${last}/${total}`);
    const data = await readCapped(stream, last - first + 1).catch((error: unknown) => {
      throw error instanceof BodyTooLargeError ? badRange(what, 'a longer body') : error;
    });
    if (data.length !== last - first + 1) throw badRange(what, `${data.length} bytes`);
    return { data, start: first, total };
  } finally {
    // The answer left unread (a 200 with the whole file) closes its connection now, not when the host times it
    // out: destroying got's stream alone leaves the socket open, and the process waiting for it.
    answer?.destroy();
    stream.destroy();
  }
}

/** The Content-Range of a 206: `bytes first-last/total`, the unit in any case (RFC 9110 §14.4). */
function contentRange(response: IncomingMessage, what: string): [number, number, number] {
  const header = String(response.headers['content-range'] ?? '');
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/i.exec(header.trim());
  if (range === null) throw badRange(what, header === '' ? 'no Content-Range' : `Content-Range ${header}`);
  const [first, last, total] = range.slice(1).map(Number) as [number, number, number];
  if (first > last || last >= total || !Number.isSafeInteger(total)) throw badRange(what, header);
  return [first, last, total];
}

/** A 206 that is not the range asked for: the host's ranges cannot be relied on. */
function badRange(what: string, found: string): DownloadError {
  return new DownloadError(
    `${what}: the host answered a range request with another range (${found})`,
    undefined,
    'bad range',
  );
}
