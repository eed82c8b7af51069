/**
 * The configuration version `runtask send` serves at `configuration_version_download_url`: a tiny `main.tf` by
 * default, the `.tar.gz` named by `--config-version` byte for byte, or, when it names a folder, that folder packed
 * into a `.tar.gz` as Terraform uploads one (go-slug's `Pack` with links dereferenced, as the `cloud` backend and
 * go-tfe call it), so that an integrator that reads the configuration (`runtask serve --with-configuration`) is
 * rehearsed offline: files and folders (`.git` and `.terraform` left out), permission bits only; a symbolic link
 * whose target stays inside the folder kept as a link (`providers.tf -> common/providers.tf`); one whose target
 * is outside replaced by what it points at (a file's bytes, a folder's entries under the link's name); sockets,
 * FIFOs and devices left out. A link whose absolute target falls inside the folder is kept as written, as go-slug
 * keeps it (slug.go, `packWalkFn` and `validSymlink`: an absolute target is cleaned and held to the root, and a
 * link within it copied with its `Linkname` unchanged); go-slug's `Unpack` then refuses that absolute target,
 * outside the folder it unpacks into ("has external target"), and so does the integrator: such a link is packed
 * as the platform would, with a warning.
 */
import { lstat, readdir, readFile, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import type { Stats } from 'node:fs';
import { UsageError } from '../../errors.js';
import { defaultConfigurationVersion, packEntries, type ArchiveEntry } from './defaults.js';

/** Top-level folders of a configuration that Terraform does not upload by default. */
const LEFT_OUT = new Set(['.git', '.terraform']);

function unreadable(full: string, error: unknown): UsageError {
  if (error instanceof UsageError) return error;
  return new UsageError(
    `cannot read --config-version ${full}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    { hint: 'Give a .tar.gz of the configuration, or the folder holding it.' },
  );
}

/** True when `target` (absolute) is the folder `root` or inside it, by its path as written (go-slug's test). */
function inside(root: string, target: string): boolean {
  return !relative(root, target).split(sep).includes('..');
}

/** Modification times as the archive keeps them: whole seconds. */
function seconds(stats: Stats): Date {
  return new Date(Math.floor(stats.mtimeMs / 1000) * 1000);
}

/**
 * A folder's walk: the configuration's root, the folders whose links are being followed (no loops), and what
 * the command warns about.
 */
interface Walk {
  root: string;
  following: string[];
  entries: ArchiveEntry[];
  warnings: string[];
}

/** The entries of folder `dir` (on disk) under archive path `under` ('' for the root), in go-slug's order. */
async function walkFolder(walk: Walk, dir: string, under: string): Promise<void> {
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    if (under === '' && LEFT_OUT.has(name)) continue;
    const full = join(dir, name);
    const path = under === '' ? name : `${under}/${name}`;
    const stats = await lstat(full);
    if (stats.isDirectory()) {
      walk.entries.push({
        path: `${path}/`,
        type: 'Directory',
        mode: stats.mode & 0o777,
        mtime: seconds(stats),
      });
      await walkFolder(walk, full, path);
    } else if (stats.isFile()) {
      const content = await readFile(full);
      walk.entries.push({ path, type: 'File', mode: stats.mode & 0o777, mtime: seconds(stats), content });
    } else if (stats.isSymbolicLink()) {
      await walkLink(walk, full, path, stats);
    }
  }
}

/** A link: kept when its target is inside the root, else replaced by what it points at. */
async function walkLink(walk: Walk, full: string, path: string, stats: Stats): Promise<void> {
  const target = await readlink(full);
  if (inside(walk.root, isAbsolute(target) ? resolve(target) : resolve(dirname(full), target))) {
    const linkpath = target.split(sep).join('/');
    if (isAbsolute(target)) {
      const inRoot = relative(walk.root, resolve(target)).split(sep).join('/');
      const relativeTarget = posix.relative(posix.dirname(path), inRoot) || '.';
      walk.warnings.push(
        `the link ${path} points to an absolute path: Terraform uploads it as it is, and unpacking refuses it (in the run, and in the integrator); make it relative (${relativeTarget})`,
      );
    }
    walk.entries.push({
      path,
      type: 'SymbolicLink',
      mode: stats.mode & 0o777,
      mtime: seconds(stats),
      linkpath,
    });
    return;
  }
  const real = await realpath(full).catch(() => {
    throw new UsageError(
      `cannot pack --config-version: the link ${path} points to ${target}, which does not exist`,
      {
        hint: 'Terraform cannot upload this folder either: remove the link or what it points at.',
      },
    );
  });
  const pointed = await stat(real);
  if (!pointed.isDirectory()) {
    const content = await readFile(real);
    walk.entries.push({ path, type: 'File', mode: pointed.mode & 0o777, mtime: seconds(pointed), content });
    return;
  }
  if (walk.following.includes(real)) {
    throw new UsageError(`cannot pack --config-version: the link ${path} leads back into a folder it is in`, {
      hint: 'Terraform cannot upload this folder either: remove the loop.',
    });
  }
  // As go-slug: the folder's entries go under the link's name, the folder itself gets no entry.
  walk.following.push(real);
  await walkFolder(walk, real, path);
  walk.following.pop();
}

/** A folder packed into a gzip-compressed tar archive, its paths relative to the folder. */
async function packFolder(folder: string, warnings: string[]): Promise<Buffer> {
  const stats = await lstat(folder);
  const root = stats.isSymbolicLink() ? resolve(dirname(folder), await readlink(folder)) : folder;
  const walk: Walk = { root, following: [], entries: [], warnings };
  await walkFolder(walk, root, '');
  return packEntries(walk.entries);
}

/** The archive to serve, and a warning when a file given is not gzip-compressed. */
export async function configurationVersion(
  given: string | undefined,
  cwd: string,
  now: Date,
  warnings: string[],
): Promise<Buffer> {
  if (given === undefined) return defaultConfigurationVersion(now);
  const full = resolve(cwd, given);
  let stats: Stats;
  try {
    stats = await stat(full);
  } catch (error) {
    throw unreadable(full, error);
  }
  if (stats.isDirectory()) {
    try {
      return await packFolder(full, warnings);
    } catch (error) {
      throw unreadable(full, error);
    }
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(full);
  } catch (error) {
    throw unreadable(full, error);
  }
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b)
    warnings.push(`--config-version ${given} is not gzip-compressed; the platform serves a .tar.gz`);
  return bytes;
}
