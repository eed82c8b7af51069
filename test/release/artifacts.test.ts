/**
 * The fixture's `artifacts.json` is shaped like goreleaser's (1.13 and later): third-party publishers read it,
 * and one crashed half-way through a publish of ours because the archives had no `extra.Checksum`. Every
 * archive must carry `sha256:<hex>` equal to its SHA256SUMS line, and every listed path must exist.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, SUMS } from './helpers.js';
import { anyString } from '../helpers/matchers.js';

interface Artifact {
  name: string;
  path: string;
  goos?: string;
  goarch?: string;
  goamd64?: string;
  internal_type: number;
  type: string;
  extra?: Record<string, unknown>;
}

const RELEASE = path.join(FIXTURES, 'release');
const artifacts = JSON.parse(fs.readFileSync(path.join(RELEASE, 'artifacts.json'), 'utf8')) as Artifact[];
const sums = new Map(
  fs
    .readFileSync(path.join(RELEASE, SUMS), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => {
      const [hex, name] = line.split('  ');
      return [name!, hex!] as const;
    }),
);
const archives = artifacts.filter((a) => a.type === 'Archive');
/** goreleaser writes paths relative to the project, under its dist folder (our fixtures/release). */
const onDisk = (a: Artifact): string => path.join(RELEASE, path.relative('dist', a.path));

describe("the fixture's artifacts.json", () => {
  it('lists every platform archive of SHA256SUMS', () => {
    const zips = [...sums.keys()].filter((n) => n.endsWith('.zip')).sort();
    expect(archives.map((a) => a.name).sort()).toEqual(zips);
  });

  it.each(archives.map((a) => [a.name, a] as const))(
    '%s: extra.Checksum is sha256: and its SHA256SUMS value',
    (name, archive) => {
      expect(archive.extra?.['Checksum']).toBe(`sha256:${sums.get(name)}`);
    },
  );

  it.each(archives.map((a) => [a.name, a] as const))(
    '%s: the archive exists where the path says, with goreleaser’s archive fields',
    (name, archive) => {
      expect(fs.statSync(onDisk(archive)).isFile()).toBe(true);
      expect(path.basename(archive.path)).toBe(name);
      expect(archive).toMatchObject({
        internal_type: 1,
        goos: anyString(),
        goarch: anyString(),
      });
      expect(archive.extra).toMatchObject({ Format: 'zip', ID: 'default', WrappedIn: '' });
      expect(archive.extra?.['Binaries']).toEqual([
        `terraform-provider-example_v1.2.3${archive.goos === 'windows' ? '.exe' : ''}`,
      ]);
      // goreleaser sets goamd64 on amd64 builds only.
      expect(archive.goamd64).toBe(archive.goarch === 'amd64' ? 'v1' : undefined);
    },
  );

  it('every listed file exists', () => {
    for (const artifact of artifacts) expect(fs.existsSync(onDisk(artifact)), artifact.path).toBe(true);
  });
});
