/**
 * Answers read whole into memory (a registry's JSON document, a SHA256SUMS, its signature) under a cap counted as
 * the bytes stream in: past the cap the request is destroyed and BodyTooLargeError thrown, so an answer of any
 * size (1.5 GB, or one without end) costs at most its cap. With them, got's timeouts for such a read (no answer,
 * no byte, or not whole within the time given), and the words for a read that timed out.
 */
import { TimeoutError } from 'got';

/** An answer larger than its cap; `received` is how much had come when the read stopped. */
export class BodyTooLargeError extends Error {
  constructor(
    readonly limit: number,
    readonly received: number,
  ) {
    super(`the answer is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** Reads a stream of chunks whole, giving up once it holds more than `limit` bytes. */
export async function readCapped(
  stream: AsyncIterable<Buffer> & { destroy(): unknown },
  limit: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of stream) {
      received += chunk.length;
      if (received > limit) throw new BodyTooLargeError(limit, received);
      chunks.push(chunk);
    }
  } finally {
    // Destroyed whatever happened: its request ends, and an abort signal that fires later (the caller dropping
    // reads it no longer needs) finds nothing left to fail, rather than an error no one listens to.
    stream.destroy();
  }
  return Buffer.concat(chunks, received);
}

/**
 * got's timeouts for a document read whole, `ms` each (PROVIDER_HTTP_TIMEOUT, default 60 s): the answer must
 * start within it, no gap between two of its bytes may last longer, and the whole document must have come
 * within it. Connecting has 10 s, as every client of the product.
 */
export function documentTimeouts(ms: number): {
  connect: number;
  response: number;
  socket: number;
  request: number;
} {
  return { connect: 10_000, response: ms, socket: ms, request: ms };
}

/** A timed-out read in words (`ETIMEDOUT: Timeout awaiting 'socket' for 60000ms`); undefined for any other error. */
export function timeoutReason(error: unknown): string | undefined {
  return error instanceof TimeoutError ? `${error.code}: ${error.message}` : undefined;
}
