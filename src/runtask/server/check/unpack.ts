/**
 * Unpacking a configuration version (a `.tar.gz` the platform serves, so a file from outside) into a folder,
 * safely. The archive is read twice: first every entry is checked without writing anything, and the whole
 * archive is refused, naming the first bad entry, when one is not a file, a folder or a symbolic link that stays
 * inside the folder (the links HCP Terraform's packer keeps; unpackTree.ts), when a path is absolute or climbs
 * out with `..` (node-tar would strip or skip these silently: here they refuse the archive), or when the entries
 * or their unpacked bytes pass the limits (a file declaring more than the limit is refused at its header). Only
 * then is it extracted, by node-tar, with the same checks, and without set-uid, set-gid or sticky bits; last,
 * every link unpacked is resolved as the kernel follows it and must land inside the folder (defence in depth).
 *
 * Both passes stream the file from disk through zlib's own Gunzip, which inflates in libuv's thread pool, not on
 * the event loop, with backpressure all the way to node-tar's parser: no archive stalls the integrator's other
 * work (requests, /healthz, lease renewals). The inflated bytes are counted as they come, all gzip members
 * included, and the archive is refused once they pass the cap, whatever follows the end of the tar archive
 * (the parser is fed nothing past that end). Messages name entries as the archive does, never the job's folder.
 */
import { createReadStream } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Parser, Unpack, type ReadEntry } from 'tar';
import { ArchiveTree, entryRefusal, linkLeavingFolder, quoted } from './unpackTree.js';

export { entryRefusal } from './unpackTree.js';

/** How much an archive may hold. */
export interface UnpackLimits {
  /** Entries (files, folders and links). */
  maxEntries: number;
  /** Bytes of the files once unpacked. */
  maxBytes: number;
  /** Bytes of the archive once inflated: the tar stream (headers and padding too) and anything after it. */
  maxInflatedBytes: number;
}

/** 10 000 entries, 100 MiB of files, 128 MiB inflated. */
export const DEFAULT_UNPACK_LIMITS: UnpackLimits = {
  maxEntries: 10_000,
  maxBytes: 100 * 1024 * 1024,
  maxInflatedBytes: 128 * 1024 * 1024,
};

/** An archive refused, or one that could not be read; `entry` names the entry at fault when there is one. */
export class UnpackError extends Error {
  constructor(
    message: string,
    readonly entry?: string,
  ) {
    super(message);
  }
}

const REFUSED = 'the configuration version was refused';

/** Counts entries and bytes against the limits; says why once one is passed. */
class Tally {
  private entries = 0;
  private bytes = 0;

  constructor(private readonly limits: UnpackLimits) {}

  add(entry: Pick<ReadEntry, 'path' | 'size'>): string | undefined {
    this.entries++;
    this.bytes += entry.size ?? 0;
    if (this.entries > this.limits.maxEntries)
      return `the archive holds more than ${this.limits.maxEntries} entries`;
    if (this.bytes > this.limits.maxBytes)
      return `the archive unpacks to more than ${this.limits.maxBytes} bytes (at ${quoted(entry.path)})`;
    return undefined;
  }
}

