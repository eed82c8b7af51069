/**
 * `provider lock` in-process: the lock file it creates for the fixture release is the one Terraform would
 * write (test/lockfile/helpers.ts spells it out), re-running changes nothing, `--platform` limits the `h1:`
 * lines, a bad release (exit 3) or a lock file that does not parse (exit 2) leaves the file as it was, a dry run
 * writes nothing, and no token or request is needed.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempRoot } from '../helpers/tmp.js';
import {
  ADDRESS,
  FIXTURE_BLOCK,
  FIXTURE_LOCK_FILE,
  MAC_INIT_LOCK_FILE,
  ZH_LINES,
} from '../lockfile/helpers.js';
import {
  FIXTURE_H1,
  copyRelease,
  makeZip,
  publicKeyPath,
  replaceListed,
  runCliAtHome,
  zipName,
} from '../release/helpers.js';

const LOCK = '.terraform.lock.hcl';

/** A folder holding the fixture release as ./dist, and the arguments that lock it. */
function setup(): { root: string; args: string[]; lockFile: string } {
  const root = tempRoot('lock');
  copyRelease(root);
  return {
    root,
    args: ['lock', '--key', publicKeyPath('signer'), '--organization', 'example-org'],
    lockFile: path.join(root, LOCK),
  };
}

