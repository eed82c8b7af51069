/**
 * `provider mirror --to-dir` against a loopback origin (./origin.ts): versions chosen by constraint, a platform
 * subset copied byte for byte, a second run that writes nothing, a dry run that names the plan, and a hostile
 * origin (a zip other than the signed one, a shasum other than the signed line, no keys) stopping that version
 * with exit 3 and nothing of it written; a rate-limited origin is waited out.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRoot } from '../helpers/tmp.js';
import {
  buildRelease,
  hostDir,
  type OriginRelease,
  SIGNER_ARMOR,
  SIGNER_KEY_ID,
  startOrigin,
} from './origin.js';

const ALL = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'windows_amd64'];

async function releases(): Promise<OriginRelease[]> {
  return Promise.all(
    ['1.0.0', '1.2.0', '1.2.5', '2.0.0', '2.1.0-beta1'].map((v) =>
      buildRelease(v, ALL, v === '1.0.0' ? ['5.0'] : ['6.0']),
    ),
  );
}

async function mirror(url: string, cwd: string, ...args: string[]) {
  const result = await runCli(['mirror', 'acme/example', '--from', url, '--to-dir', 'out', ...args], {
    cwd,
    homeDir: cwd,
    env: { NO_COLOR: '1' },
  });
  return result;
}

/** Every file under `dir` with its size, inode and modification time: a write of any kind changes it. */
function snapshot(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => {
      const full = path.join(e.parentPath, e.name);
      const s = fs.statSync(full);
      return `${path.relative(dir, full)} ${s.size} ${s.ino} ${s.mtimeMs}`;
    })
    .sort();
}

function jsonOf(stdout: string): {
  providers: {
    source: string;
    versions: {
      version: string;
      status: string;
      platforms: string[];
      origin: Record<string, unknown> | null;
    }[];
  }[];
  summary: Record<string, number>;
} {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as ReturnType<typeof jsonOf>;
}

