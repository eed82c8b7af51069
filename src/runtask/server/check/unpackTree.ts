/**
 * Which entries of a configuration version are unpacked (unpack.ts), by their own header and by the whole
 * archive. Files and folders are; so are symbolic links whose target stays inside the folder, as HCP Terraform's
 * packer (go-slug) keeps them (`providers.tf -> common/providers.tf`) and its unpacker accepts them: a relative
 * target that, taken from the link's own folder, never climbs above the configuration's. An absolute target, or
 * one that climbs out, refuses the archive, as go-slug does ("has external target"): slug.go's `validSymlink`
 * accepts an absolute target only inside the folder it unpacks into, which no archive packed elsewhere points
 * at (its tests TestUnpackMaliciousSymlinks and TestAbsoluteSymlinkContainment refuse one), though its `Pack`
 * keeps a link whose absolute target is inside the folder packed (send/configuration.ts does too, and warns).
 * Stricter than go-slug, so that the target is where it looks to be: a link may not point through another link
 * of the archive (walked a name at a time, as the kernel follows it: `x -> l/../..` goes through `l` though `..`
 * cancels its name on paper), and no entry may sit under a link (go-slug refuses that too) or under a file.
 * Everything else (hard links, devices, FIFOs, types tar does not know) refuses the archive. Once unpacked, every
 * link is resolved by the kernel's realpath(3) and must land inside the folder (`linkLeavingFolder`), should the
 * walk above ever miss a way out.
 */
import { readlink, realpath } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { ReadEntry } from 'tar';

/** The entry types unpacked as they are: regular files and folders. */
const PLAIN_TYPES: ReadonlySet<string> = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory']);

/** A path for messages: quoted, control characters escaped, cut at 200 characters. */
export function quoted(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 199)}…` : path);
}

/** The names along a path of the archive: `./a//b/` is a, b. */
function namesOf(path: string): string[] {
  return path.split('/').filter((name) => name !== '' && name !== '.');
}

/**
 * The folder a path names by its last name, as names from the configuration's (`''`: that folder itself), or
 * undefined: `./` and `.` name the configuration's folder, `a/.` the folder a. node-tar writes no file or link
 * there, and the folder left in its place would be taken for the link by the check after extraction.
 */
function folderNamed(path: string): string | undefined {
  const names = namesOf(path);
  const written = path.split('/').filter((name) => name !== '');
  return names.length === 0 || written.at(-1) === '.' ? names.join('/') : undefined;
}

function isAbsolute(path: string): boolean {
  return path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path);
}

/**
 * Where a link at `path` leads, as names from the configuration's folder (empty: the folder itself), read as
 * written; undefined when it climbs above the folder.
 */
function linkTarget(path: string, target: string): string[] | undefined {
  const names = namesOf(path).slice(0, -1);
  for (const name of target.split('/')) {
    if (name === '' || name === '.') continue;
    if (name !== '..') names.push(name);
    else if (names.pop() === undefined) return undefined;
  }
  return names;
}

/** Why a symbolic link is refused by its target, or undefined when the target stays inside. */
function linkRefusal(path: string, target: string): string | undefined {
  const link = `${quoted(path)} is a symbolic link to ${quoted(target)}`;
  if (isAbsolute(target))
    return `${link}, an absolute path: only links that stay inside the folder are unpacked`;
  if (linkTarget(path, target) === undefined)
    return `${link}, which leaves the folder: only links that stay inside it are unpacked`;
  return undefined;
}

/** Why an entry is refused by its own header, or undefined when it may be unpacked. */
export function entryRefusal(entry: Pick<ReadEntry, 'type' | 'path' | 'linkpath'>): string | undefined {
  const path = entry.path;
  if (!PLAIN_TYPES.has(entry.type) && entry.type !== 'SymbolicLink') {
    const kind = entry.type === 'Link' ? 'a hard link' : `a ${entry.type} entry`;
    return `${quoted(path)} is ${kind}: only files, folders and links inside the folder are unpacked`;
  }
  if (isAbsolute(path)) return `${quoted(path)} is an absolute path`;
  if (path.split(/[\\/]/).includes('..')) return `${quoted(path)} climbs out of the folder with ..`;
  const folder = entry.type === 'Directory' ? undefined : folderNamed(path);
  if (folder !== undefined) {
    const kind = entry.type === 'SymbolicLink' ? 'a symbolic link' : 'a file';
    const place = folder === '' ? "the configuration's folder itself" : `the folder ${quoted(folder)}`;
    return `${quoted(path)} is ${kind} in the place of ${place}: only a folder entry may be named so`;
  }
  if (entry.type === 'SymbolicLink') return linkRefusal(path, entry.linkpath ?? '');
  return undefined;
}

