/**
 * A zip at a download link read where it lies (src/release/remoteZip.ts): its central directory from a Range
 * request for its tail, its local headers by small ranges (each piece kept, so the zip check and the entry plan
 * ask the host once), and its body streamed whole by whoever proves it. A host that ignores ranges (it answers
 * 200 with the whole file, whose body is then not read) gives none: the caller downloads the zip instead.
 * GitHub's release storage and releases.hashicorp.com answer ranges (`Accept-Ranges: bytes`), as object stores do.
 */
import { VerificationError } from '../errors.js';
import type { Downloader, RangeBytes } from '../registry/downloads.js';
import type { RemoteZip } from '../release/remoteZip.js';

/**
 * The first range asked for: a zip's end record (22 bytes and a comment of up to 64 KiB) and, for a provider's
 * few entries, its whole central directory with it. A larger directory is read by a second range.
 */
const TAIL_BYTES = 128 * 1024;
/** The least a later range asks for: a local header is some 100 bytes, but the next one may be close by. */
const BLOCK_BYTES = 64 * 1024;
/**
 * The most a zip's ranges may bring in all (kept while it is read, and compared with its body): a provider's
 * directory and headers are some kilobytes; 1 000 entries (the most the zip check reads) with long names fit.
 */
const MAX_PIECES_BYTES = 16 * 1024 * 1024;

/**
 * The most one zip may be: the largest providers' zips are some hundreds of MB; a zip larger than this is not a
 * provider's, and an origin that sends one without end fills no disk.
 */
export const MAX_ZIP_BYTES = 2 * 1024 * 1024 * 1024;

/** What opening a zip at a link needs. */
export interface RangedZipInput {
  downloader: Downloader;
  link: string;
  /** `terraform-provider-x_1.2.3_linux_amd64.zip of acme/x 1.2.3`, in the downloader's messages. */
  what: string;
  filename: string;
  /** The link's host, in messages. */
  host: string;
  /** The most the zip may be. */
  limit: number;
  /** Wraps each request (a mirror names a failure as its origin's): by default none. */
  wrap?: <T>(read: () => Promise<T>) => Promise<T>;
}

/** The zip at the link, read by ranges; undefined when its host ignores ranges. */
export async function openRangedZip(input: RangedZipInput): Promise<RemoteZip | undefined> {
  const { downloader, link, what, filename } = input;
  const wrap = input.wrap ?? (<T>(read: () => Promise<T>) => read());
  const range = (start: number, end?: number): Promise<RangeBytes | undefined> =>
    wrap(() => downloader.range(link, what, start, end));
  const tail = await range(-TAIL_BYTES);
  if (tail === undefined) return undefined;
  const total = tail.total;
  if (total > input.limit) {
    throw new VerificationError(`${filename} from ${input.host} is ${total} bytes, over ${input.limit}`, {
      hint: 'No provider zip is that large; the host serves something else.',
      details: { file: filename, bytes: total, limit: input.limit },
    });
  }
  const pieces: RangeBytes[] = [tail];
  // Reads under way, by where they start: the zip check and the entry plan read the same headers at once.
  const pending = new Map<number, Promise<RangeBytes>>();
  const fetch = async (start: number, end: number): Promise<RangeBytes> => {
    const held = pieces.reduce((sum, p) => sum + p.data.length, 0);
    if (held + (end - start) > MAX_PIECES_BYTES) throw tooMuchDirectory(input);
    const got = await range(start, end - 1);
    if (got === undefined || got.total !== total) throw changedWhileRead(input, total);
    pieces.push(got);
    return got;
  };
  const read = async (start: number, length: number): Promise<Buffer> => {
    const end = Math.min(start + length, total);
    const held = pieces.find((p) => p.start <= start && p.start + p.data.length >= end);
    if (held !== undefined) return held.data.subarray(start - held.start, end - held.start);
    const asked = pending.get(start) ?? fetch(start, Math.min(total, Math.max(end, start + BLOCK_BYTES)));
    pending.set(start, asked);
    const got = await asked.finally(() => pending.delete(start));
    if (got.data.length < end - start) return read(start, length);
    return got.data.subarray(0, end - start);
  };
  async function* body(): AsyncGenerator<Buffer> {
    const chunks = downloader.body(link, what)[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await wrap(() => chunks.next());
        if (next.done === true) return;
        if (next.value.length > 0) yield next.value;
      }
    } finally {
      // A read that stops early (a failed proof, an upload given up) closes the origin's answer too.
      await chunks.return?.();
    }
  }
  return { bytes: total, host: input.host, read, body, pieces: () => pieces };
}

/** A zip whose directory and headers take more ranges than any provider's: no provider zip is shaped so. */
function tooMuchDirectory(input: RangedZipInput): VerificationError {
  return new VerificationError(
    `${input.filename} from ${input.host}: its central directory and headers take more than ${MAX_PIECES_BYTES / 1024 / 1024} MiB`,
    {
      hint: 'A provider zip holds a handful of entries; the host serves something else.',
      details: { file: input.filename },
    },
  );
}

/** The host answered a later range for another file than its first (or stopped answering ranges). */
function changedWhileRead(input: RangedZipInput, total: number): VerificationError {
  return new VerificationError(
    `${input.filename} from ${input.host} changed while it was read (it was ${total} bytes)`,
    {
      hint: 'The host served other bytes than a moment before; nothing of it was used. Try again later.',
      details: { file: input.filename },
    },
  );
}
