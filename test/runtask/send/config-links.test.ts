/**
 * `runtask send --config-version <folder>` packs the folder as Terraform uploads it (go-slug's `Pack`, links
 * dereferenced): a link whose target stays inside is kept as a link, one whose target is outside becomes what it
 * points at; the integrator unpacks that archive, link and all.
 */
import { mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { list, type ReadEntry } from 'tar';
import { describe, expect, it } from 'vitest';
import { configurationVersion } from '../../../src/runtask/send/configuration.js';
import { UnpackError, unpackConfiguration } from '../../../src/runtask/server/check/unpack.js';
import { tempDir } from '../../helpers/tmp.js';

/** The entries of a .tar.gz: path, type, link target, mode, and the bytes of files. */
function entriesOf(archive: string): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  list({
    file: archive,
    sync: true,
    onReadEntry: (entry: ReadEntry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () =>
        found.push({
          path: entry.path,
          type: entry.type,
          mode: (entry.mode ?? 0).toString(8),
          ...(entry.linkpath ? { linkpath: entry.linkpath } : {}),
          ...(entry.type === 'File' ? { content: Buffer.concat(chunks).toString('utf8') } : {}),
        }),
      );
    },
  });
  return found;
}

describe('runtask send --config-version <folder> with links', () => {
  it('keeps a link that stays inside, copies what one outside points at; the integrator unpacks it', async () => {
    const base = tempDir('links');
    const folder = join(base, 'configuration');
    const outside = join(base, 'outside');
    mkdirSync(join(folder, 'common'), { recursive: true });
    mkdirSync(join(outside, 'mods'), { recursive: true });
    writeFileSync(join(folder, 'common', 'providers.tf'), 'provider "random" {}\n');
    writeFileSync(join(folder, 'main.tf'), 'terraform {}\n');
    writeFileSync(join(outside, 'shared.tf'), '# shared\n');
    writeFileSync(join(outside, 'mods', 'x.tf'), '# x\n');
    symlinkSync('common/providers.tf', join(folder, 'providers.tf'));
    symlinkSync(join(outside, 'shared.tf'), join(folder, 'shared.tf'));
    symlinkSync('../outside/mods', join(folder, 'mods'));

    const archive = join(base, 'cv.tar.gz');
    writeFileSync(archive, await configurationVersion(folder, base, new Date(0), []));
    expect(entriesOf(archive)).toEqual([
      { path: 'common/', type: 'Directory', mode: '755' },
      { path: 'common/providers.tf', type: 'File', mode: '644', content: 'provider "random" {}\n' },
      { path: 'main.tf', type: 'File', mode: '644', content: 'terraform {}\n' },
      // A link to an outside folder: its entries under the link's name, no entry for the folder (as go-slug).
      { path: 'mods/x.tf', type: 'File', mode: '644', content: '# x\n' },
      { path: 'providers.tf', type: 'SymbolicLink', mode: '777', linkpath: 'common/providers.tf' },
      { path: 'shared.tf', type: 'File', mode: '644', content: '# shared\n' },
    ]);

    const unpacked = join(base, 'job', 'configuration');
    mkdirSync(unpacked, { recursive: true });
    await expect(unpackConfiguration(archive, unpacked)).resolves.toBe(6);
    expect(readlinkSync(join(unpacked, 'providers.tf'))).toBe('common/providers.tf');
    expect(readFileSync(join(unpacked, 'providers.tf'), 'utf8')).toBe('provider "random" {}\n');
    expect(readFileSync(join(unpacked, 'mods', 'x.tf'), 'utf8')).toBe('# x\n');
  });

  it('keeps an absolute link into the folder as go-slug packs it, warns, and the integrator refuses it', async () => {
    // go-slug's Pack keeps a link whose absolute target falls inside the folder, target as written; its Unpack
    // (the run's own, and the integrator's) refuses an absolute target: "has external target".
    const base = tempDir('absolute');
    const folder = join(base, 'configuration');
    mkdirSync(join(folder, 'common'), { recursive: true });
    writeFileSync(join(folder, 'common', 'providers.tf'), 'provider "random" {}\n');
    symlinkSync(join(folder, 'common', 'providers.tf'), join(folder, 'providers.tf'));
    const warnings: string[] = [];
    const archive = join(base, 'cv.tar.gz');
    writeFileSync(archive, await configurationVersion(folder, base, new Date(0), warnings));
    expect(entriesOf(archive)).toContainEqual({
      path: 'providers.tf',
      type: 'SymbolicLink',
      mode: '777',
      linkpath: join(folder, 'common', 'providers.tf'),
    });
    expect(warnings).toEqual([
      'the link providers.tf points to an absolute path: Terraform uploads it as it is, and unpacking refuses it (in the run, and in the integrator); make it relative (common/providers.tf)',
    ]);
    const unpacked = join(base, 'job', 'configuration');
    mkdirSync(unpacked, { recursive: true });
    const error = await unpackConfiguration(archive, unpacked).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnpackError);
    expect((error as UnpackError).entry).toBe('providers.tf');
    expect((error as Error).message).toContain('an absolute path: only links that stay inside the folder');
  });

  it('says which link points at nothing outside the folder (Terraform cannot upload it either)', async () => {
    const folder = tempDir('dangling');
    writeFileSync(join(folder, 'main.tf'), 'terraform {}\n');
    symlinkSync('../gone/shared.tf', join(folder, 'shared.tf'));
    await expect(configurationVersion(folder, folder, new Date(0), [])).rejects.toThrow(
      'cannot pack --config-version: the link shared.tf points to ../gone/shared.tf, which does not exist',
    );
  });
});
