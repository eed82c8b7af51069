/**
 * The small files of a release (SHA256SUMS, its signature, the manifest) and the armored key file are read
 * whole, so each has a cap: a file above it is refused at once, naming the file, its size and the cap, before
 * a byte of it is read. The huge files are sparse (`truncate -s 1500M`): instant, and no disk used.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import { writeRequests } from '../commands/publish/helpers.js';
import { emulatorArgs, emulatorWithKeys } from '../commands/verify/helpers.js';
import { MANIFEST, SIG, SUMS, copyRelease, publicKeyPath, runCliAtHome } from './helpers.js';
import { tempRoot } from '../helpers/tmp.js';

const HUGE = 1500 * 1024 * 1024;

/** Makes `file` a sparse file of `bytes` bytes (what `truncate -s` does). */
function sparse(file: string, bytes = HUGE): void {
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, '');
  fs.truncateSync(file, bytes);
}

describe('release files above their cap', () => {
  it.each([
    [SUMS, '1 MiB'],
    [SIG, '64 KiB'],
    [MANIFEST, '64 KiB'],
  ])('%s of 1.5 GiB: exit 3 at once, naming the file, its size and the cap', async (file, cap) => {
    const dist = copyRelease();
    sparse(path.join(dist, file));
    const result = await runCliAtHome(['verify', dist, '--offline', '--key', publicKeyPath('signer')], {
      cwd: path.dirname(dist),
    });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(`${file} is 1.5 GiB`);
    expect(result.stderr).toContain(`at most ${cap}`);
    expect(result.stderr).toContain('hint:');
  });

  it('--json names the file, its size and the cap in the details', async () => {
    const dist = copyRelease();
    sparse(path.join(dist, SUMS));
    const result = await runCliAtHome(
      ['verify', dist, '--offline', '--json', '--key', publicKeyPath('signer')],
      {
        cwd: path.dirname(dist),
      },
    );
    expect(result.exitCode).toBe(3);
    const doc = JSON.parse(result.stdout) as { error: { details: Record<string, unknown> } };
    expect(doc.error.details).toEqual({ file: SUMS, bytes: HUGE, limit: 1024 * 1024 });
  });

  describe('publish', () => {
    let emulator: Emulator;
    beforeAll(async () => {
      emulator = await emulatorWithKeys();
    });
    afterAll(() => emulator.close());

    it('refuses a 1.5 GiB SHA256SUMS before any write', async () => {
      const dist = copyRelease();
      sparse(path.join(dist, SUMS));
      const { args, env } = emulatorArgs(emulator);
      const result = await runCliAtHome(['publish', dist, '--key', publicKeyPath('signer'), ...args], {
        cwd: path.dirname(dist),
        env,
      });
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toContain(`${SUMS} is 1.5 GiB`);
      expect(writeRequests(emulator)).toEqual([]);
    });
  });
});

describe('key files above their cap', () => {
  it('--key naming a 1.5 GiB file: exit 2, naming the file, its size and the cap', async () => {
    const dist = copyRelease();
    const key = path.join(path.dirname(dist), 'huge.asc');
    sparse(key);
    const result = await runCliAtHome(['verify', dist, '--offline', '--key', key], {
      cwd: path.dirname(dist),
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${key} is 1.5 GiB`);
    expect(result.stderr).toContain('at most 1 MiB');
  });

  it('gpg-keys add with a 1.5 GiB file: exit 2 before any request', async () => {
    const root = tempRoot();
    sparse(path.join(root, 'huge.asc'));
    const result = await runCli(
      ['gpg-keys', 'add', 'huge.asc', '--hostname', 'http://127.0.0.1:9', '--organization', 'acme'],
      { cwd: root, homeDir: root, env: { TFE_TOKEN: 'x', NO_COLOR: '1' } },
    );
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('huge.asc is 1.5 GiB');
    expect(result.stderr).toContain('at most 1 MiB');
  });
});
