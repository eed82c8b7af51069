import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError, VerificationError } from '../../src/errors.js';
import { parseReleaseFileName } from '../../src/release/filenames.js';
import { readLayout } from '../../src/release/layout.js';
import { normalizeVersion, parseVersionFlag } from '../../src/release/version.js';
import { MANIFEST, SIG, SUMS, copyRelease, zipName } from './helpers.js';
import { tempRoot } from '../helpers/tmp.js';

describe('parseReleaseFileName', () => {
  it.each([
    [
      'terraform-provider-example_1.2.3_linux_amd64.zip',
      { kind: 'platform', name: 'example', version: '1.2.3', os: 'linux', arch: 'amd64' },
    ],
    [
      'terraform-provider-my-cloud_2.0.0-rc.1_darwin_arm64.zip',
      { kind: 'platform', name: 'my-cloud', version: '2.0.0-rc.1', os: 'darwin', arch: 'arm64' },
    ],
    ['terraform-provider-example_1.2.3_SHA256SUMS', { kind: 'shasums', name: 'example', version: '1.2.3' }],
    [
      'terraform-provider-example_1.2.3_SHA256SUMS.sig',
      { kind: 'signature', name: 'example', version: '1.2.3' },
    ],
    [
      'terraform-provider-example_1.2.3_manifest.json',
      { kind: 'manifest', name: 'example', version: '1.2.3' },
    ],
    [
      'terraform-provider-example_1.2.3_linux_amd64_v1.zip',
      { kind: 'odd-zip', name: 'example', version: '1.2.3' },
    ],
  ])('%s', (name, expected) => {
    expect(parseReleaseFileName(name)).toEqual(expected);
  });

  it.each([
    'artifacts.json',
    'metadata.json',
    'terraform-provider-example_v1.2.3',
    'terraform-provider-example_1.2.3_SHA256SUMS.asc',
    'docs.zip',
  ])('ignores %s', (name) => expect(parseReleaseFileName(name)).toBeUndefined());
});

describe('versions', () => {
  it.each([
    ['1.2.3', '1.2.3'],
    ['v1.2.3', '1.2.3'],
    ['1.0.0-beta.1+build.5', '1.0.0-beta.1+build.5'],
    ['1.2', undefined],
    ['01.2.3', undefined],
    ['vv1.2.3', undefined],
    ['1.2.3-', undefined],
  ])('normalizeVersion(%s) = %s', (input, expected) => {
    expect(normalizeVersion(input)).toBe(expected);
  });

  it('refuses a --version that is not semver with a UsageError', () => {
    expect(parseVersionFlag(' v2.0.0 ')).toBe('2.0.0');
    expect(() => parseVersionFlag('latest')).toThrow(UsageError);
  });
});

describe('readLayout', () => {
  it('finds the fixture release and ignores goreleaser bookkeeping', async () => {
    const dist = copyRelease();
    const layout = await readLayout(dist, {});
    expect(layout).toMatchObject({
      dir: dist,
      name: 'example',
      version: '1.2.3',
      shasums: SUMS,
      signature: SIG,
      manifest: MANIFEST,
    });
    expect(layout.platforms.map((p) => `${p.os}_${p.arch}`)).toEqual([
      'darwin_amd64',
      'darwin_arm64',
      'linux_amd64',
      'linux_arm64',
      'windows_amd64',
    ]);
    expect(layout.warnings).toEqual([]);
  });

  it('picks one of several versions with --version (v dropped) and names the choices otherwise', async () => {
    const dist = copyRelease();
    fs.copyFileSync(
      path.join(dist, zipName('linux_amd64')),
      path.join(dist, 'terraform-provider-example_1.3.0_linux_amd64.zip'),
    );
    await expect(readLayout(dist, {})).rejects.toThrow(/several versions: 1\.2\.3, 1\.3\.0/);
    expect((await readLayout(dist, { version: '1.2.3' })).version).toBe('1.2.3');
    await expect(readLayout(dist, { version: '9.9.9' })).rejects.toThrow(/No files of version 9\.9\.9/);
  });

  it('accepts a v in the file names and drops it from the version', async () => {
    const root = tempRoot();
    for (const f of ['_SHA256SUMS', '_SHA256SUMS.sig', '_linux_amd64.zip']) {
      fs.writeFileSync(path.join(root, `terraform-provider-example_v1.0.0${f}`), 'x');
    }
    const layout = await readLayout(root, {});
    expect(layout.version).toBe('1.0.0');
    expect(layout.shasums).toBe('terraform-provider-example_v1.0.0_SHA256SUMS');
  });

  it('warns about an unusual but known platform', async () => {
    const dist = copyRelease();
    fs.renameSync(path.join(dist, zipName('linux_arm64')), path.join(dist, zipName('plan9_amd64')));
    const layout = await readLayout(dist, {});
    expect(layout.warnings).toEqual([expect.stringContaining('plan9_amd64 is an unusual platform')]);
  });

  it('names an unknown architecture of a known os', async () => {
    const dist = copyRelease();
    fs.renameSync(path.join(dist, zipName('linux_arm64')), path.join(dist, zipName('linux_arm65')));
    const error = await readLayout(dist, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VerificationError);
    expect((error as Error).message).toContain('unknown architecture "arm65" for linux');
  });

  it('tells a missing .sig from an armored .asc next to it', async () => {
    const dist = copyRelease();
    fs.renameSync(path.join(dist, SIG), path.join(dist, `${SUMS}.asc`));
    const error = (await readLayout(dist, {}).catch((e: unknown) => e)) as VerificationError;
    expect(error.message).toContain(`${SIG} is missing`);
    expect(error.hint).toContain(`Found ${SUMS}.asc instead`);
  });

  it('refuses a folder without platform archives', async () => {
    const root = tempRoot();
    fs.writeFileSync(path.join(root, SUMS), '');
    fs.writeFileSync(path.join(root, SIG), '');
    await expect(readLayout(root, {})).rejects.toThrow(/holds no platform archive/);
  });

  it('treats a file given as the folder as a usage error', async () => {
    const dist = copyRelease();
    await expect(readLayout(path.join(dist, SUMS), {})).rejects.toThrow(/is not a folder/);
  });
});