describe('provider lock', () => {
  // Any request the command made would land here: the tests point TFE_HOSTNAME at it.
  let requests = 0;
  let url = '';
  const server = http.createServer((_, res) => {
    requests++;
    res.writeHead(500).end();
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('creates the lock file Terraform would write for every platform, offline, without a token', async () => {
    const { root, args, lockFile } = setup();
    const result = await runCliAtHome([...args, '--hostname', 'app.terraform.io'], {
      cwd: root,
      env: { TFE_HOSTNAME: url },
    });
    expect(result.stderr).not.toContain('error');
    expect(result.exitCode).toBe(0);
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(FIXTURE_LOCK_FILE);
    expect(result.stdout).toBe(
      `✓ Created ${LOCK}: ${ADDRESS} 1.2.3 (h1: for 5 platforms, zh: for 6 files of SHA256SUMS)\n`,
    );
    expect(requests).toBe(0);
  });

  it('re-running leaves the file byte for byte as it was, and says unchanged', async () => {
    const { root, args, lockFile } = setup();
    expect((await runCliAtHome(args, { cwd: root })).exitCode).toBe(0);
    const before = fs.statSync(lockFile);
    const again = await runCliAtHome(args, { cwd: root });
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain(`✓ ${LOCK} unchanged: it already records ${ADDRESS} 1.2.3`);
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(FIXTURE_LOCK_FILE);
    // Not even rewritten with the same bytes: the file is the same inode, untouched.
    expect(fs.statSync(lockFile).ino).toBe(before.ino);
    expect(fs.statSync(lockFile).mtimeMs).toBe(before.mtimeMs);
  });

  it('completes the lock file terraform init wrote on a Mac, keeping its constraints and its mode', async () => {
    const { root, args, lockFile } = setup();
    fs.writeFileSync(lockFile, MAC_INIT_LOCK_FILE, { mode: 0o600 });
    fs.chmodSync(lockFile, 0o600);
    const result = await runCliAtHome(args, { cwd: root });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`✓ Updated ${LOCK}: ${ADDRESS} 1.2.3`);
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(
      FIXTURE_LOCK_FILE.replace('  version = "1.2.3"', '  version     = "1.2.3"\n  constraints = "~> 1.2"'),
    );
    expect(fs.statSync(lockFile).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(root).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('--platform records h1: for the chosen platforms only, and zh: for every file', async () => {
    const { root, args, lockFile } = setup();
    const result = await runCliAtHome([...args, '--platform', 'linux_amd64', '--platform', 'darwin_arm64'], {
      cwd: root,
    });
    expect(result.exitCode).toBe(0);
    const text = fs.readFileSync(lockFile, 'utf8');
    const h1 = [...text.matchAll(/"(h1:[^"]+)"/g)].map((m) => m[1]);
    expect(h1).toEqual([FIXTURE_H1.linux_amd64, FIXTURE_H1.darwin_arm64].sort());
    expect(text).toContain(ZH_LINES.join('\n'));
    expect(result.stdout).toContain('(h1: for 2 platforms, zh: for 6 files of SHA256SUMS)');
  });

  it('--platform the release does not have is exit 2, and nothing is written', async () => {
    const { root, args, lockFile } = setup();
    const result = await runCliAtHome([...args, '--platform', 'freebsd_amd64'], { cwd: root });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('example 1.2.3 has no package for freebsd_amd64');
    expect(fs.existsSync(lockFile)).toBe(false);
    const bad = await runCliAtHome([...args, '--platform', 'linux/amd64'], { cwd: root });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--platform "linux/amd64" is not a platform');
  });

  it('--constraints sets the constraints, in the form Terraform writes them', async () => {
    const { root, args, lockFile } = setup();
    const result = await runCliAtHome([...args, '--constraints', '>=1.2,<2'], { cwd: root });
    expect(result.exitCode).toBe(0);
    expect(fs.readFileSync(lockFile, 'utf8')).toContain(
      '  version     = "1.2.3"\n  constraints = ">= 1.2.0, < 2.0.0"\n  hashes = [\n',
    );
  });

  it('a release that does not verify is exit 3, and the lock file is not touched', async () => {
    const { root, args, lockFile } = setup();
    fs.writeFileSync(lockFile, MAC_INIT_LOCK_FILE);
    // A zip whose SHA256SUMS line and signature are right, but the wrong key signed: exit 3.
    const wrongKey = await runCliAtHome(
      ['lock', '--key', publicKeyPath('other'), '--organization', 'example-org'],
      {
        cwd: root,
      },
    );
    expect(wrongKey.exitCode).toBe(3);
    // A zip changed after SHA256SUMS was signed: exit 3, naming the zip.
    fs.writeFileSync(path.join(root, 'dist', zipName('linux_amd64')), makeZip([{ name: 'x', data: 'y' }]));
    const tampered = await runCliAtHome(args, { cwd: root });
    expect(tampered.exitCode).toBe(3);
    expect(tampered.stderr).toContain(zipName('linux_amd64'));
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(MAC_INIT_LOCK_FILE);
  });

  it('a zip that matches its signed line but has no executable is exit 3 too', async () => {
    const { root, args, lockFile } = setup();
    await replaceListed(
      path.join(root, 'dist'),
      zipName('linux_amd64'),
      makeZip([{ name: 'README', data: 'x' }]),
    );
    const result = await runCliAtHome(args, { cwd: root });
    expect(result.exitCode).toBe(3);
    expect(fs.existsSync(lockFile)).toBe(false);
  });

  it('a lock file that does not parse is exit 2 naming the file and line, and stays as it was', async () => {
    const { root, args, lockFile } = setup();
    const broken = MAC_INIT_LOCK_FILE.replace('  ]\n}', '  ]\n');
    fs.writeFileSync(lockFile, broken);
    const result = await runCliAtHome(args, { cwd: root });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(
      /error: \.terraform\.lock\.hcl:4: this block has no closing \}: this is not valid HCL/,
    );
    expect(result.stderr).toContain('it was not changed');
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(broken);
  });

  it('--dry-run prints the block (a diff against the one in the file) and writes nothing', async () => {
    const { root, args, lockFile } = setup();
    const fresh = await runCliAtHome([...args, '--dry-run'], { cwd: root });
    expect(fresh.exitCode).toBe(0);
    expect(fresh.stdout).toContain(
      FIXTURE_BLOCK.split('\n')
        .map((l) => `+ ${l}`)
        .join('\n'),
    );
    expect(fresh.stdout).toContain(`Dry run: ${LOCK} would be created with ${ADDRESS} 1.2.3`);
    expect(fs.existsSync(lockFile)).toBe(false);

    fs.writeFileSync(lockFile, MAC_INIT_LOCK_FILE);
    const diff = await runCliAtHome([...args, '--dry-run'], { cwd: root });
    expect(diff.exitCode).toBe(0);
    expect(diff.stdout).toContain(`+     "${FIXTURE_H1.linux_amd64}",\n`);
    expect(diff.stdout).toContain(`      "${FIXTURE_H1.darwin_arm64}",\n`);
    expect(diff.stdout).toContain(`would be updated`);
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(MAC_INIT_LOCK_FILE);
  });

  it('--json prints the block as data', async () => {
    const { root, args } = setup();
    const result = await runCliAtHome(
      [...args, '--lock-file', 'sub.lock.hcl', '--json', '--platform', 'linux_amd64'],
      {
        cwd: root,
      },
    );
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      lockFile: 'sub.lock.hcl',
      result: 'created',
      dryRun: false,
      written: true,
      provider: {
        address: ADDRESS,
        version: '1.2.3',
        constraints: null,
        hashes: [FIXTURE_H1.linux_amd64, ...ZH_LINES.map((l) => l.trim().slice(1, -2))],
      },
      platforms: ['linux_amd64'],
      previousVersion: null,
    });
    expect(fs.existsSync(path.join(root, 'sub.lock.hcl'))).toBe(true);
  });

  it('without a public key or an organization it is exit 2 before anything is read', async () => {
    const { root, lockFile } = setup();
    const noKey = await runCliAtHome(['lock', '--organization', 'example-org'], { cwd: root });
    expect(noKey.exitCode).toBe(2);
    expect(noKey.stderr).toContain('no public key was given');
    const noOrg = await runCliAtHome(['lock', '--key', publicKeyPath('signer')], { cwd: root });
    expect(noOrg.exitCode).toBe(2);
    expect(noOrg.stderr).toContain(
      'No organization given: the lock file records the provider as app.terraform.io/<organization>/<name>',
    );
    expect(fs.existsSync(lockFile)).toBe(false);
  });

  it('records a TFE host with its port, and the organization in lower case, as Terraform normalises them', async () => {
    const { root, args, lockFile } = setup();
    const result = await runCliAtHome(
      [
        ...args.slice(0, 3),
        '--organization',
        'Example-Org',
        '--hostname',
        'https://TFE.Example.com:8443/app',
      ],
      { cwd: root },
    );
    expect(result.exitCode).toBe(0);
    expect(fs.readFileSync(lockFile, 'utf8')).toContain(
      'provider "tfe.example.com:8443/example-org/example" {\n',
    );
  });
});
