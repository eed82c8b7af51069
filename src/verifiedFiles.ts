/**
 * How an upload reads a release file that was verified: through a source of verified chunks, which hands on the
 * file's bytes only while they are the ones verified and fails with `FileChangedError` otherwise. Declared here,
 * between the two sides: the uploads (src/registry/uploads.ts) read through it, the hashing session
 * (src/release/hashing/hashing.ts) implements it, and neither imports the other.
 */
import { VerificationError } from './errors.js';

/** What a file hashed to when it was verified. */
export interface VerifiedDigest {
  /** Lower-case hex. */
  sha256: string;
  bytes: number;
}

/**
 * A verified file's chunks, each read when the consumer asks for it (no stream reading ahead), and the way to
 * hand back the buffers of bytes already sent.
 */
export interface VerifiedChunks extends AsyncIterable<Buffer> {
  /** The first `bytes` bytes are sent: their buffers are not referenced any more and may be read into again. */
  sent(bytes: number): void;
}

/** Where verified files are read from: fresh chunks per read, checked against what the file was verified as. */
export interface VerifiedFileSource {
  /**
   * The file at `path` (named `filename` in errors) as chunks that are exactly the verified bytes; a file that
   * is not those bytes fails the iteration before its last chunk is handed on, with a `VerificationError`:
   * `FileChangedError` when it changed since it was verified (or, for a zip proven by this very read, since the
   * release was read), else the error of the check it failed (its SHA256SUMS line, an entry's CRC-32).
   */
  readVerified(path: string, filename: string, expected: VerifiedDigest): VerifiedChunks;
}

/**
 * A release file is no longer the bytes that were verified (rewritten, shrunk, grown, gone). Exit 3. Final for
 * an upload: another attempt would read the same changed file.
 */
export class FileChangedError extends VerificationError {}
