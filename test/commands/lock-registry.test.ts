/**
 * `provider lock --registry --version <v>`: the lock block from what the registry serves, as
 * `terraform providers lock` builds it (hashicorp/terraform: internal/providercache/installer.go, the `h1:` of each
 * downloaded package; internal/getproviders/package_authentication.go `AcceptableHashes`, a `zh:` for every line of
 * the signed SHA256SUMS). Downloaded and checked as `provider check --download` checks; any problem is exit 3 and
 * the lock file is not touched. Expected text: the fixture's literal block (test/lockfile/helpers.ts, built from
 * the independently computed FIXTURE_H1 and the fixture's SHA256SUMS), under the emulator's address.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { ADDRESS, FIXTURE_LOCK_FILE } from '../lockfile/helpers.js';
import { cli, publishAll } from './helpers.js';
import { ARCHIVIST_PREFIX } from '../../src/emulator/links.js';
import type { Emulator } from '../../src/emulator/server.js';

const start = emulatorPerTest();

function addressOf(emulator: Emulator): string {
  return `${new URL(emulator.url).host}/${emulator.organization}/example`.toLowerCase();
}

function writes(emulator: Emulator) {
  return emulator.requestLog.records.filter((r) => r.method !== 'GET');
}

describe('provider lock --registry', () => {
  it('writes the same block as from the local release, every zip downloaded and hashed, nothing written remotely', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const cwd = tempRoot();
    const result = await cli(emulator, ['lock', '--registry', '--version', '1.2.3'], { cwd });
    expect(result.exitCode, result.stderr).toBe(0);
    const written = fs.readFileSync(path.join(cwd, '.terraform.lock.hcl'), 'utf8');
    expect(written).toBe(FIXTURE_LOCK_FILE.replace(ADDRESS, addressOf(emulator)));
    expect(result.stdout).toContain('h1: for 5 platforms, zh: for 6 files of SHA256SUMS');
    expect(writes(emulator)).toEqual([]);
    // Every file went through its download link: the five zips, SHA256SUMS and its signature; and one more, the
    // first zip's Range request, answered whole (the platform documents no ranges) and its body left unread.
    const downloads = emulator.requestLog.records.filter((r) => r.path.startsWith(ARCHIVIST_PREFIX));
    expect(downloads).toHaveLength(8);
  });

  it('from links that answer ranges: the same block, each zip downloaded once and none kept on disk', async () => {
    const emulator = await start({ ranges: true });
    await publishAll(emulator);
    const cwd = tempRoot();
    const tmp = path.join(cwd, 'tmp');
    fs.mkdirSync(tmp);
    const seen = new Set<string>();
    const watching = setInterval(() => {
      for (const name of fs.readdirSync(tmp, { recursive: true, encoding: 'utf8' })) seen.add(name);
    }, 2);
    const args = ['lock', '--registry', '--version', '1.2.3', '--hostname', emulator.url];
    const result = await runCli([...args, '--organization', emulator.organization, '--name', 'example'], {
      cwd,
      tmpDir: tmp,
      env: { TFE_TOKEN: emulator.ownerToken },
    }).finally(() => clearInterval(watching));
    expect(result.exitCode, result.stderr).toBe(0);
    const written = fs.readFileSync(path.join(cwd, '.terraform.lock.hcl'), 'utf8');
    expect(written).toBe(FIXTURE_LOCK_FILE.replace(ADDRESS, addressOf(emulator)));
    const downloads = emulator.requestLog.records.filter((r) => r.path.startsWith(ARCHIVIST_PREFIX));
    // SHA256SUMS, its signature and each zip's body whole (200); each zip's directory by a range (206).
    expect(downloads.filter((r) => r.status === 200)).toHaveLength(7);
    expect(downloads.filter((r) => r.status === 206)).toHaveLength(5);
    expect([...seen].filter((name) => name.endsWith('.zip'))).toEqual([]);
  });

  it('fails (exit 3) without touching the lock file when the registry serves a wrong h1: in packages', async () => {
    const emulator = await start({
      packageHashes: true,
      faults: [{ path: '**/download/*/*', wrongHash: 'h1', platform: 'linux_amd64' }],
    });
    await publishAll(emulator);
    const cwd = tempRoot();
    const lockFile = path.join(cwd, '.terraform.lock.hcl');
    fs.writeFileSync(lockFile, '# kept\n');
    const result = await cli(emulator, ['lock', '--registry', '--version', '1.2.3'], { cwd });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/linux_amd64: the registry serves h1:\S+ in packages/);
    expect(fs.readFileSync(lockFile, 'utf8')).toBe('# kept\n');
    expect(writes(emulator)).toEqual([]);
  });

  it.each([
    [
      ['lock', 'dist', '--registry', '--version', '1.2.3'],
      'Give either a release folder (dist) or --registry, not both',
    ],
    [['lock', '--registry'], 'provider lock --registry needs --version: the version to lock'],
  ])('refuses %j before any request (exit 2)', async (argv, message) => {
    const emulator = await start();
    const result = await cli(emulator, argv);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`error: ${message}`);
    expect(emulator.requestLog.records).toEqual([]);
  });
});
