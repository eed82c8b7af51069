/**
 * Writing files so that a kill or a full disk never leaves a torn file under its real name: a whole file goes to a
 * temp file beside it and is renamed into place (`writeFileAtomically`; the data is not synced first, so after a
 * power loss some filesystems may hold an empty file: what must survive one, the run task journal, syncs its own
 * data), the rename is made durable by a sync of the folder (`syncDir`), and a buffer is written whole at a position (`writeAll`), however many parts
 * the kernel takes it in. The one home of that mechanism: the run task journal and its lock file, the emulator's
 * state, and `provider lock`'s lock file write through these.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The name of a temp file for `name` in the same folder: `.<name>.<12 hex>.tmp`. */
export function tempName(name: string): string {
  return `.${name}.${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * Writes `data` to `file` through a temp file beside it and a rename, so that the file is always whole or absent;
 * the temp file is removed again when the write fails. With `mode`, the file has exactly that mode; without, 0644
 * less the umask. A symbolic link at `file` is replaced, never written through. The rename is not synced: see
 * `syncDir`.
 */
export function writeFileAtomically(
  file: string,
  data: string | Buffer,
  options: { mode?: number } = {},
): void {
  const temp = join(dirname(file), tempName(basename(file)));
  try {
    writeFileSync(temp, data, { flag: 'wx', mode: options.mode ?? 0o644 });
    if (options.mode !== undefined) chmodSync(temp, options.mode);
    renameSync(temp, file);
  } catch (error) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The folder itself is gone or unusable: there is no temp file left to remove.
    }
    throw error;
  }
}

/** Writes all of `buffer` at `position` (a regular file may take a write in parts). */
export function writeAll(fd: number, buffer: Buffer, position: number): void {
  let done = 0;
  while (done < buffer.length) {
    done += writeSync(fd, buffer, done, buffer.length - done, position + done);
  }
}

/** Makes a rename in `dir` durable; best effort (some filesystems cannot sync a folder). */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // EINVAL/EISDIR where folders cannot be synced: the rename is as durable as that filesystem makes it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
