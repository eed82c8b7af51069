/**
 * The configuration version `runtask send` serves at `configuration_version_download_url`: a tiny `main.tf` by
 * default, the `.tar.gz` named by `--config-version` byte for byte, or, when it names a folder, that folder packed
 * into a `.tar.gz` as Terraform uploads one (files and folders only, `.git` and `.terraform` left out), so that
 * an integrator that reads the configuration (`runtask serve --with-configuration`) is rehearsed offline.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Stats } from 'node:fs';
import { create } from 'tar';
import { UsageError } from '../../errors.js';
import { defaultConfigurationVersion } from './defaults.js';

/** Top-level folders of a configuration that Terraform does not upload by default. */
const LEFT_OUT = new Set(['.git', '.terraform']);

function unreadable(full: string, error: unknown): UsageError {
  return new UsageError(
    `cannot read --config-version ${full}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    { hint: 'Give a .tar.gz of the configuration, or the folder holding it.' },
  );
}

/** A folder packed into a gzip-compressed tar archive, its paths relative to the folder. */
async function packFolder(folder: string): Promise<Buffer> {
  const names = (await readdir(folder)).filter((name) => !LEFT_OUT.has(name)).sort();
  const chunks: Buffer[] = [];
  const stream = create(
    {
      gzip: true,
      cwd: folder,
      portable: true,
      // Links are not archived: the platform's archive would not hold them either.
      filter: (_path, entry) => {
        const stats = entry as Stats;
        return stats.isFile() || stats.isDirectory();
      },
    },
    names,
  );
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
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
      return await packFolder(full);
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
