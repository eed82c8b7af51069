/**
 * `provider emulate` plays the origin of a mirror: it serves the provider registry protocol for what it holds
 * (service discovery, versions, downloads with the registered key), read with the host's own token
 * (`TF_TOKEN_<host>`, as Terraform sends it), and its fault rules rehearse a bad origin: 429s with Retry-After,
 * a platform listed but not served, and no signing key (`withoutKeys`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest, loadRelease, publishFixture, publicKey } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { hostDir } from './origin.js';

const emulator = emulatorPerTest();
const ALL = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];

/** An emulator holding the fixture release, every platform uploaded. */
async function origin(): Promise<Emulator> {
  const e = await emulator();
  await publishFixture(e, { platforms: ALL, uploads: ['sums', 'sig', ...ALL] });
  return e;
}

async function mirror(e: Emulator, cwd: string, ...args: string[]) {
  return runCli(['mirror', `${e.organization}/example`, '--from', e.url, '--to-dir', 'out', ...args], {
    cwd,
    homeDir: cwd,
    env: { NO_COLOR: '1', TF_TOKEN_127_0_0_1: e.ownerToken },
  });
}

const PROTOCOL = '/api/registry/v1/providers/**';

describe('the emulator as the origin of a mirror', () => {
  it('serves what it holds: the platforms asked for, byte for byte, with its registered key', async () => {
    const e = await origin();
    const cwd = tempRoot();
    const result = await mirror(e, cwd, '--platforms', 'linux_amd64,darwin_arm64', '--json');
    expect(result.exitCode, result.stderr).toBe(0);
    const release = loadRelease();
    const dir = path.join(cwd, 'out', hostDir(e.url), e.organization, 'example', '1.2.3');
    const base = 'terraform-provider-example_1.2.3';
    expect(fs.readFileSync(path.join(dir, `${base}_SHA256SUMS`)).equals(release.sums)).toBe(true);
    expect(fs.readFileSync(path.join(dir, `${base}_SHA256SUMS.sig`)).equals(release.sig)).toBe(true);
    for (const [os, arch] of [
      ['linux', 'amd64'],
      ['darwin', 'arm64'],
    ] as const) {
      const zip = release.zip(os, arch);
      expect(fs.readFileSync(path.join(dir, zip.filename)).equals(zip.bytes)).toBe(true);
    }
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.zip'))).toHaveLength(2);
    expect(fs.readFileSync(path.join(dir, `${base}_signing-key.asc`), 'utf8')).toBe(publicKey('signer'));
  });

  it('with --ranges, answers byte ranges: a mirror into a registry streams from it', async () => {
    const from = await emulator({ ranges: true });
    await publishFixture(from, { platforms: ALL, uploads: ['sums', 'sig', ...ALL] });
    const to = await emulator({ organization: 'mirror-org' });
    const cwd = tempRoot();
    // Each emulator's token by its host and port, as two hosts of one address need.
    const credentials = {
      [new URL(from.url).host]: { token: from.ownerToken },
      [new URL(to.url).host]: { token: to.ownerToken },
    };
    fs.mkdirSync(path.join(cwd, '.terraform.d'));
    fs.writeFileSync(
      path.join(cwd, '.terraform.d', 'credentials.tfrc.json'),
      JSON.stringify({ credentials }),
    );
    const args = ['mirror', `${from.organization}/example`, '--from', from.url, '--platforms', 'linux_amd64'];
    const result = await runCli([...args, '--hostname', to.url, '--organization', to.organization], {
      cwd,
      homeDir: cwd,
      env: { NO_COLOR: '1' },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const downloads = from.requestLog.records.filter(
      (r) => r.method === 'GET' && r.path.startsWith('/_archivist/'),
    );
    // The signed list and its signature whole; the zip by ranges (206), then its body once (200).
    expect(downloads.map((r) => r.status).sort()).toEqual([200, 200, 200, 206]);
    const zip = loadRelease().zip('linux', 'amd64');
    const stored = to.store.data.platforms[0]!;
    expect(stored.filename).toBe(zip.filename);
    expect(stored.binary).toEqual(expect.objectContaining({ bytes: zip.bytes.length }));
    expect(stored.binary.uploadedAt).not.toBeNull();
  });

  it('waits out its 429s (Retry-After) and reports a platform it lists but does not serve', async () => {
    const e = await origin();
    e.faults.add({ method: 'GET', path: PROTOCOL, status: 429, retryAfter: 1, times: 2 });
    e.faults.add({ method: 'GET', path: '/api/registry/v1/providers/**/download/linux/arm64', status: 404 });
    const cwd = tempRoot();
    const result = await mirror(e, cwd, '--platforms', 'linux_amd64,linux_arm64', '--json');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(e.faults.fired).toEqual([2, 1]);
    const doc = JSON.parse(result.stdout) as {
      providers: { versions: { status: string; platforms: string[]; unavailable: string[] }[] }[];
    };
    expect(doc.providers[0]!.versions).toMatchObject([
      { status: 'mirrored', platforms: ['linux_amd64'], unavailable: ['linux_arm64'] },
    ]);
    expect(result.stderr).toContain('lists linux_arm64 but serves no download for it');
  }, 30_000);

  it('serving no signing key (withoutKeys) stops the version with exit 3, nothing written', async () => {
    const e = await origin();
    e.faults.add({ method: 'GET', path: PROTOCOL, withoutKeys: true });
    const cwd = tempRoot();
    const result = await mirror(e, cwd, '--platforms', 'linux_amd64');
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('serves no signing key');
    expect(fs.existsSync(path.join(cwd, 'out'))).toBe(false);
  });
});