describe('provider mirror --to-dir', () => {
  it('copies the versions a constraint selects and only the platforms asked for, byte for byte', async () => {
    const origin = await startOrigin(await releases());
    const cwd = tempRoot();
    const result = await mirror(
      origin.url,
      cwd,
      '--versions',
      '~> 1.2',
      '--platforms',
      'linux_amd64,darwin_arm64',
      '--json',
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const doc = jsonOf(result.stdout);
    const versions = doc.providers[0]!.versions;
    expect(versions.map((v) => [v.version, v.status, v.platforms])).toEqual([
      ['1.2.0', 'mirrored', ['darwin_arm64', 'linux_amd64']],
      ['1.2.5', 'mirrored', ['darwin_arm64', 'linux_amd64']],
    ]);
    expect(versions[0]!.origin).toMatchObject({
      keyId: SIGNER_KEY_ID,
      keySource: 'Acme',
      trustSignature: '',
    });
    expect(fs.readdirSync(path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example')).sort()).toEqual([
      '1.2.0',
      '1.2.5',
    ]);
    for (const release of origin.releases.filter((r) => r.version.startsWith('1.2'))) {
      const dir = path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example', release.version);
      const base = `terraform-provider-example_${release.version}`;
      expect(fs.readdirSync(dir).sort()).toEqual(
        [
          `${base}_SHA256SUMS`,
          `${base}_SHA256SUMS.sig`,
          `${base}_darwin_arm64.zip`,
          `${base}_linux_amd64.zip`,
          `${base}_mirror.json`,
          `${base}_signing-key.asc`,
        ].sort(),
      );
      expect(fs.readFileSync(path.join(dir, `${base}_SHA256SUMS`)).equals(release.sums)).toBe(true);
      expect(fs.readFileSync(path.join(dir, `${base}_SHA256SUMS.sig`)).equals(release.sig)).toBe(true);
      for (const p of ['darwin_arm64', 'linux_amd64']) {
        const name = `${base}_${p}.zip`;
        expect(fs.readFileSync(path.join(dir, name)).equals(release.zips.get(name)!)).toBe(true);
      }
      expect(fs.readFileSync(path.join(dir, `${base}_signing-key.asc`), 'utf8')).toBe(SIGNER_ARMOR);
      const record = JSON.parse(fs.readFileSync(path.join(dir, `${base}_mirror.json`), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(record).toMatchObject({ version: 1, metadata: { protocol_versions: ['6.0'] } });
    }
    // The folders are releases `verify` takes as they are, with the key they carry (no --key, no registry).
    const verify = await runCli(
      ['verify', path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example', '1.2.5'), '--offline'],
      {
        cwd,
        homeDir: cwd,
      },
    );
    expect(verify.exitCode, verify.stderr).toBe(0);
  });

  it('a second run writes nothing and downloads no zip', async () => {
    const origin = await startOrigin(await releases());
    const cwd = tempRoot();
    const first = await mirror(
      origin.url,
      cwd,
      '--versions',
      '>= 1.2.0, < 2.0.0',
      '--platforms',
      'linux_amd64',
    );
    expect(first.exitCode, first.stderr).toBe(0);
    const before = snapshot(path.join(cwd, 'out'));
    origin.requests.length = 0;
    const second = await mirror(
      origin.url,
      cwd,
      '--versions',
      '>= 1.2.0, < 2.0.0',
      '--platforms',
      'linux_amd64',
      '--json',
    );
    expect(second.exitCode, second.stderr).toBe(0);
    expect(snapshot(path.join(cwd, 'out'))).toEqual(before);
    expect(jsonOf(second.stdout).summary).toMatchObject({ present: 2, mirrored: 0 });
    // Compared with what the origin serves now (its documents and signed list), no zip downloaded.
    expect(origin.requests.filter((r) => r.endsWith('.zip'))).toEqual([]);
    expect(origin.requests.filter((r) => r.includes('/download/'))).toHaveLength(2);
  });

  it('the latest release by default; --dry-run names the plan and writes nothing', async () => {
    const origin = await startOrigin(await releases());
    const cwd = tempRoot();
    const result = await mirror(origin.url, cwd, '--dry-run', '--platforms', 'linux_amd64,freebsd_arm64');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('2.0.0  would be mirrored (dry run: nothing written)  linux_amd64');
    expect(result.stdout).toContain('(not available: freebsd_arm64)');
    expect(result.stdout).not.toContain('2.1.0-beta1');
    expect(fs.existsSync(path.join(cwd, 'out'))).toBe(false);
    expect(origin.requests.filter((r) => r.includes('/files/') || r.includes('/download/'))).toEqual([]);
  });

  it.each([
    [
      'a zip other than the signed one',
      { tamperedZip: '1.2.5 linux_amd64' },
      /linux_amd64\.zip from 127\.0\.0\.1:\d+ hashes to/,
    ],
    ['a shasum other than the signed line', { wrongShasum: '1.2.5 linux_amd64' }, /states shasum 0{64}/],
  ])('%s stops that version with exit 3 and writes nothing of it', async (_what, faults, message) => {
    const origin = await startOrigin(await releases(), faults);
    const cwd = tempRoot();
    const result = await mirror(
      origin.url,
      cwd,
      '--versions',
      '~> 1.2',
      '--platforms',
      'linux_amd64,darwin_arm64',
    );
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('acme/example 1.2.5');
    // The other version is there; of 1.2.5 nothing, not even a temporary folder.
    expect(fs.readdirSync(path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example'))).toEqual(['1.2.0']);
    expect(fs.readdirSync(path.join(cwd, 'out'))).toEqual([hostDir(origin.url)]);
  });

  it.each([
    [
      'a filename that climbs out of the folder',
      { climbingFilename: '1.2.5 linux_amd64' },
      /names the file "\.\.\/\.\.\/terraform-provider-example_1\.2\.5_linux_amd64\.zip"/,
    ],
    [
      'another SHA256SUMS for one platform',
      { otherSums: '1.2.5 linux_amd64' },
      /serves another SHA256SUMS or signature for linux_amd64 than for darwin_arm64/,
    ],
    [
      'a signature named for HashiCorp’s key, made by another',
      { hashicorpSigName: true },
      /named for key 72D7468F \(34365D9472D7468F\), but key [0-9A-F]{16} made it/,
    ],
    [
      'no platform served of those listed',
      { unserved: '1.2.5 linux_amd64' },
      /serves none of the platforms asked for \(linux_amd64\)/,
    ],
  ])('%s stops the version with exit 3 before any zip is fetched', async (_what, faults, message) => {
    const origin = await startOrigin(await releases(), faults);
    const cwd = tempRoot();
    const platforms = 'unserved' in faults ? 'linux_amd64' : 'linux_amd64,darwin_arm64';
    const result = await mirror(origin.url, cwd, '--versions', '1.2.5', '--platforms', platforms);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(message);
    expect(snapshot(cwd).filter((f) => !f.startsWith('go.mod'))).toEqual([]);
    expect(origin.requests.filter((r) => r.endsWith('.zip'))).toEqual([]);
  });

  it('an origin that serves no signing key stops the version with exit 3, nothing written', async () => {
    const origin = await startOrigin(await releases(), { noKeys: true });
    const cwd = tempRoot();
    const result = await mirror(origin.url, cwd, '--json');
    expect(result.exitCode).toBe(3);
    const error = JSON.parse(result.stdout.trim()) as {
      error: {
        code: string;
        details: { report: { providers: { versions: { error: { message: string } }[] }[] } };
      };
    };
    expect(error.error.code).toBe('verification');
    expect(error.error.details.report.providers[0]!.versions[0]!.error.message).toContain(
      'serves no signing key',
    );
    expect(snapshot(path.join(cwd, 'out')).filter((f) => !f.startsWith('.'))).toEqual([]);
    expect(origin.requests.filter((r) => r.includes('/files/'))).toEqual([]);
  });

  it('a host that does not offer the provider registry protocol is an API problem (exit 4), nothing written', async () => {
    const origin = await startOrigin(await releases(), { noProviders: true });
    const cwd = tempRoot();
    const result = await mirror(origin.url, cwd);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toMatch(
      /127\.0\.0\.1:\d+ does not offer the provider registry protocol \(no providers\.v1\)/,
    );
    expect(fs.existsSync(path.join(cwd, 'out'))).toBe(false);
  });

  it('a provider the origin does not have fails alone (exit 4); the others are mirrored', async () => {
    const origin = await startOrigin(await releases());
    const cwd = tempRoot();
    const result = await runCli(
      [
        'mirror',
        'acme/missing',
        'acme/example',
        '--from',
        origin.url,
        '--to-dir',
        'out',
        '--platforms',
        'linux_amd64',
      ],
      { cwd, homeDir: cwd, env: { NO_COLOR: '1' } },
    );
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toMatch(
      /acme\/missing → \S+\n {2}FAILED: acme\/missing is not on 127\.0\.0\.1:\d+/,
    );
    expect(result.stderr).toMatch(
      /One failed and nothing of it was written: 127\.0\.0\.1:\d+\/acme\/missing/,
    );
    expect(fs.readdirSync(path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example'))).toEqual(['2.0.0']);
  });

  it('a rate-limited origin is waited out (429 with Retry-After), with absolute discovery', async () => {
    const origin = await startOrigin([await buildRelease('1.2.0', ['linux_amd64'])], {
      rateLimited: 2,
      absoluteDiscovery: true,
    });
    const cwd = tempRoot();
    const result = await mirror(origin.url, cwd);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(origin.limited).toBe(2);
    expect(result.stderr).toMatch(/answered status 429 to service discovery: waiting 1 s/);
    expect(fs.readdirSync(path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example'))).toEqual(['1.2.0']);
  }, 30_000);
});
