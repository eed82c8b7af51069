/**
 * The lock files `provider lock upgrade` works on: each path given (default `.`) is a lock file, or a folder whose
 * `.terraform.lock.hcl` it is; with `--recursive`, every `.terraform.lock.hcl` under each folder, skipping
 * `.terraform/`, `.git/` and `node_modules/` (and links to folders, which could loop). Every file is read and
 * parsed before anything else happens: one that cannot be is exit 2 naming it (and its line), and nothing is
 * written.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UsageError } from '../../errors.js';
import type { ParsedLockFile } from '../../lockfile/parse.js';
import { readLockFile } from '../lock.js';

/** The lock file's name in a configuration's root. */
export const LOCK_FILE_NAME = '.terraform.lock.hcl';

/** What to do about a lock file that cannot be read. */
const GIVE = 'Give lock files, or folders holding a .terraform.lock.hcl that is a regular file.';

/** Folders never walked into: Terraform's own cache, version control, JavaScript packages. */
const SKIPPED = new Set(['.terraform', '.git', 'node_modules']);

/** One lock file as read. */
export interface LockFileRead {
  /** Absolute path. */
  file: string;
  /** As shown: relative to the working directory. */
  shown: string;
  parsed: ParsedLockFile;
  mode: number;
}

/** Finds and reads every lock file the paths name (sorted by path, each once). */
export async function readLockFiles(
  cwd: string,
  paths: string[],
  recursive: boolean,
): Promise<LockFileRead[]> {
  const found = new Set<string>();
  for (const given of paths.length === 0 ? ['.'] : paths) {
    const absolute = path.resolve(cwd, given);
    const stats = await fs.stat(absolute).catch(() => undefined);
    if (stats === undefined) {
      throw new UsageError(`${given} does not exist`, {
        hint: 'Give lock files, or folders holding .terraform.lock.hcl (with --recursive, any folder above them).',
        details: { path: given },
      });
    }
    if (stats.isFile()) found.add(absolute);
    else if (recursive) for (const file of await walk(absolute, cwd)) found.add(file);
    else found.add(path.join(absolute, LOCK_FILE_NAME));
  }
  // A file named twice (through a link, say) is one file, written and shown where it is (what a commit adds): a
  // link stays a link.
  const realCwd = await fs.realpath(cwd).catch(() => cwd);
  const real = new Map<string, string>();
  for (const file of found) {
    const target = await fs.realpath(file).catch(() => undefined);
    if (target === undefined) real.set(file, path.relative(cwd, file) || file);
    else real.set(target, path.relative(realCwd, target) || target);
  }
  const files = [...real.keys()].sort();
  if (files.length === 0) {
    throw new UsageError(`No ${LOCK_FILE_NAME} under ${paths.join(', ') || '.'}`, {
      hint: 'Run terraform init in each configuration first, or give the folders that hold lock files.',
    });
  }
  const read: LockFileRead[] = [];
  for (const file of files) {
    const shown = real.get(file)!;
    const existing = await readLockFile(file, shown, GIVE);
    if (existing === undefined) {
      throw new UsageError(`${shown} does not exist`, {
        hint: 'Run terraform init in the configuration first (it writes the lock file), or use --recursive to find them.',
        details: { file: shown },
      });
    }
    read.push({ file, shown, ...existing });
  }
  return read;
}

/**
 * Every lock file under `dir`, not entering the skipped folders nor following links. A folder that cannot be read is
 * exit 2: the lock files in it would be missed without a word.
 */
async function walk(dir: string, cwd: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    const shown = path.relative(cwd, dir) || dir;
    throw new UsageError(
      `${shown} cannot be read (${error.code ?? 'error'}): its lock files would be missed`,
      {
        hint: 'Make the folder readable, or give the folders that hold lock files instead of one above it.',
        details: { path: shown },
        cause: error,
      },
    );
  });
  const files: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !SKIPPED.has(entry.name)) files.push(...(await walk(full, cwd)));
    else if (entry.isFile() && entry.name === LOCK_FILE_NAME) files.push(full);
  }
  return files;
}
