/**
 * A platform zip that is not in the release folder but at a link (a mirror's origin): read by ranges for its
 * central directory and local headers, and streamed whole, once, by the read that uploads it
 * (./hashing/streamedRead.ts). Declared here, on verification's side; the mirror implements it over its
 * downloader (src/mirror/remoteZips.ts). yauzl reads it through its own random-access reader interface, so the
 * zip checks and the entry plan are the same code as for a file on disk.
 */
import { Readable } from 'node:stream';
import type { Options, ZipFile } from 'yauzl';

/** A zip read over the network. */
export interface RemoteZip {
  /** Its size, as the host's answers to the range requests gave it. */
  bytes: number;
  /** Where it comes from, in messages (`registry.terraform.io`). */
  host: string;
  /** `length` bytes from `start`, whole (a host that answers fewer fails the read). */
  read(start: number, length: number): Promise<Buffer>;
  /** The whole file as it streams in: a fresh request each time. */
  body(): AsyncIterable<Buffer>;
  /**
   * The bytes read by ranges so far (what the zip's checks and entry plan were made from), by where they start:
   * the read of the body proves it holds the very same bytes there.
   */
  pieces(): readonly { start: number; data: Buffer }[];
}

/** The errors a remote zip's reads failed with, passed on as they are rather than as a damaged zip's. */
const readErrors = new WeakSet<object>();

/** Whether yauzl failed because a remote zip's read did (the network, Ctrl-C), not because of the zip. */
export function isRemoteReadError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && readErrors.has(error);
}

/** Opens a zip for yauzl: the file at `path`, or the remote zip when there is one. */
export async function openZip(path: string, options: Options, remote?: RemoteZip): Promise<ZipFile> {
  // Loaded on first use, like openpgp: verification starts hashing before the libraries are in.
  const yauzl = await import('yauzl');
  if (remote === undefined) return yauzl.openPromise(path, options);
  class RangeReader extends yauzl.RandomAccessReader {
    override _readStreamForRange(start: number, end: number): Readable {
      return Readable.from(
        (async function* range() {
          yield await remote!.read(start, end - start).catch((error: unknown) => {
            if (typeof error === 'object' && error !== null) readErrors.add(error);
            throw error;
          });
        })(),
        { objectMode: false },
      );
    }
  }
  return yauzl.fromRandomAccessReaderPromise(new RangeReader(), remote.bytes, options);
}
