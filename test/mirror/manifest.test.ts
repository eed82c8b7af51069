/**
 * `provider mirror --manifest`: the file's entries select versions (constraints, `latest: N`) and platforms per
 * provider, its `from:` names the origin (the flag wins), and every bad manifest is refused with exit 2 naming the
 * file and line, before any request.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { readManifest } from '../../src/mirror/manifest.js';
import { runCli } from '../helpers/cli.js';
import { tempRoot } from '../helpers/tmp.js';
import { buildRelease, hostDir, startOrigin } from './origin.js';

const LIST = ['1.0.0', '1.2.0', '1.2.9', '1.3.0', '2.0.0-rc1', '2.0.0', '2.1.0'];

/** Writes `text` as a manifest in a new folder; returns its path. */
function manifest(text: string): string {
  const file = path.join(tempRoot(), 'mirror.yaml');
  fs.writeFileSync(file, text);
  return file;
}

describe('reading a manifest', () => {
  it('gives each provider its own versions, newest N, and platforms (a list or a comma string)', async () => {
    const file = manifest(
      [
        'from: registry.opentofu.org',
        'providers:',
        '  - source: hashicorp/aws',
        '    versions: "~> 1.2"',
        '    latest: 2',
        '    platforms: [linux_amd64, darwin_arm64]',
        '  - source: HashiCorp/Random',
        '    platforms: linux_arm64,linux_amd64',
        '  - source: acme/tls',
        '    latest: 3',
        '',
      ].join('\n'),
    );
    const read = await readManifest(file, 'mirror.yaml');
    expect(read.from).toBe('registry.opentofu.org');
    expect(
      read.targets.map((t) => [
        `${t.provider.namespace}/${t.provider.type}`,
        t.select(LIST),
        t.platforms?.map((p) => `${p.os}_${p.arch}`),
      ]),
    ).toEqual([
      ['hashicorp/aws', ['1.2.9', '1.3.0'], ['darwin_arm64', 'linux_amd64']],
      ['hashicorp/random', ['2.1.0'], ['linux_amd64', 'linux_arm64']],
      ['acme/tls', ['1.3.0', '2.0.0', '2.1.0'], undefined],
    ]);
  });

  it.each([
    ['not YAML', 'providers:\n  - source: [a\n', /^mirror\.yaml:\d+: not valid YAML/],
    ['no providers', 'from: x\n', /^mirror\.yaml:1: .*at providers|^mirror\.yaml:1: /],
    ['a key it does not know', 'providers:\n  - source: a/b\n    version: "1.0"\n', /^mirror\.yaml:2: /],
    [
      'latest: 0',
      'providers:\n  - source: a/b\n\n  - source: c/d\n    latest: 0\n',
      /^mirror\.yaml:5: .*latest/,
    ],
    [
      'a bad constraint',
      'providers:\n  - source: a/b\n  - source: c/d\n    versions: newest\n',
      /^mirror\.yaml:3: versions/,
    ],
    [
      'a bad platform',
      'providers:\n  - source: a/b\n    platforms: [linux]\n',
      /^mirror\.yaml:2: platforms: "linux"/,
    ],
    [
      'a bad source',
      'providers:\n  - source: registry.terraform.io/a/b\n',
      /^mirror\.yaml:2: .*not a provider address/,
    ],
    [
      'a provider twice',
      'providers:\n  - source: a/b\n  - source: A/b\n',
      /^mirror\.yaml: a\/b is listed twice/,
    ],
    [
      'an alias bomb',
      [
        'providers:',
        '  - source: a/b',
        '    platforms: &a [linux_amd64, linux_amd64, linux_amd64, linux_amd64, linux_amd64, linux_amd64]',
        '  - source: c/d',
        '    platforms: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
        '  - source: e/f',
        '    platforms: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
        '  - source: g/h',
        '    platforms: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
        '',
      ].join('\n'),
      /^mirror\.yaml:5: its aliases stand for more than 100 nodes \(an alias bomb\?\)$/,
    ],
    [
      'an unknown tag',
      'providers:\n  - source: a/b\n  - source: !!js/function c/d\n',
      /^mirror\.yaml:3: .*js\/function/,
    ],
  ])('refuses %s, naming the line', async (_what, text, message) => {
    const error = await readManifest(manifest(text), 'mirror.yaml').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(message);
  });
});

describe('a manifest that is not a small regular file', () => {
  it('is refused unread: over 1 MiB, or a folder', async () => {
    const big = manifest(`providers:\n  - source: a/b\n${'#'.repeat(1024 * 1024)}\n`);
    for (const file of [big, path.dirname(big)]) {
      const error = await readManifest(file, 'mirror.yaml').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).message).toMatch(/^--manifest mirror\.yaml cannot be read \(/);
    }
  });
});

describe('provider mirror --manifest', () => {
  it("mirrors each entry's selection from the manifest's origin", async () => {
    const all = ['darwin_arm64', 'linux_amd64', 'windows_amd64'];
    const origin = await startOrigin(
      await Promise.all(['1.0.0', '1.2.0', '1.2.5', '2.0.0'].map((v) => buildRelease(v, all))),
    );
    const cwd = tempRoot();
    const text = `from: ${origin.url}\nproviders:\n  - source: acme/example\n    versions: "< 2.0"\n    latest: 2\n    platforms: [linux_amd64]\n`;
    fs.writeFileSync(path.join(cwd, 'mirror.yaml'), text);
    const result = await runCli(['mirror', '--manifest', 'mirror.yaml', '--to-dir', 'out', '--json'], {
      cwd,
      homeDir: cwd,
      env: { NO_COLOR: '1' },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as {
      providers: { versions: { version: string; status: string; platforms: string[] }[] }[];
    };
    expect(doc.providers[0]!.versions.map((v) => [v.version, v.status, v.platforms])).toEqual([
      ['1.2.0', 'mirrored', ['linux_amd64']],
      ['1.2.5', 'mirrored', ['linux_amd64']],
    ]);
    const folder = path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example', '1.2.5');
    expect(fs.readdirSync(folder).filter((f) => f.endsWith('.zip'))).toEqual([
      'terraform-provider-example_1.2.5_linux_amd64.zip',
    ]);
  });

  it('refuses provider arguments or --versions beside it (exit 2), before any request', async () => {
    const origin = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const cwd = tempRoot();
    fs.writeFileSync(path.join(cwd, 'mirror.yaml'), `providers:\n  - source: acme/example\n`);
    for (const extra of [['acme/example'], ['--versions', '1.0.0'], ['--platforms', 'linux_amd64']]) {
      const result = await runCli(
        ['mirror', '--manifest', 'mirror.yaml', '--from', origin.url, '--to-dir', 'out', ...extra],
        { cwd, homeDir: cwd, env: { NO_COLOR: '1' } },
      );
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('--manifest names the providers');
    }
    expect(origin.requests).toEqual([]);
    expect(fs.existsSync(path.join(cwd, 'out'))).toBe(false);
  });

  it('a manifest that cannot be read is exit 2, naming it', async () => {
    const cwd = tempRoot();
    const result = await runCli(['mirror', '--manifest', 'nowhere.yaml', '--to-dir', 'out'], {
      cwd,
      homeDir: cwd,
      env: { NO_COLOR: '1' },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--manifest nowhere.yaml cannot be read (ENOENT)');
  });
});
