/** End to end: the built `bin/provider.cjs lock`, spawned as a user runs it, in a folder holding a release in ./dist. */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/result.js';
import { tempRoot } from '../helpers/tmp.js';
import { ADDRESS, FIXTURE_LOCK_FILE, MAC_INIT_LOCK_FILE } from '../lockfile/helpers.js';
import { copyRelease, publicKeyPath } from '../release/helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'provider.cjs');

function provider(args: string[], cwd: string, env: Record<string, string> = {}): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1', ...env },
    encoding: 'utf8',
  });
  return { exitCode: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

describe('provider lock (built bin)', () => {
  beforeAll(() => {
    if (!fs.existsSync(path.join(ROOT, 'dist/bundle/provider.js'))) {
      execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
    }
  }, 120_000);

  it('turns the Mac-only lock file into one for every platform, then finds nothing to change', () => {
    const root = tempRoot('lock-bin');
    copyRelease(root);
    fs.writeFileSync(path.join(root, '.terraform.lock.hcl'), MAC_INIT_LOCK_FILE);
    const env = {
      TFE_ORGANIZATION: 'example-org',
      PROVIDER_GPG_KEY: fs.readFileSync(publicKeyPath('signer'), 'utf8'),
    };

    const first = provider(['lock'], root, env);
    expect(first.stderr).not.toContain('error:');
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toBe(
      `✓ Updated .terraform.lock.hcl: ${ADDRESS} 1.2.3 (h1: for 5 platforms, zh: for 6 files of SHA256SUMS)\n`,
    );
    expect(fs.readFileSync(path.join(root, '.terraform.lock.hcl'), 'utf8')).toBe(
      FIXTURE_LOCK_FILE.replace('  version = "1.2.3"', '  version     = "1.2.3"\n  constraints = "~> 1.2"'),
    );

    const second = provider(['lock', '--json'], root, env);
    expect(second.exitCode).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ result: 'unchanged', written: false });
  });

  it('a release signed by another key: exit 3, and no lock file appears', () => {
    const root = tempRoot('lock-bin');
    copyRelease(root);
    const result = provider(
      ['lock', 'dist', '--key', publicKeyPath('other'), '--organization', 'example-org'],
      root,
    );
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('error:');
    expect(fs.existsSync(path.join(root, '.terraform.lock.hcl'))).toBe(false);
  });

  it('--help shows the flags and examples', () => {
    const result = provider(['lock', '--help'], ROOT);
    expect(result.exitCode).toBe(0);
    for (const flag of [
      '--lock-file <path>',
      '--platform <os_arch>',
      '--constraints <expr>',
      '--dry-run',
      '--key <file>',
    ])
      expect(result.stdout).toContain(flag);
    expect(result.stdout).toContain('$ provider lock fixtures/release --key fixtures/keys/signer.pub.asc');
  });
});
