/**
 * `provider check <version>` against the in-process emulator: passes on the published fixture release, and
 * fails (exit 3, Terraform's own words beside ours) when the emulator's stored data is altered the way each
 * of terraform init's checks would notice.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { emulatorPerTest, keyIdOf, loadRelease } from '../helpers/emulator/index.js';
import { normalise } from '../helpers/normalise.js';
import {
  ALL_PLATFORMS,
  cli,
  fixture,
  publishAll,
  storedPlatform,
  storedVersion,
  zipName,
  eventually,
} from './helpers.js';

const start = emulatorPerTest();

async function published(): Promise<Emulator> {
  const emulator = await start();
  await publishAll(emulator);
  return emulator;
}

/** Archivist requests (downloads) the emulator saw, as `GET <object> auth=<bool>`. */
function downloads(emulator: Emulator): { method: string; authorization: boolean }[] {
  return emulator.requestLog.records
    .filter((r) => r.path.startsWith('/_archivist/'))
    .map((r) => ({ method: r.method, authorization: r.authorization }));
}

describe('provider check', () => {
  it('passes on the published fixture release, downloading SHA256SUMS and its signature without a token', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['check', '1.2.3']);
    expect(result.exitCode).toBe(0);
    // The verdict: once, last, with the success glyph every command uses; on stderr, so that stdout stays
    // the facts and the table (tab-separated rows in a pipe).
    const host = new URL(emulator.url).host;
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(
      `✓ terraform init will accept ${host}/example-org/example 1.2.3`,
    );
    expect((result.stdout + result.stderr).match(/will accept/g)).toHaveLength(1);
    expect(normalise(result.stdout)).toMatchInlineSnapshot(`
      "source     127.0.0.1:<port>/example-org/example
      version    1.2.3 (protocols 6.0)
      signature  good: SHA256SUMS signed by 47D8C49E6154CCB3, registered key id 1 (Provider Test Signer (TEST ONLY) <signer@example.invalid>)
      checksums  SHA256SUMS lists all 5 platforms under their filenames with their shasums
      archives   not downloaded (--download also hashes every stored zip)
      hashes     lock hashes not served by the registry (no packages, as on HCP Terraform); zh: of all 5 from the signed SHA256SUMS (--json lists them)

      darwin_amd64	terraform-provider-example_1.2.3_darwin_amd64.zip	6546e445d34f62f1f89802234b3cc606bab3d40c16324db7e4666dc71e22d0ea	listed
      darwin_arm64	terraform-provider-example_1.2.3_darwin_arm64.zip	f76b591723b07b6d33ca40d0ea8bda14e9f61465177cff8960afa7036b11e70c	listed
      linux_amd64	terraform-provider-example_1.2.3_linux_amd64.zip	bd7aeba4436e5e545dc00256fad6bb120ca43487ae0cffc7af808f11a7f7e70e	listed
      linux_arm64	terraform-provider-example_1.2.3_linux_arm64.zip	26693bd82fa2206850a0a09f9f23114df999cd316b99374f1d646c80a4ad1269	listed
      windows_amd64	terraform-provider-example_1.2.3_windows_amd64.zip	24c86909e1e1942f1012eca63a7b4f6264ad469e839d5135bf9b6e8d1a13617a	listed
      "
    `);
    await eventually(() =>
      expect(downloads(emulator)).toEqual([
        { method: 'GET', authorization: false },
        { method: 'GET', authorization: false },
      ]),
    );
    const api = emulator.requestLog.records.filter((r) => r.path.startsWith('/api/'));
    expect(api.every((r) => r.method === 'GET' && r.authorization)).toBe(true);
    expect(api.map((r) => r.path)).toContain('/api/registry/private/v2/gpg-keys');
    expect(result.stdout + result.stderr).not.toContain('/_archivist/');
  });

  it('--download hashes every stored zip (streamed, no token) and prints JSON with --json', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['check', '1.2.3', '--download', '--json']);
    expect(result.exitCode).toBe(0);
    const doc = JSON.parse(result.stdout) as {
      ok: boolean;
      downloaded: boolean;
      platforms: { archive: string; bytes: number }[];
    };
    expect(doc.ok).toBe(true);
    expect(doc.downloaded).toBe(true);
    const release = loadRelease();
    expect(doc.platforms.map((p) => p.bytes)).toEqual(
      ALL_PLATFORMS.map((p) => release.zip(...(p.split('_') as [string, string])).bytes.length),
    );
    expect(doc.platforms.every((p) => p.archive === 'verified')).toBe(true);
    // SHA256SUMS, its signature, every zip; and the first zip's Range request, answered whole (the platform
    // documents no ranges), its body left unread: the zips are then hashed from temporary copies.
    await eventually(() => expect(downloads(emulator)).toHaveLength(2 + ALL_PLATFORMS.length + 1));
    expect(downloads(emulator).every((d) => !d.authorization)).toBe(true);
    expect(result.stdout).not.toContain('/_archivist/');
  });

  it('retries a download link that fails for a moment (still without a token)', async () => {
    const emulator = await start({
      faults: [{ method: 'GET', path: '^/_archivist/', status: 503, times: 1 }],
    });
    await publishAll(emulator);
    const result = await cli(emulator, ['check', '1.2.3']);
    expect(result.exitCode).toBe(0);
    await eventually(() =>
      expect(downloads(emulator).map((d) => d.authorization)).toEqual([false, false, false]),
    );
    expect(emulator.requestLog.records.filter((r) => r.status === 503)).toHaveLength(1);
  });

  // Found by test/reliability (seed 46, links living 268 ms): a download link that expired between the read
  // and the download made the check say "terraform init would refuse" (exit 3) and hint at deleting a good version.
  it('replaces a download link that expired before it was used by reading the version again', async () => {
    const emulator = await start({ linkTtlMs: 400 });
    await publishAll(emulator);
    // The first download of each checksum file is held past its link's lifetime.
    emulator.faults.add({ method: 'GET', path: '^/_archivist/', delayMs: 600, times: 2 });
    const result = await cli(emulator, ['check', '1.2.3']);
    expect(result.exitCode, result.stderr).toBe(0);
    await eventually(() =>
      expect(
        emulator.requestLog.records.filter((r) => r.path.startsWith('/_archivist/')).map((r) => r.status),
      ).toEqual([403, 403, 200, 200]),
    );
  });

  it('never prints a download link, not even with --verbose', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['check', '1.2.3', '--download', '--verbose']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('→ GET [redacted] (SHA256SUMS of example-org/example 1.2.3, no token)');
    expect(result.stdout + result.stderr).not.toContain('/_archivist/');
  });

  it("fails when a platform's filename is not in SHA256SUMS: checksum list has no SHA-256 hash", async () => {
    const emulator = await published();
    storedPlatform(emulator, 'linux_amd64').filename = 'terraform-provider-example_1.2.3_linux_amd64.ZIP';
    const result = await cli(emulator, ['check', '1.2.3']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('(1 problem):');
    expect(result.stderr).toContain(
      '  linux_amd64: SHA256SUMS has no line for "terraform-provider-example_1.2.3_linux_amd64.ZIP", the filename the registry serves for this platform\n' +
        '    terraform init says: checksum list has no SHA-256 hash for "terraform-provider-example_1.2.3_linux_amd64.ZIP"',
    );
    expect(result.stderr).toContain(
      'hint: Delete the version (provider delete <version>) and publish it again',
    );
    expect(result.stdout).toBe('');
  });

  it("fails when a platform's shasum differs from SHA256SUMS: checksum list has unexpected SHA-256 hash", async () => {
    const emulator = await published();
    const wrong = 'c0ffee'.padEnd(64, '0');
    storedPlatform(emulator, 'darwin_arm64').shasum = wrong;
    const listed = loadRelease().zip('darwin', 'arm64').shasum;
    const result = await cli(emulator, ['check', '1.2.3']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      `  darwin_arm64: SHA256SUMS lists ${listed} for "${zipName('darwin_arm64')}", but the registry's shasum for the platform is ${wrong}\n` +
        `    terraform init says: checksum list has unexpected SHA-256 hash ${listed} (expected ${wrong})`,
    );
  });

  it('fails when the signature is not by the registered key: authentication signature from unknown issuer', async () => {
    const emulator = await published();
    fs.copyFileSync(
      fixture('signatures', 'by-other.sig'),
      emulator.store.objectPath(storedVersion(emulator).shasumsSig.key),
    );
    const result = await cli(emulator, ['check', '1.2.3', '--json']);
    expect(result.exitCode).toBe(3);
    const doc = JSON.parse(result.stdout) as {
      ok: boolean;
      error: {
        code: string;
        message: string;
        details: { problems: { subject: string; terraform: string }[] };
      };
    };
    expect(doc.ok).toBe(false);
    expect(doc.error.code).toBe('verification');
    expect(doc.error.message).toContain(
      `SHA256SUMS.sig: the signature was made by key ${keyIdOf('other')}, not by the registered key ${keyIdOf('signer')} the version names`,
    );
    expect(doc.error.details.problems).toEqual([
      expect.objectContaining({
        subject: 'SHA256SUMS.sig',
        terraform: 'authentication signature from unknown issuer',
      }),
    ]);
  });

  it('fails with --download when a stored zip was altered: archive has incorrect checksum', async () => {
    const emulator = await published();
    const stored = emulator.store.objectPath(storedPlatform(emulator, 'windows_amd64').binary.key);
    fs.appendFileSync(stored, 'tampered');
    const without = await cli(emulator, ['check', '1.2.3']);
    expect(without.exitCode).toBe(0);
    const result = await cli(emulator, ['check', '1.2.3', '--download']);
    expect(result.exitCode).toBe(3);
    const want = loadRelease().zip('windows', 'amd64').shasum;
    expect(result.stderr).toMatch(
      new RegExp(
        `terraform init says: archive has incorrect checksum zh:[0-9a-f]{64} \\(expected zh:${want}\\)`,
      ),
    );
    expect(result.stderr).toContain(
      `windows_amd64: the stored archive "${zipName('windows_amd64')}" hashes to`,
    );
  });

  it('fails (exit 3) while files are missing, names them and says publish resumes', async () => {
    const emulator = await start();
    await publishAll(emulator, {
      uploads: ['sums', 'darwin_amd64', 'linux_amd64', 'darwin_arm64', 'linux_arm64'],
    });
    const result = await cli(emulator, ['check', '1.2.3']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      'missing SHA256SUMS.sig, the binary of windows_amd64 (terraform-provider-example_1.2.3_windows_amd64.zip) (files 1/2 + 4/5)',
    );
    expect(result.stderr).toContain(
      'hint: Run the same provider publish command again: it resumes and uploads only what is missing.',
    );
    expect(downloads(emulator)).toEqual([]);
  });

  it('a read-only (member) token may check', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['check', '1.2.3'], { token: emulator.memberToken });
    expect(result.exitCode).toBe(0);
  });

  it('an unknown version is exit 4, a malformed one exit 2 without a request', async () => {
    const emulator = await published();
    const absent = await cli(emulator, ['check', '9.9.9']);
    expect(absent.exitCode).toBe(4);
    expect(absent.stderr).toContain('error: Version 9.9.9 of example-org/example is not on');
    const bad = await cli(emulator, ['check', 'latest']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('error: "latest" is not a provider version');
    expect(emulator.requestLog.records.filter((r) => r.path.includes('latest'))).toEqual([]);
  });
});
