/**
 * The open journal file, `journal.jsonl`: where its next line goes, where each live job's lines are, and how many
 * bytes finished jobs left blank. Lines are appended at the end; a finished job's lines are overwritten with
 * spaces in place (its access token is gone from the file at once, as an unlinked file's would be from the
 * folder); a fresh file holding only the live lines replaces it at the start, after a repair, and once the blanks
 * outweigh the live records (compaction), and it is truncated when no job is live. The descriptor is opened for
 * writing at positions, never O_APPEND, because blanking writes into the middle.
 *
 * Why one file rather than one file per job: creating a file costs an inode, a directory entry and its
 * journaling in the filesystem (docs/performance.md); an append to an open file costs microseconds.
 */
import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { syncDir, tempName, writeAll } from '../../../atomicWrite.js';
import { codeOf } from '../errorCode.js';
import { JOURNAL_FILE, blankLine } from './journalRecord.js';

/** Blanked bytes past which the file is rewritten, when they also outweigh the live records. */
const COMPACT_BYTES = 1024 * 1024;
/** Rewrites are written in pieces of about this size. */
const CHUNK_BYTES = 256 * 1024;

/** A line to append, and the job it belongs to. */
export interface JobLine {
  id: string;
  line: Buffer;
}

/** One open journal file. */
export class JournalFile {
  /** Bytes of blanked lines in the file. */
  private blanked = 0;

  private constructor(
    /** The descriptor; closed by the journal, which knows when no sync runs on it. */
    readonly fd: number,
    /** Where the next line goes. */
    private size: number,
    /** Where each live job's lines are in the file: [offset, length]. */
    private readonly spans: Map<string, [number, number][]>,
  ) {}

  /**
   * Writes `lines` (every live job's latest line) into a fresh journal file in `dir` (temp, sync, rename, folder
   * sync) and opens it. Throws when the folder cannot be written; the file in place is then untouched.
   */
  static write(dir: string, lines: Iterable<JobLine>): JournalFile {
    const temp = join(dir, tempName(JOURNAL_FILE));
    const spans = new Map<string, [number, number][]>();
    let fd: number | undefined;
    let size = 0;
    try {
      fd = openSync(temp, 'wx', 0o600);
      let chunk: Buffer[] = [];
      let chunkBytes = 0;
      const flush = (): void => {
        writeAll(fd!, Buffer.concat(chunk, chunkBytes), size - chunkBytes);
        chunk = [];
        chunkBytes = 0;
      };
      for (const { id, line } of lines) {
        spans.set(id, [[size, line.length]]);
        chunk.push(line);
        chunkBytes += line.length;
        size += line.length;
        if (chunkBytes >= CHUNK_BYTES) flush();
      }
      if (chunkBytes > 0) flush();
      fdatasyncSync(fd);
      renameSync(temp, join(dir, JOURNAL_FILE));
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      try {
        rmSync(temp, { force: true });
      } catch {
        // The folder itself is gone or unusable: there is no temp file left to remove.
      }
      throw error;
    }
    syncDir(dir);
    return new JournalFile(fd, size, spans);
  }

  /**
   * Appends `batch` in one write at the end. Throws when it cannot; lines cut short (a full disk) are cut off
   * again, so that they do not stay in the middle of the file.
   */
  append(batch: readonly JobLine[]): void {
    const offset = this.size;
    let bytes = 0;
    for (const { line } of batch) bytes += line.length;
    try {
      writeAll(
        this.fd,
        batch.length === 1
          ? batch[0]!.line
          : Buffer.concat(
              batch.map(({ line }) => line),
              bytes,
            ),
        offset,
      );
    } catch (error) {
      try {
        ftruncateSync(this.fd, offset);
      } catch {
        // The next rewrite replaces the whole file anyway.
      }
      throw error;
    }
    let at = offset;
    for (const { id, line } of batch) {
      const spans = this.spans.get(id);
      if (spans === undefined) this.spans.set(id, [[at, line.length]]);
      else spans.push([at, line.length]);
      at += line.length;
    }
    this.size = at;
  }

  /** Overwrites a job's lines with spaces (its access token leaves the file now). Throws when it cannot. */
  blank(id: string): void {
    const spans = this.spans.get(id) ?? [];
    this.spans.delete(id);
    for (const [offset, length] of spans) {
      writeAll(this.fd, blankLine(length), offset);
      this.blanked += length;
    }
  }

  /** Empties the file (no job is live). */
  truncate(): void {
    ftruncateSync(this.fd, 0);
    this.size = 0;
    this.blanked = 0;
  }

  /** True when the blanks are worth a rewrite: past COMPACT_BYTES, and outweighing the live lines. */
  needsCompaction(): boolean {
    return this.blanked >= COMPACT_BYTES && this.blanked * 2 >= this.size;
  }

  /** How many names the file has in its folder: 0 once it was removed (or its folder replaced). */
  links(): number {
    return fstatSync(this.fd).nlink;
  }
}

/** What happened to the state dir `dir` once the journal file is no longer in it, as a write into it would say. */
export function goneCode(dir: string): string {
  try {
    return statSync(dir).isDirectory() ? 'ENOENT' : 'ENOTDIR';
  } catch (error) {
    return codeOf(error);
  }
}
