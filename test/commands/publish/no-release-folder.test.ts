/**
 * `provider publish` and `provider verify` run where there is no ./dist (the most likely first mistake): the
 * missing folder is reported first, whatever else is missing (key, organization, token), exit 2, naming the
 * folder looked for; the hint names the command that is running and nothing is sent anywhere. The built CLI,
 * spawned in temp folders, in CI mode and on a pseudo-terminal.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { emulatorPerTest } from '../../helpers/emulator/index.js';
import { ensureBuilt, spawnCli, spawnOnTerminal } from '../../helpers/spawn-cli.js';
import { SIGNER_KEY, expectNoSecrets } from './helpers.js';
import { tempRoot } from '../../helpers/tmp.js';

const emulator = emulatorPerTest();

beforeAll(ensureBuilt, 120_000);

describe('no ./dist: the folder is reported first', () => {
  for (const command of ['publish', 'verify']) {
    it(`${command} with nothing else given says there is no release folder; the hint names ${command}`, async () => {
      const cwd = tempRoot();
      const result = await spawnCli([command], cwd);
      expect(result.exitCode, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        `error: No release folder here: ${path.join(cwd, 'dist')} does not exist`,
      );
      expect(result.stderr).toContain(`provider ${command} <folder>`);
      const other = command === 'publish' ? 'verify' : 'publish';
      expect(result.stderr).not.toContain(`provider ${other}`);
      expect(result.stderr).not.toMatch(/public key|organization|token/i);
    });
  }

  it('publish with every other setting given sends nothing and names the folder it looked for', async () => {
    const e = await emulator();
    const cwd = tempRoot();
    const args = ['publish', '--hostname', e.url, '--organization', e.organization, '--key', SIGNER_KEY];
    const result = await spawnCli(args, cwd, { TFE_TOKEN: e.ownerToken });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain(`No release folder here: ${path.join(cwd, 'dist')} does not exist`);
    expect(result.stderr).toContain('provider publish <folder>');
    expect(result.stderr).not.toContain('provider verify');
    expect(e.requestLog.records).toEqual([]);
    expectNoSecrets(result.stdout + result.stderr, e, 'the output');
  });

  it('a folder given on the command line is the one named; --json carries it in details.dir', async () => {
    const cwd = tempRoot();
    const result = await spawnCli(['publish', 'build/out', '--json'], cwd);
    expect(result.exitCode).toBe(2);
    const doc = JSON.parse(result.stdout) as { ok: boolean; error: Record<string, unknown> };
    expect(doc.ok).toBe(false);
    expect(doc.error.code).toBe('usage');
    expect(doc.error.message).toBe(`No release folder here: ${path.join(cwd, 'build/out')} does not exist`);
    expect(doc.error.details).toEqual({ dir: path.join(cwd, 'build/out') });
    expect(doc.error.hint).toContain('provider publish <folder>');
  });

  it('a file where the folder should be is said to be no folder', async () => {
    const cwd = tempRoot();
    fs.writeFileSync(path.join(cwd, 'dist'), 'not a folder\n');
    const result = await spawnCli(['verify'], cwd);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`No release folder here: ${path.join(cwd, 'dist')} is not a folder`);
    expect(result.stderr).toContain('provider verify <folder>');
  });

  it('on a terminal, publish shows the same message and a hint naming publish', async () => {
    const cwd = tempRoot();
    const result = await spawnOnTerminal(['publish'], cwd);
    expect(result.exitCode, result.stdout).toBe(2);
    expect(result.stdout).toMatch(/error:\S* No release folder here: \S+\/dist does not exist/);
    expect(result.stdout).toMatch(/hint:\S* .*provider publish <folder>/);
    expect(result.stdout).not.toContain('provider verify');
    expect(result.stdout).not.toMatch(/public key|organization/i);
  });
});
