/**
 * One registry session per command run: the settings and the token are resolved once (so `--token`'s warning
 * is printed once, even by `publish`, which verifies first) and one HTTP client serves the whole run. The
 * client factory is wrapped here to count the clients a run builds; the built bin is spawned for the warning.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import type * as Http from '../../src/registry/http.js';
import { runCli } from '../helpers/cli.js';
import { addGpgKey, clients, emulatorPerTest, publishFixture } from '../helpers/emulator/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import type { CliResult } from '../helpers/result.js';
import { tempRoot } from '../helpers/tmp.js';
import { ensureBuilt } from '../helpers/spawn-cli.js';
import { FAST, RELEASE, SIGNER_KEY } from './publish/helpers.js';

const built = vi.hoisted(() => ({ clients: 0 }));

vi.mock('../../src/registry/http.js', async (importOriginal) => {
  const actual = await importOriginal<typeof Http>();
  return {
    ...actual,
    createRegistryClient: (...args: Parameters<typeof actual.createRegistryClient>) => {
      built.clients += 1;
      return actual.createRegistryClient(...args);
    },
  };
});

const emulator = emulatorPerTest();
const WARNING = '--token is visible';

/** How many times `needle` occurs in `text`. */
function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Runs `provider <argv> --hostname … --organization …` in-process with the owner token in TFE_TOKEN. */
function provider(e: Emulator, argv: string[], cwd = tempRoot()): Promise<CliResult> {
  return runCli([...argv, '--hostname', e.url, '--organization', e.organization], {
    env: { TFE_TOKEN: e.ownerToken, ...FAST },
    cwd,
  });
}

describe('one HTTP client per command run', () => {
  beforeEach(() => {
    built.clients = 0;
  });

  it('publish, verifying against the registered keys first, builds one client', async () => {
    const e = await emulator();
    await addGpgKey(clients(e).owner, e.organization, 'signer');
    const result = await provider(e, ['publish', RELEASE]);
    expect(result.exitCode, result.stderr).toBe(0);
    // The key lookup went through the registry: the run did need the network for verification.
    expect(e.requestLog.records.some((r) => r.method === 'GET' && r.path.endsWith('/gpg-keys'))).toBe(true);
    expect(built.clients).toBe(1);
  });

  it('publish --dry-run with --key builds one client', async () => {
    const e = await emulator();
    const result = await provider(e, ['publish', RELEASE, '--key', SIGNER_KEY, '--dry-run']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(built.clients).toBe(1);
  });

  it('verify with the registry key lookup builds one client; with --key none at all', async () => {
    const e = await emulator();
    await addGpgKey(clients(e).owner, e.organization, 'signer');
    const looked = await provider(e, ['verify', RELEASE]);
    expect(looked.exitCode, looked.stderr).toBe(0);
    expect(looked.stderr).toContain('the keys registered for');
    expect(built.clients).toBe(1);

    built.clients = 0;
    const offline = await provider(e, ['verify', RELEASE, '--key', SIGNER_KEY]);
    expect(offline.exitCode, offline.stderr).toBe(0);
    expect(built.clients).toBe(0);
  });

  it('versions list/show, platforms list/show, check, gpg-keys list/add and delete build one client each', async () => {
    const e = await emulator();
    const all = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];
    await publishFixture(e, { platforms: all, uploads: ['sums', 'sig', ...all] });
    const runs: string[][] = [
      ['versions', 'list', '--name', 'example'],
      ['versions', 'show', '1.2.3', '--name', 'example'],
      ['platforms', 'list', '1.2.3', '--name', 'example'],
      ['platforms', 'show', '1.2.3', 'linux_amd64', '--name', 'example'],
      ['check', '1.2.3', '--name', 'example'],
      ['gpg-keys', 'list'],
      ['gpg-keys', 'add', path.join(REPO_ROOT, 'fixtures', 'keys', 'other.pub.asc')],
      ['delete', '1.2.3', '--name', 'example', '--platform', 'linux_amd64', '--yes'],
      ['delete', '1.2.3', '--name', 'example', '--yes'],
    ];
    for (const argv of runs) {
      built.clients = 0;
      const result = await provider(e, argv);
      expect(result.exitCode, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
      expect(built.clients, argv.join(' ')).toBe(1);
    }
  });
});

describe('--token is warned about once per run', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  /** `node bin/provider.cjs <args> --hostname … --organization … --token <owner token>`, spawned. */
  function spawned(e: Emulator, args: string[]): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(
      process.execPath,
      [
        path.join(REPO_ROOT, 'bin', 'provider.cjs'),
        ...args,
        '--hostname',
        e.url,
        '--organization',
        e.organization,
        '--token',
        e.ownerToken,
      ],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: tempRoot(), ...FAST },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  }

  it('by publish, whose verification looks the key up on the registry with the same token', async () => {
    const e = await emulator();
    await addGpgKey(clients(e).owner, e.organization, 'signer');
    const result = await spawned(e, ['publish', 'fixtures/release']);
    expect(result.code, result.stderr).toBe(0);
    expect(occurrences(result.stderr, WARNING), result.stderr).toBe(1);
    expect(result.stderr).not.toContain(e.ownerToken);
  });

  it('by verify, and by publish --key', async () => {
    const e = await emulator();
    await addGpgKey(clients(e).owner, e.organization, 'signer');
    const verified = await spawned(e, ['verify', 'fixtures/release']);
    expect(verified.code, verified.stderr).toBe(0);
    expect(occurrences(verified.stderr, WARNING), verified.stderr).toBe(1);
    const keyed = await spawned(e, ['publish', 'fixtures/release', '--key', 'fixtures/keys/signer.pub.asc']);
    expect(keyed.code, keyed.stderr).toBe(0);
    expect(occurrences(keyed.stderr, WARNING), keyed.stderr).toBe(1);
  });
});
