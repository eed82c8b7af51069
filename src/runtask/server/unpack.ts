/**
 * Unpacking a configuration version (a `.tar.gz` the platform serves, so a file from outside) into a folder,
 * safely. The archive is read twice: first every entry is checked without writing anything, and the whole
 * archive is refused, naming the first bad entry, when one is not a plain file or folder (links, devices,
 * FIFOs and types tar does not know), when a path is absolute or climbs out with `..` (node-tar would strip
 * or skip these silently: here they refuse the archive), or when the entries or their unpacked bytes pass the
 * limits (a small archive that unpacks to gigabytes is refused at the header declaring them). Only then is it
 * extracted, by node-tar, with the same check as its filter.
 */
import { createReadStream } from 'node:fs';
import { Parser, extract, type ReadEntry } from 'tar';

/** How much an archive may hold. */
export interface UnpackLimits {
  /** Entries (files and folders). */
  maxEntries: number;
  /** Bytes of the files once unpacked. */
  maxBytes: number;
}

/** 10 000 entries and 100 MiB unpacked. */
export const DEFAULT_UNPACK_LIMITS: UnpackLimits = { maxEntries: 10_000, maxBytes: 100 * 1024 * 1024 };

/** An archive refused, or one that could not be read; `entry` names the entry at fault when there is one. */
export class UnpackError extends Error {
  constructor(
    message: string,
    readonly entry?: string,
  ) {
    super(message);
  }
}

/** The entry types unpacked: regular files and folders, nothing else. */
const PLAIN_TYPES: ReadonlySet<string> = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory']);

/** Why an entry is refused by its type or path, or undefined when it is a plain file or folder inside. */
export function entryRefusal(entry: Pick<ReadEntry, 'type' | 'path'>): string | undefined {
  const path = entry.path;
  if (!PLAIN_TYPES.has(entry.type)) {
    const kind =
      entry.type === 'SymbolicLink'
        ? 'a symbolic link'
        : entry.type === 'Link'
          ? 'a hard link'
          : `a ${entry.type} entry`;
    return `${quoted(path)} is ${kind}: only files and folders are unpacked`;
  }
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path))
    return `${quoted(path)} is an absolute path`;
  if (path.split(/[\\/]/).includes('..')) return `${quoted(path)} climbs out of the folder with ..`;
  return undefined;
}

/** A path for messages: quoted, control characters escaped, cut at 200 characters. */
function quoted(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 199)}…` : path);
}

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

/** Reads every entry header of the archive, writing nothing; rejects with the first refusal. */
function inspect(archive: string, limits: UnpackLimits): Promise<void> {
  return new Promise((resolve, reject) => {
    const tally = new Tally(limits);
    const checked = new WeakSet<ReadEntry>();
    const input = createReadStream(archive);
    let failed = false;
    const fail = (error: Error): void => {
      if (failed) return;
      failed = true;
      input.destroy();
      reject(error);
    };
    const refuse = (reason: string, entry: ReadEntry): void => {
      const error = new UnpackError(`the configuration version was refused: ${reason}`, entry.path);
      fail(error);
      parser.abort(error);
    };
    const parser = new Parser({
      strict: true,
      // Every entry is looked at here and skipped: nothing is unpacked in this pass.
      filter: (_path, entry) => {
        const read = entry as ReadEntry;
        checked.add(read);
        const reason = entryRefusal(read) ?? tally.add(read);
        if (reason !== undefined) refuse(reason, read);
        return false;
      },
    });
    // Entries the filter never saw: types node-tar does not know, and oversized metadata.
    parser.on('ignoredEntry', (entry: ReadEntry) => {
      if (!checked.has(entry)) refuse(`${quoted(entry.path)} is of a type that is not unpacked`, entry);
    });
    parser.on('error', (error: Error) => fail(unreadable(error)));
    parser.on('end', () => {
      if (!failed) resolve();
    });
    input.on('error', (error) => fail(unreadable(error)));
    input.on('data', (chunk) => parser.write(chunk as Buffer));
    input.on('end', () => parser.end());
  });
}

/** An error of the archive's reading, as said to the user. */
function unreadable(error: Error): Error {
  if (error instanceof UnpackError) return error;
  return new UnpackError(`the configuration version is not a readable .tar.gz: ${error.message}`);
}

/**
 * Unpacks `archive` into `folder` (which must exist, and should be empty), or rejects with an UnpackError
 * without having written anything; resolves with the number of entries unpacked.
 */
export async function unpackConfiguration(
  archive: string,
  folder: string,
  limits: UnpackLimits = DEFAULT_UNPACK_LIMITS,
): Promise<number> {
  await inspect(archive, limits);
  let unpacked = 0;
  const refused: string[] = [];
  try {
    await extract({
      file: archive,
      cwd: folder,
      strict: true,
      preserveOwner: false,
      filter: (_path, entry) => {
        const reason = entryRefusal(entry as ReadEntry);
        if (reason !== undefined) refused.push(reason);
        else unpacked++;
        return reason === undefined;
      },
    });
  } catch (error) {
    throw unreadable(error as Error);
  }
  // The first pass refused any such entry: finding one here means the archive changed under us.
  if (refused.length > 0) throw new UnpackError(`the configuration version was refused: ${refused[0]}`);
  return unpacked;
}
