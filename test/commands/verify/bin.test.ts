/** End to end: the built `bin/provider.cjs verify`, spawned exactly as a user runs it. */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../../helpers/result.js';
import {
  FIXTURE_H1,
  FIXTURES,
  PLATFORMS,
  SIG,
  copyRelease,
  keyId,
  publicKeyPath,
} from '../../release/helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'provider.cjs');

function provider(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: options.cwd ?? ROOT,
      NO_COLOR: '1',
      ...options.env,
    },
    encoding: 'utf8',
  });
  return { exitCode: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

describe('provider verify (built bin)', () => {
  beforeAll(() => {
    if (!fs.existsSync(path.join(ROOT, 'dist/bundle/provider.js'))) {
      execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
    }
  }, 120_000);

  it('prints provider, version, protocols, key id, signer and one row per platform', () => {
    const result = provider(['verify', 'fixtures/release', '--key', 'fixtures/keys/signer.pub.asc']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.replaceAll(keyId('signer'), '<KEYID>')).toBe(
      [
        'provider   example',
        'version    1.2.3',
        'protocols  6.0 (from manifest)',
        'key id     <KEYID> (RSA 3072; from --key fixtures/keys/signer.pub.asc)',
        'signer     Provider Test Signer (TEST ONLY) <signer@example.invalid>',
        'signature  terraform-provider-example_1.2.3_SHA256SUMS.sig',
        '',
        'PLATFORM       FILE                                                   SIZE  SHA256',
        'darwin_amd64   terraform-provider-example_1.2.3_darwin_amd64.zip   2.2 KiB  6546e445d34f',
        'darwin_arm64   terraform-provider-example_1.2.3_darwin_arm64.zip   2.2 KiB  f76b591723b0',
        'linux_amd64    terraform-provider-example_1.2.3_linux_amd64.zip    2.2 KiB  bd7aeba4436e',
        'linux_arm64    terraform-provider-example_1.2.3_linux_arm64.zip    2.2 KiB  26693bd82fa2',
        'windows_amd64  terraform-provider-example_1.2.3_windows_amd64.zip  2.2 KiB  24c86909e1e1',
        '',
        '✓ example 1.2.3 verified: 5 platforms',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toContain('Verifying example 1.2.3 in');
  });

  it('prints the same as one JSON document with --json', () => {
    const result = provider([
      'verify',
      'fixtures/release',
      '--key',
      'fixtures/keys/signer.pub.asc',
      '--json',
    ]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const sums = fs.readFileSync(
      path.join(FIXTURES, 'release', 'terraform-provider-example_1.2.3_SHA256SUMS'),
      'utf8',
    );
    const platforms = PLATFORMS.map((p) => {
      const filename = `terraform-provider-example_1.2.3_${p}.zip`;
      const shasum = sums
        .split('\n')
        .find((l) => l.endsWith(filename))!
        .slice(0, 64);
      const bytes = fs.statSync(path.join(FIXTURES, 'release', filename)).size;
      const [os, arch] = p.split('_');
      // h1: before zh:, as Terraform sorts a lock file's hashes.
      const hashes = [FIXTURE_H1[p], `zh:${shasum}`];
      return { os, arch, filename, shasum, bytes, hashes };
    });
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      provider: { name: 'example' },
      version: '1.2.3',
      protocols: ['6.0'],
      keyId: keyId('signer'),
      signer: 'Provider Test Signer (TEST ONLY) <signer@example.invalid>',
      signatureFile: 'terraform-provider-example_1.2.3_SHA256SUMS.sig',
      platforms,
      artifactsJson: { file: 'artifacts.json', archives: 5 },
      warnings: [],
    });
  });

  it('exits 3 with one JSON error document for an armored signature', () => {
    const dist = copyRelease();
    fs.copyFileSync(path.join(FIXTURES, 'signatures', 'armored.sig.asc'), path.join(dist, SIG));
    const result = provider(['verify', '--key', publicKeyPath('signer'), '--json'], {
      cwd: path.dirname(dist),
    });
    expect(result.exitCode).toBe(3);
    const doc = JSON.parse(result.stdout) as {
      ok: boolean;
      error: { code: string; message: string; hint: string };
    };
    expect(doc).toMatchObject({ ok: false, error: { code: 'verification' } });
    expect(doc.error.message).toContain(`${SIG} is ASCII-armored`);
    expect(doc.error.hint).toContain('--dearmor-signature');
  });

  it('exits 2 for --offline without a key and 0 with PROVIDER_GPG_KEY', () => {
    const offline = provider(['verify', 'fixtures/release', '--offline', '--organization', 'acme']);
    expect(offline.exitCode).toBe(2);
    expect(offline.stderr).toContain('--offline needs a public key');
    const env = { PROVIDER_GPG_KEY: fs.readFileSync(publicKeyPath('signer'), 'utf8') };
    const withEnv = provider(['verify', 'fixtures/release', '--offline', '-q'], { env });
    expect(withEnv.exitCode).toBe(0);
    expect(withEnv.stdout).toContain('from PROVIDER_GPG_KEY');
    expect(withEnv.stderr).toBe('');
  });
});
