/**
 * Range requests (RFC 9110 §14): some bytes of a file and its whole size, or nothing when the host ignores the
 * Range header and answers 200 with the whole file (its body is then not read). Used to read a zip's central
 * directory and local headers where it lies (src/mirror/remoteZips.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Got } from 'got';
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

/** One Range request: `[start, end]`, or with `start` negative the last `-start` bytes. */
export function rangeOf(
  plain: Got,
  output: Output,
  { link, what, start, end }: { link: string; what: string; start: number; end?: number | undefined },
): Promise<RangeBytes | undefined> {
  const bytes = start < 0 ? `-${-start}` : `${start}-${end ?? ''}`;
  output.debug(`→ GET ${link} (${what}, bytes ${bytes}, no token)`);
  return readRange(plain.stream(link, { headers: { range: `bytes=${bytes}` } }), what, RANGE_LIMIT);
}

/** The most one Range request may bring: a zip's central directory, or one entry's local header. */
const RANGE_LIMIT = 4 * 1024 * 1024;

/** A Range request's answer: 206 with its Content-Range read, or undefined for a 200 (the body is not read). */
async function readRange(
  stream: ReturnType<Got['stream']>,
  what: string,
  maxBytes: number,
): Promise<RangeBytes | undefined> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    stream.once('response', resolve);
    stream.once('error', reject);
  });
  if (response.statusCode !== 206) {
    stream.destroy();
    return undefined;
  }
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(response.headers['content-range'] ?? ''));
  if (range === null) {
    stream.destroy();
    throw new DownloadError(`${what} answered 206 without a Content-Range`, undefined, 'no Content-Range');
  }
  const [start, last, total] = range.slice(1).map(Number) as [number, number, number];
  let data: Buffer;
  try {
    data = await readCapped(stream, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      throw new DownloadError(`${what} is larger than ${maxBytes} bytes`, undefined, 'too large');
    throw error;
  }
  if (data.length !== last - start + 1 || last >= total) {
    throw new DownloadError(
      `${what} answered a range other than its Content-Range says`,
      undefined,
      'bad range',
    );
  }
  return { data, start, total };
}
