/** Reading a request body into memory, up to a limit, without resetting a client that sends too much. */
import type { IncomingMessage } from 'node:http';

/** Past this many times the limit the connection is cut instead of drained. */
const DRAIN_FACTOR = 16;

/** The raw body, or `too-large` once it passes `limit` bytes (the rest is read and discarded). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit * DRAIN_FACTOR) {
      req.destroy();
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (size > limit * DRAIN_FACTOR) {
        req.destroy();
        resolve('too-large');
        return;
      }
      // Reading on (and dropping) lets the client finish sending and read the 413 instead of a reset.
      if (!tooLarge) chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too-large' : Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}
