/**
 * A remote zip's one read (./../remoteZip.ts): its body as it streams in, each chunk hashed into the file's
 * SHA-256 and its planned entries' data fed to their inflaters and hashes, as a file's read does
 * (./streamedRead.ts). `fromLink` hands each chunk on to an upload and holds the last back until the zip is proven
 * against what is expected of it; `digestLink` only takes the hashes, for a check that compares them itself.
 */
import { createHash } from 'node:crypto';
import { VerificationError } from '../../errors.js';
import type { RemoteZip } from '../remoteZip.js';
import type { ZipPlan } from '../zipPlan.js';
import { entrySlices } from '../zipPlan.js';
import { EntryContents, feed, STREAMED_INFLATE_CHUNK } from './entryContents.js';

/** What the read for an upload must prove (./streamedRead.ts's expectation is one). */
export interface LinkExpectation {
  filename: string;
  sha256: string;
  bytes: number;
  plan: ZipPlan;
  failures: { shasum(actual: string): Error; entry(entry: string, failure: string): Error };
}

/** What a read of a remote zip's body took: its SHA-256 and size, and its entries' hashes or the first bad one. */
export interface LinkDigest {
  sha256: string;
  bytes: number;
  entries: { entries: string[] } | { entry: string; failure: string };
}

/** A remote zip's bytes taken in as they come: into its SHA-256, and its planned entries' data into theirs. */
class Intake {
  private readonly contents: EntryContents;
  private readonly hash = createHash('sha256');
  private readonly cursor = { next: 0 };
  private feeding: Promise<void> = Promise.resolve();
  private finished = false;
  bytes = 0;

  constructor(
    private readonly plan: ZipPlan,
    private readonly remote: RemoteZip,
    private readonly filename: string,
  ) {
    this.contents = new EntryContents(plan, false, STREAMED_INFLATE_CHUNK);
  }

  /**
   * Takes a chunk in, once the entries took the one before (the inflaters' pace is the read's). Its bytes that
   * the ranges read before (the directory, the local headers) must be the same: the checks and the plan were
   * made from them, and only the body is proven by its hash.
   */
  async take(chunk: Buffer): Promise<void> {
    await this.feeding;
    const from = this.bytes;
    const to = from + chunk.length;
    for (const piece of this.remote.pieces()) {
      const a = Math.max(from, piece.start);
      const b = Math.min(to, piece.start + piece.data.length);
      if (
        a < b &&
        !chunk.subarray(a - from, b - from).equals(piece.data.subarray(a - piece.start, b - piece.start))
      )
        throw otherBytes(this.remote, this.filename, a);
    }
    this.bytes += chunk.length;
    this.hash.update(chunk);
    this.feeding = feed(this.contents, entrySlices(this.plan, this.cursor, from, chunk));
  }

  async finish(): Promise<LinkDigest> {
    await this.feeding;
    const sha256 = this.hash.digest('hex');
    const entries = await this.contents.finish();
    this.finished = true;
    return { sha256, bytes: this.bytes, entries };
  }

  /** The read stopped: its inflaters too. */
  close(): void {
    if (!this.finished) this.contents.abandon();
  }
}

/**
 * The chunks of a remote zip for an upload, proven on the way: its size is the one its range answers gave (a
 * body of another size is the host serving other bytes now), its SHA-256 its signed line's and every entry whole,
 * all before the chunk that completes it is handed on; `proved` is told the result first.
 */
export async function* fromLink(
  remote: RemoteZip,
  expect: LinkExpectation,
  proved: (result: { sha256: string; bytes: number; entries: string[] }) => void,
): AsyncGenerator<Buffer> {
  const intake = new Intake(expect.plan, remote, expect.filename);
  const other = otherSize(remote, expect.filename, expect.bytes);
  try {
    let last: Buffer | undefined;
    for await (const chunk of remote.body()) {
      if (chunk.length === 0) continue;
      if (intake.bytes + chunk.length > expect.bytes) throw other(`has more than ${expect.bytes} bytes`);
      await intake.take(chunk);
      if (intake.bytes === expect.bytes) last = chunk;
      else yield chunk;
    }
    if (intake.bytes < expect.bytes) throw other(`ended after ${intake.bytes} bytes`);
    const { sha256, bytes, entries } = await intake.finish();
    if (sha256 !== expect.sha256) throw expect.failures.shasum(sha256);
    if ('failure' in entries) throw expect.failures.entry(entries.entry, entries.failure);
    proved({ sha256, bytes, entries: entries.entries });
    if (last !== undefined) yield last;
  } finally {
    intake.close();
  }
}

/** A remote zip's body read once for its SHA-256 and its planned entries' hashes; nothing is expected of them. */
export async function digestLink(
  remote: RemoteZip,
  filename: string,
  plan: ZipPlan,
  /** Told of the bytes taken in so far, and the zip's size (for progress). */
  onBytes?: (received: number, total: number) => void,
): Promise<LinkDigest> {
  const intake = new Intake(plan, remote, filename);
  const other = otherSize(remote, filename, remote.bytes);
  try {
    for await (const chunk of remote.body()) {
      if (intake.bytes + chunk.length > remote.bytes) throw other(`has more than ${remote.bytes} bytes`);
      await intake.take(chunk);
      onBytes?.(intake.bytes, remote.bytes);
    }
    if (intake.bytes < remote.bytes) throw other(`ended after ${intake.bytes} bytes`);
    return await intake.finish();
  } finally {
    intake.close();
  }
}

/** The error of a body of another size than the zip's ranges said: the host serves other bytes now. */
function otherSize(remote: RemoteZip, filename: string, bytes: number): (said: string) => VerificationError {
  return (said) =>
    new VerificationError(`${filename} from ${remote.host} ${said}, not the ${bytes} its ranges said`, {
      hint: 'The host served other bytes than a moment before; nothing of it was used or completed. Try again later.',
      details: { file: filename },
    });
}

/** The body differs from what the ranges read at the same place: the checks were made from other bytes. */
function otherBytes(remote: RemoteZip, filename: string, at: number): VerificationError {
  return new VerificationError(
    `${filename} from ${remote.host} is not at byte ${at} what its range answers were: its directory and headers were checked from other bytes than it is`,
    {
      hint: 'The host serves inconsistent bytes; nothing of it was used or completed. Try again later, or report it to the host.',
      details: { file: filename, offset: at },
    },
  );
}
