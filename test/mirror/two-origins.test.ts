/**
 * Two origins serving one address (`acme/example 1.0.0`): their copies never pass for each other. Under
 * `--to-dir` each origin's copies live under its host (`<host>/<namespace>/<type>/<version>`), and a folder
 * holding another origin's copy is a conflict (exit 5), kept; so is a folder whose origin now serves the version
 * with other zips or another signer. Into a private registry a version is "already there" only with the same
 * zips signed by the key that signed the origin's SHA256SUMS (not merely a key it serves, nor the id it states):
 * the same zips signed by another key are a conflict (exit 5), and an origin that serves no key is exit 3;
 * nothing is written either way.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { FAST, writeRequests } from '../commands/publish/helpers.js';
import { buildRelease, hostDir, resign, startOrigin, type OriginRelease, type TestOrigin } from './origin.js';

const emulator = emulatorPerTest();
const KEY = (name: string): string =>
  fs.readFileSync(new URL(`../../fixtures/keys/${name}.pub.asc`, import.meta.url), 'utf8');

async function toDir(o: TestOrigin, cwd: string) {
  return runCli(['mirror', 'acme/example', '--from', o.url, '--to-dir', 'out', '--json'], {
    cwd,
    homeDir: cwd,
    env: FAST,
  });
}

function registryRun(
  e: Awaited<ReturnType<ReturnType<typeof emulatorPerTest>>>,
  o: TestOrigin,
  cwd: string,
  ...extra: string[]
) {
  return runCli(
    [
      'mirror',
      'acme/example',
      '--from',
      o.url,
      '--hostname',
      e.url,
      '--organization',
      e.organization,
      ...extra,
    ],
    { cwd, homeDir: cwd, env: { TFE_TOKEN: e.ownerToken, ...FAST } },
  );
}

function statuses(stdout: string): string[] {
  const doc = JSON.parse(stdout) as { providers: { versions: { status: string }[] }[] };
  return doc.providers[0]!.versions.map((v) => v.status);
}

describe('provider mirror: two origins, one address', () => {
  it('--to-dir keeps each origin’s copy under its host: the second is mirrored, not "already there"', async () => {
    const a = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const b = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'], ['6.0'], 'other')]);
    const cwd = tempRoot();
    const first = await toDir(a, cwd);
    expect(first.exitCode, first.stderr).toBe(0);
    const second = await toDir(b, cwd);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(statuses(second.stdout)).toEqual(['mirrored']);
    const folder = (o: TestOrigin): string =>
      path.join(cwd, 'out', hostDir(o.url), 'acme', 'example', '1.0.0');
    const key = 'terraform-provider-example_1.0.0_signing-key.asc';
    const zip = 'terraform-provider-example_1.0.0_linux_amd64.zip';
    expect(fs.readFileSync(path.join(folder(a), key), 'utf8')).toBe(KEY('signer'));
    expect(fs.readFileSync(path.join(folder(b), key), 'utf8')).toBe(KEY('other'));
    expect(fs.readFileSync(path.join(folder(a), zip)).equals(a.releases[0]!.zips.get(zip)!)).toBe(true);
    expect(fs.readFileSync(path.join(folder(b), zip)).equals(b.releases[0]!.zips.get(zip)!)).toBe(true);
    // Each again: already there, each its own.
    expect(statuses((await toDir(a, cwd)).stdout)).toEqual(['present']);
    expect(statuses((await toDir(b, cwd)).stdout)).toEqual(['present']);
  });

  it('--to-dir: a folder holding another origin’s copy is a conflict (exit 5), and is kept', async () => {
    const a = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const b = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'], ['6.0'], 'other')]);
    const cwd = tempRoot();
    expect((await toDir(a, cwd)).exitCode).toBe(0);
    const moved = path.join(cwd, 'out', hostDir(b.url), 'acme', 'example');
    fs.mkdirSync(moved, { recursive: true });
    fs.renameSync(
      path.join(cwd, 'out', hostDir(a.url), 'acme', 'example', '1.0.0'),
      path.join(moved, '1.0.0'),
    );
    const before = fs.readdirSync(path.join(moved, '1.0.0')).sort();
    const result = await toDir(b, cwd);
    expect(result.exitCode, result.stderr).toBe(5);
    expect(result.stdout).toMatch(
      /1\.0\.0 holds 127\.0\.0\.1:\d+\/acme\/example 1\.0\.0, not 127\.0\.0\.1:\d+\/acme\/example's/,
    );
    expect(fs.readdirSync(path.join(moved, '1.0.0')).sort()).toEqual(before);
    expect(b.requests.filter((r) => r.includes('/files/'))).toEqual([]);
  });

  it.each([
    [
      'the same zips re-signed by another key',
      (r: OriginRelease) => resign(r, 'other'),
      /is signed with key [0-9A-F]{16}; 127\.0\.0\.1:\d+ now signs it with key [0-9A-F]{16}/,
    ],
    [
      'other zips signed by another key',
      () => buildRelease('1.0.0', ['linux_amd64'], ['6.0'], 'other'),
      /holds terraform-provider-example_1\.0\.0_linux_amd64\.zip with sha256 [0-9a-f]{64}; 127\.0\.0\.1:\d+ now serves/,
    ],
  ])(
    '--to-dir: the same origin now serving %s is a conflict (exit 5), the folder kept',
    async (_, next, message) => {
      const a = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
      const cwd = tempRoot();
      expect((await toDir(a, cwd)).exitCode).toBe(0);
      const folder = path.join(cwd, 'out', hostDir(a.url), 'acme', 'example', '1.0.0');
      const before = fs.readdirSync(folder).map((f) => [f, fs.readFileSync(path.join(folder, f), 'hex')]);
      a.releases[0] = await next(a.releases[0]!);
      a.requests.length = 0;
      const result = await toDir(a, cwd);
      expect(result.exitCode, result.stderr).toBe(5);
      expect((JSON.parse(result.stdout) as { error: { code: string } }).error.code).toBe('conflict');
      expect(result.stdout).toMatch(message);
      expect(fs.readdirSync(folder).map((f) => [f, fs.readFileSync(path.join(folder, f), 'hex')])).toEqual(
        before,
      );
      expect(a.requests.filter((r) => r.endsWith('.zip'))).toEqual([]);
    },
  );

  it('--to-dir: the same origin serving the same zips and key again is "present", no zip downloaded', async () => {
    const a = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])], { extraKeys: ['other'] });
    const cwd = tempRoot();
    expect((await toDir(a, cwd)).exitCode).toBe(0);
    a.requests.length = 0;
    const again = await toDir(a, cwd);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(statuses(again.stdout)).toEqual(['present']);
    expect(a.requests.filter((r) => r.endsWith('.zip'))).toEqual([]);
  });

  it('into a registry: the same zips signed by another key are a conflict (exit 5), nothing written', async () => {
    const release = await buildRelease('1.0.0', ['linux_amd64']);
    const a = await startOrigin([release]);
    const b = await startOrigin([await resign(release, 'other')]);
    const e = await emulator();
    const cwd = tempRoot();
    const run = (o: TestOrigin, ...extra: string[]) => registryRun(e, o, cwd, ...extra);
    const first = await run(a);
    expect(first.exitCode, first.stderr).toBe(0);
    const writes = writeRequests(e).length;
    const other = await run(b, '--json');
    expect(other.exitCode, other.stdout).toBe(5);
    const doc = JSON.parse(other.stdout) as { error: { code: string; details: { report: unknown } } };
    expect(doc.error.code).toBe('conflict');
    expect(JSON.stringify(doc.error.details.report)).toMatch(
      /holds 1\.0\.0 signed with key [0-9A-F]{16}; 127\.0\.0\.1:\d+ signs it with key [0-9A-F]{16}/,
    );
    expect(b.requests.filter((r) => r.endsWith('.zip'))).toEqual([]);
    expect(writeRequests(e)).toHaveLength(writes);
  });

  it('into a registry: a copy signed by a key the origin serves but that did not sign is a conflict (exit 5)', async () => {
    const release = await buildRelease('1.0.0', ['linux_amd64']);
    const a = await startOrigin([release]);
    // Serves both keys, the signer's among them, but the signature is by the other.
    const b = await startOrigin([await resign(release, 'other')], { extraKeys: ['signer'] });
    const e = await emulator();
    const cwd = tempRoot();
    expect((await registryRun(e, a, cwd)).exitCode).toBe(0);
    const writes = writeRequests(e).length;
    const other = await registryRun(e, b, cwd);
    expect(other.exitCode, other.stderr).toBe(5);
    expect(other.stderr).toMatch(
      /signed with key 47D8C49E6154CCB3; 127\.0\.0\.1:\d+ signs it with key (?!47D8C49E6154CCB3)[0-9A-F]{16}/,
    );
    expect(writeRequests(e)).toHaveLength(writes);
  });

  it('into a registry: an origin that states its key by fingerprint: a second run is "present", exit 0', async () => {
    const a = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])], { fingerprintIds: true });
    const e = await emulator();
    const cwd = tempRoot();
    const first = await registryRun(e, a, cwd);
    expect(first.exitCode, first.stderr).toBe(0);
    const writes = writeRequests(e).length;
    const again = await registryRun(e, a, cwd, '--json');
    expect(again.exitCode, again.stderr).toBe(0);
    expect(statuses(again.stdout)).toEqual(['present']);
    expect(writeRequests(e)).toHaveLength(writes);
    expect(a.requests.filter((r) => r.endsWith('.zip'))).toHaveLength(1);
  });

  it('into a registry: an origin that serves no key is exit 3, not "already there"', async () => {
    const release = await buildRelease('1.0.0', ['linux_amd64']);
    const a = await startOrigin([release]);
    const keyless = await startOrigin([release], { noKeys: true });
    const e = await emulator();
    const cwd = tempRoot();
    const run = (o: TestOrigin, ...extra: string[]) => registryRun(e, o, cwd, ...extra);
    expect((await run(a)).exitCode).toBe(0);
    const writes = writeRequests(e).length;
    const result = await run(keyless);
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain('serves no signing key');
    expect(writeRequests(e)).toHaveLength(writes);
  });
});
