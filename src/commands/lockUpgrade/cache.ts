/**
 * The hashes `provider lock upgrade` computed, kept across runs so that a version hashed once is never downloaded
 * again: one file per signed SHA256SUMS, named by its SHA-256, holding each zip's `h1:` by file name. An entry is
 * only a time saver, never trusted beyond what it is keyed by: a version whose SHA256SUMS differs (other bytes,
 * another signature's list) has another key, and the `zh:` hashes always come from the SHA256SUMS just verified.
 * A damaged file is ignored (and replaced); a cache that cannot be written is a warning.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { writeFileAtomically } from '../../atomicWrite.js';

/** The hashes kept for the versions whose SHA256SUMS hash to a key. */
export interface HashCache {
  /** Where it is, for messages. */
  dir: string;
  /** Each zip's `h1:` by file name, or undefined when none is kept (or the file is damaged). */
  get(sums: string): Promise<Record<string, string> | undefined>;
  /** Keeps them; false when the file could not be written. */
  set(sums: string, h1: Record<string, string>): Promise<boolean>;
}

const SHA256 = /^[0-9a-f]{64}$/;
const H1 = /^h1:[A-Za-z0-9+/]{43}=$/;

/** The default folder: the user's cache folder, as each system names it, then `provider/lock-hashes`. */
export function defaultCacheDir(
  env: Record<string, string | undefined>,
  home: string,
  platform = process.platform,
): string {
  const base =
    env.XDG_CACHE_HOME?.trim() ||
    (platform === 'darwin'
      ? path.join(home, 'Library', 'Caches')
      : platform === 'win32'
        ? (env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'))
        : path.join(home, '.cache'));
  return path.join(base, 'provider', 'lock-hashes');
}

/** The cache in `dir` (made when first written). */
export function openHashCache(dir: string): HashCache {
  const file = (sums: string): string => {
    if (!SHA256.test(sums)) throw new Error(`not a SHA-256: ${sums} (internal error)`);
    return path.join(dir, `${sums}.json`);
  };
  return {
    dir,
    async get(sums) {
      const text = await fs.readFile(file(sums), 'utf8').catch(() => undefined);
      if (text === undefined) return undefined;
      try {
        const doc = JSON.parse(text) as { shasums?: unknown; h1?: unknown };
        if (doc.shasums !== sums || typeof doc.h1 !== 'object' || doc.h1 === null) return undefined;
        const entries = Object.entries(doc.h1 as Record<string, unknown>);
        if (!entries.every(([, h1]) => typeof h1 === 'string' && H1.test(h1))) return undefined;
        // No prototype: a zip named like an Object property ("constructor") finds nothing it was not given.
        return Object.assign(Object.create(null) as Record<string, string>, Object.fromEntries(entries));
      } catch {
        return undefined;
      }
    },
    async set(sums, h1) {
      try {
        await fs.mkdir(dir, { recursive: true });
        writeFileAtomically(file(sums), `${JSON.stringify({ shasums: sums, h1 }, null, 2)}\n`);
        return true;
      } catch {
        return false;
      }
    },
  };
}