/** The cap on the inflated bytes, as messages say it: "134217728 bytes (128 MiB)". */
function capText(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${bytes} bytes (${mib} MiB)` : `${bytes} bytes`;
}

/**
 * Counts the inflated bytes, failing past the cap; refuses a tar stream that is itself compressed again, by its
 * first two bytes, which are held back until both came (Gunzip may hand them on in chunks of one byte).
 */
function inflatedCounter(limits: UnpackLimits): Transform {
  let total = 0;
  let start: Buffer | undefined = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > limits.maxInflatedBytes) {
        const cap = capText(limits.maxInflatedBytes);
        return done(
          new UnpackError(`${REFUSED}: it inflates to more than ${cap}, the most the integrator unpacks`),
        );
      }
      if (start === undefined) return done(null, chunk);
      const first = Buffer.concat([start, chunk]);
      if (first.length < 2) {
        start = first;
        return done();
      }
      start = undefined;
      // node-tar would inflate a gzip stream it finds inside, on the event loop: one layer is what is served.
      if (first[0] === 0x1f && first[1] === 0x8b)
        return done(
          new UnpackError(`${REFUSED}: the archive is compressed twice (a .tar.gz inside the .tar.gz)`),
        );
      done(null, first);
    },
    flush(done) {
      done(null, start !== undefined && start.length > 0 ? start : undefined);
    },
  });
}

/**
 * Feeds a node-tar parser (a Parser, or an Unpack writing files) as a Writable: waits for its `drain`, passes on
 * nothing after the end of the tar archive (`eof`), and finishes once the parser has closed (every file written).
 */
function parserSink(parser: Parser): Writable {
  let ended = false;
  let finished: ((error?: Error | null) => void) | undefined;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (ended || parser.write(chunk)) return done();
      parser.once('drain', () => done());
    },
    final(done) {
      finished = done;
      parser.end();
    },
  });
  parser.on('eof', () => (ended = true));
  parser.on('close', () => finished?.());
  parser.on('error', (error: Error) => sink.destroy(error));
  return sink;
}

/**
 * Streams the archive, inflated and counted, into `parser`; rejects with the first error of any stage, or with
 * an AbortError once `signal` is aborted (every stage is then destroyed).
 */
async function feed(
  archive: string,
  parser: Parser,
  limits: UnpackLimits,
  signal: AbortSignal | undefined,
): Promise<void> {
  const stages = [
    createReadStream(archive),
    createGunzip(),
    inflatedCounter(limits),
    parserSink(parser),
  ] as const;
  await pipeline(...stages, signal === undefined ? {} : { signal });
}

/** An error of the archive's reading, as said to the platform: no path of the integrator's in it. */
function unreadable(error: Error): UnpackError {
  if (error instanceof UnpackError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  // Node's own errors of the file say its path: their code is enough. zlib's and node-tar's words hold none.
  const why = code !== undefined && /^E[A-Z]+$/.test(code) ? code : error.message;
  return new UnpackError(`the configuration version is not a readable .tar.gz: ${why}`);
}

/** Reads every entry header of the archive, writing nothing; rejects with the first refusal. */
async function inspect(archive: string, limits: UnpackLimits, signal?: AbortSignal): Promise<void> {
  const tally = new Tally(limits);
  const tree = new ArchiveTree();
  const checked = new WeakSet<ReadEntry>();
  let refusal: UnpackError | undefined;
  const parser: Parser = new Parser({
    strict: true,
    brotli: false,
    zstd: false,
    // Every entry is looked at here and skipped: nothing is unpacked in this pass.
    filter: (_path, entry) => {
      const read = entry as ReadEntry;
      checked.add(read);
      const reason = entryRefusal(read) ?? tree.add(read) ?? tally.add(read);
      if (reason !== undefined) refuse(reason, read);
      return false;
    },
  });
  const refuse = (reason: string, entry: ReadEntry): void => {
    refusal ??= new UnpackError(`${REFUSED}: ${reason}`, entry.path);
    parser.abort(refusal);
  };
  // Entries the filter never saw: types node-tar does not know, and oversized metadata.
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    if (!checked.has(entry)) refuse(`${quoted(entry.path)} is of a type that is not unpacked`, entry);
  });
  try {
    await feed(archive, parser, limits, signal);
  } catch (error) {
    if (signal?.aborted === true) throw error;
    throw refusal ?? unreadable(error as Error);
  }
  // What only the whole archive tells: entries under a link or a file, links through links.
  const reason = tree.refusal();
  if (reason !== undefined) throw new UnpackError(`${REFUSED}: ${reason.message}`, reason.entry);
}

/** What went wrong writing an entry, without the job's folder: the error's code, or its words with it cut out. */
function unpackFailure(error: Error & { entry?: ReadEntry }, folder: string): UnpackError {
  if (error instanceof UnpackError) return error;
  const entry = error.entry?.path;
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code !== undefined && /^E[A-Z]+$/.test(code) ? code : error.message.split(folder).join('<configuration>');
  const at = entry === undefined ? '' : ` at ${quoted(entry)}`;
  return new UnpackError(`the configuration version could not be unpacked${at}: ${why}`, entry);
}

/**
 * Unpacks `archive` into `folder` (which must exist, and should be empty), or rejects with an UnpackError
 * without having written anything when the archive is refused (or having removed it all, for a link found to
 * lead out once unpacked); resolves with the number of entries unpacked. Aborting `signal` (the job's) stops it
 * at once, rejecting with an AbortError; what was written by then stays for the job's folder to be removed.
 */
export async function unpackConfiguration(
  archive: string,
  folder: string,
  limits: UnpackLimits = DEFAULT_UNPACK_LIMITS,
  signal?: AbortSignal,
): Promise<number> {
  await inspect(archive, limits, signal);
  let unpacked = 0;
  const refused: string[] = [];
  const links: string[] = [];
  const unpack = new Unpack({
    cwd: folder,
    strict: true,
    brotli: false,
    zstd: false,
    preserveOwner: false,
    filter: (_path, entry) => {
      const read = entry as ReadEntry;
      const reason = entryRefusal(read);
      if (reason !== undefined) refused.push(reason);
      else unpacked++;
      if (reason === undefined && read.type === 'SymbolicLink') links.push(read.path);
      // A set-uid (or set-gid, or sticky) file is no part of a configuration.
      if (typeof read.mode === 'number') read.mode &= 0o777;
      return reason === undefined;
    },
  });
  try {
    await feed(archive, unpack, limits, signal);
  } catch (error) {
    if (signal?.aborted === true) throw error;
    throw unpackFailure(error as Error, folder);
  }
  // The first pass refused any such entry: finding one here means the archive changed under us.
  if (refused.length > 0) throw new UnpackError(`${REFUSED}: ${refused[0]}`);
  // Whatever fails here (a link that cannot be read, the folder gone), the message says no path of the job's.
  await holdLinksInside(folder, links).catch((error: unknown) => {
    throw unpackFailure(error as Error, folder);
  });
  return unpacked;
}

/**
 * Defence in depth: every link unpacked must resolve, as the kernel follows it, inside the folder. The first
 * pass makes sure of that by the archive's names; should it ever miss a way out, what was unpacked is removed
 * and the archive refused.
 */
async function holdLinksInside(folder: string, links: readonly string[]): Promise<void> {
  const leaving = await linkLeavingFolder(folder, links);
  if (leaving === undefined) return;
  for (const name of await readdir(folder)) await rm(join(folder, name), { recursive: true, force: true });
  throw new UnpackError(
    `${REFUSED}: ${quoted(leaving)} is a symbolic link that leads out of the folder once unpacked`,
    leaving,
  );
}