type Kind = 'folder' | 'file' | 'link';

/** The entries of an archive by path, for what only the whole archive tells. */
export class ArchiveTree {
  private readonly entries = new Map<string, { kind: Kind; path: string }>();
  private readonly links: Array<{ path: string; linkpath: string }> = [];

  /** Adds an entry the header checks let through; says why it is refused when it takes a link's place. */
  add(entry: Pick<ReadEntry, 'type' | 'path' | 'linkpath'>): string | undefined {
    const key = namesOf(entry.path).join('/');
    const kind: Kind =
      entry.type === 'Directory' ? 'folder' : entry.type === 'SymbolicLink' ? 'link' : 'file';
    const before = this.entries.get(key);
    if (before !== undefined && (before.kind === 'link' || kind === 'link'))
      return `${quoted(entry.path)} appears twice in the archive, once as a symbolic link`;
    this.entries.set(key, { kind, path: entry.path });
    if (kind === 'link') {
      this.links.push({ path: entry.path, linkpath: entry.linkpath ?? '' });
    }
    return undefined;
  }

  /** The first entry under a link or a file, or link through a link, once every entry was added. */
  refusal(): { message: string; entry: string } | undefined {
    for (const [key, { path }] of this.entries) {
      const names = key.split('/');
      for (let i = 1; i < names.length; i++) {
        const above = this.entries.get(names.slice(0, i).join('/'));
        if (above !== undefined && above.kind !== 'folder') {
          const what = above.kind === 'link' ? 'the symbolic link' : 'the file';
          return { message: `${quoted(path)} is inside ${what} ${quoted(above.path)}`, entry: path };
        }
      }
    }
    for (const link of this.links) {
      const through = this.linkAlong(link.path, link.linkpath);
      if (through === undefined) continue;
      const message = `${quoted(link.path)} is a symbolic link to ${quoted(link.linkpath)}, through the symbolic link ${quoted(through)}: links to links are not unpacked`;
      return { message, entry: link.path };
    }
    return undefined;
  }

  /**
   * The first link of the archive the kernel would follow on the way from the link at `path` to its target: the
   * target walked a name at a time from the link's folder, every path reached checked before a `..` leaves it.
   */
  private linkAlong(path: string, target: string): string | undefined {
    const names = namesOf(path).slice(0, -1);
    for (const name of target.split('/')) {
      if (name === '' || name === '.') continue;
      if (name === '..') {
        names.pop();
        continue;
      }
      names.push(name);
      const reached = this.entries.get(names.join('/'));
      if (reached?.kind === 'link') return reached.path;
    }
    return undefined;
  }
}

/**
 * Where the kernel takes the link at `full`: realpath(3) of it (fs/promises' realpath is the native one: Node's
 * `realpathSync` tidies `..` away before following links, which is the very mistake looked for here). A target
 * that does not exist is resolved as far as it does; a `..` past that point counts as leaving.
 */
async function whereLinkLeads(full: string): Promise<string | undefined> {
  let written: string;
  try {
    written = await readlink(full);
  } catch {
    // Not a link once unpacked (or gone): it cannot be followed, so it is not let through.
    return undefined;
  }
  const names = (written.startsWith('/') ? written : `${dirname(full)}/${written}`).split('/');
  for (let kept = names.length; kept > 0; kept--) {
    try {
      const reached = await realpath(names.slice(0, kept).join('/') || '/');
      return names.slice(kept).includes('..') ? undefined : reached;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
    }
  }
  return undefined;
}

/**
 * The first of the links unpacked into `folder` (paths as the archive names them) that the kernel resolves
 * outside it, or that cannot be resolved (a loop, or no link there at all); undefined when every one stays
 * inside.
 */
export async function linkLeavingFolder(
  folder: string,
  links: readonly string[],
): Promise<string | undefined> {
  const base = await realpath(folder);
  for (const link of links) {
    const reached = await whereLinkLeads(join(folder, ...namesOf(link)));
    if (reached === undefined) return link;
    const rel = relative(base, reached);
    if (rel.split(sep).includes('..')) return link;
  }
  return undefined;
}
