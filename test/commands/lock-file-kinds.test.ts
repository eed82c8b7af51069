/**
 * `provider lock` and what `--lock-file` names (hardening round 3, docs/reliability.md): only a regular file of
 * sane size is read — a link to /dev/zero, a named pipe, a folder or a file above the cap is exit 2 at once,
 * with nothing written — and a symbolic link is replaced by the new file, never written through, so the file it
 * points to (outside the project here) stays as it was.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, tempRoot } from '../helpers/tmp.js';
import { FIXTURE_LOCK_FILE, MAC_INIT_LOCK_FILE } from '../lockfile/helpers.js';
import { copyRelease, publicKeyPath, runCliAtHome } from '../release/helpers.js';

const LOCK = '.terraform.lock.hcl';

/** A project holding the fixture release as ./dist; `lock` runs `provider lock` there. */
function project() {
  const root = tempRoot('lock');
  copyRelease(root);
  const lockFile = path.join(root, LOCK);
  const lock = () =>
    runCliAtHome(['lock', '--key', publicKeyPath('signer'), '--organization', 'example-org'], { cwd: root });
  return { root, lockFile, lock };
}

describe('provider lock refuses a lock file that is not a regular file of sane size (exit 2, nothing written)', () => {
  it('a link to /dev/zero: refused before a byte is read, the link left as it was', async () => {
    const { lockFile, lock } = project();
    fs.symlinkSync('/dev/zero', lockFile);
    const result = await lock();
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `error: ${LOCK} is a character device, not a regular file: it was not read or changed`,
    );
    expect(result.stderr).toContain('hint: Give --lock-file the path of a regular .terraform.lock.hcl file');
    expect(fs.readlinkSync(lockFile)).toBe('/dev/zero');
  });

  it('a named pipe nobody writes to: refused at once rather than waited on', async () => {
    const { lockFile, lock } = project();
    execFileSync('mkfifo', [lockFile]);
    const result = await lock();
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain(`error: ${LOCK} is a named pipe (FIFO), not a regular file`);
    expect(fs.lstatSync(lockFile).isFIFO()).toBe(true);
  });

  it('a folder', async () => {
    const { lockFile, lock } = project();
    fs.mkdirSync(lockFile);
    const result = await lock();
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain(`error: ${LOCK} is a folder, not a regular file`);
    expect(fs.readdirSync(lockFile)).toEqual([]);
  });

  // The HCL parser takes some 180 bytes of memory a character inside quotes, which is most of a lock file: 1 MiB
  // of hashes took it to 264 MB (1.5 s), 8 MiB to 1.6 GB (9 s).
  it('a file above 1 MiB (sparse: no disk used)', async () => {
    const { lockFile, lock } = project();
    fs.writeFileSync(lockFile, '');
    fs.truncateSync(lockFile, 1024 * 1024 + 1);
    const result = await lock();
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain(`error: ${LOCK} is 1.0 MiB; a lock file is at most 1 MiB`);
    expect(fs.statSync(lockFile).size).toBe(1024 * 1024 + 1);
  });
});

describe('provider lock replaces a symbolic link, never writes through it', () => {
  it('a link to a lock file outside the project: the link becomes the new file; the other file is untouched', async () => {
    const { lockFile, lock } = project();
    const outside = path.join(tempDir('elsewhere'), 'shared.lock.hcl');
    fs.writeFileSync(outside, MAC_INIT_LOCK_FILE);
    fs.chmodSync(outside, 0o640);
    fs.symlinkSync(outside, lockFile);
    const result = await lock();
    expect(result.exitCode, result.stderr).toBe(0);
    // Read through the link (its hashes are kept, as terraform init keeps prior ones), written in its place.
    expect(fs.lstatSync(lockFile).isFile()).toBe(true);
    expect(fs.readFileSync(lockFile, 'utf8')).toContain('constraints = "~> 1.2"');
    expect(fs.statSync(lockFile).mode & 0o777).toBe(0o640);
    expect(fs.readFileSync(outside, 'utf8')).toBe(MAC_INIT_LOCK_FILE);
    expect(fs.readdirSync(path.dirname(outside))).toEqual(['shared.lock.hcl']);
  });

  it('a link to nothing yet: a new regular file in its place, nothing created where it pointed', async () => {
    const { lockFile, lock } = project();
    const outside = path.join(tempDir('elsewhere'), 'missing.lock.hcl');
    fs.symlinkSync(outside, lockFile);
    const result = await lock();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(fs.lstatSync(lockFile).isFile()).toBe(true);
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(FIXTURE_LOCK_FILE);
    expect(fs.existsSync(outside)).toBe(false);
  });
});
