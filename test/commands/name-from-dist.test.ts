/**
 * `check`, `delete`, `versions` and `platforms` run in the folder the user just published from take the provider
 * name from ./dist when it holds releases of exactly one provider (found as `publish` finds it), and say so on
 * stderr; `--name` wins; several providers in ./dist, an empty one or none keep "No provider name given". The
 * built CLI, spawned in temp folders against an emulator holding the published fixture.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { ensureBuilt, spawnCli, spawnOnTerminal } from '../helpers/spawn-cli.js';
import { publishAll } from './helpers.js';
import { RELEASE, expectNoSecrets } from './publish/helpers.js';
import { tempRoot } from '../helpers/tmp.js';

const emulator = emulatorPerTest();
const CHATTER = 'provider name example (from ./dist)';

beforeAll(ensureBuilt, 120_000);

/** A temp project folder with the fixture release as ./dist, as goreleaser leaves it. */
function projectWithDist(): string {
  const dir = tempRoot();
  fs.cpSync(RELEASE, path.join(dir, 'dist'), { recursive: true });
  return dir;
}

/** `--hostname … --organization …` of an emulator, and its owner token in TFE_TOKEN. */
function against(e: Emulator): { args: string[]; env: Record<string, string> } {
  return { args: ['--hostname', e.url, '--organization', e.organization], env: { TFE_TOKEN: e.ownerToken } };
}

describe('the provider name from ./dist', () => {
  it('versions list, platforms list, check and delete take it when ./dist holds one provider', async () => {
    const e = await emulator();
    await publishAll(e);
    const cwd = projectWithDist();
    const { args, env } = against(e);

    const versions = await spawnCli(['versions', 'list', ...args], cwd, env);
    expect(versions.exitCode, versions.stderr).toBe(0);
    expect(versions.stderr).toContain(CHATTER);
    expect(versions.stdout).toContain('1.2.3');

    const platforms = await spawnCli(['platforms', 'list', '1.2.3', ...args], cwd, env);
    expect(platforms.exitCode, platforms.stderr).toBe(0);
    expect(platforms.stderr).toContain(CHATTER);
    expect(platforms.stdout).toContain('linux_amd64');

    const check = await spawnCli(['check', '1.2.3', ...args], cwd, env);
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stderr).toContain(CHATTER);

    const deleted = await spawnCli(['delete', '1.2.3', '--yes', ...args], cwd, env);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain(CHATTER);
    expect(e.store.data.versions).toEqual([]);
    const all = [versions, platforms, check, deleted].map((r) => r.stdout + r.stderr).join('');
    expectNoSecrets(all, e, 'the output');
  });

  it('with --json the document is unchanged and the chatter line stays on stderr', async () => {
    const e = await emulator();
    await publishAll(e);
    const { args, env } = against(e);
    const result = await spawnCli(['versions', 'list', ...args, '--json'], projectWithDist(), env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(() => JSON.parse(result.stdout) as unknown).not.toThrow();
    expect(result.stdout).not.toContain('from ./dist');
    expect(result.stderr).toContain(CHATTER);
  });

  it('on a terminal, the chatter line says where the name came from', async () => {
    const e = await emulator();
    await publishAll(e);
    const { args, env } = against(e);
    const result = await spawnOnTerminal(['versions', 'show', '1.2.3', ...args], projectWithDist(), env);
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).toContain(CHATTER);
  });

  it('--name wins over ./dist, and then nothing is said about it', async () => {
    const e = await emulator();
    await publishAll(e);
    const { args, env } = against(e);
    const result = await spawnCli(['versions', 'list', ...args, '--name', 'other'], projectWithDist(), env);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('example-org/other');
    expect(result.stderr).not.toContain('from ./dist');
  });

  it('several providers in ./dist, an empty ./dist or none: "No provider name given", nothing sent', async () => {
    const e = await emulator();
    const { args, env } = against(e);
    const several = projectWithDist();
    fs.copyFileSync(
      path.join(RELEASE, 'terraform-provider-example_1.2.3_SHA256SUMS'),
      path.join(several, 'dist', 'terraform-provider-other_1.0.0_SHA256SUMS'),
    );
    const empty = tempRoot();
    fs.mkdirSync(path.join(empty, 'dist'));
    for (const cwd of [several, empty, tempRoot()]) {
      const result = await spawnCli(['versions', 'list', ...args], cwd, env);
      expect(result.exitCode, cwd).toBe(2);
      expect(result.stderr).toContain('error: No provider name given');
      expect(result.stderr).not.toContain('from ./dist');
    }
    expect(e.requestLog.records).toEqual([]);
  });
});
