/**
 * How often the mirror runs a whole `provider verify` of a staged version (src/release/verify.ts, which hashes
 * and inflates every zip): into a private registry never, because publish's core checks every zip's contents
 * before its first write and a second pass would read and inflate every byte again; into `--to-dir` once per
 * version, because nothing after the mirror checks that folder. test/mirror/contents-checked.test.ts proves that
 * a zip whose contents do not hold is caught on both paths.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as verify from '../../src/release/verify.js';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { FAST } from '../commands/publish/helpers.js';
import { buildRelease, hostDir, mirrorInto, startOrigin } from './origin.js';

vi.mock('../../src/release/verify.js', async (original) => {
  const actual = await original<typeof verify>();
  return { ...actual, verifyRelease: vi.fn(actual.verifyRelease) };
});

const emulator = emulatorPerTest();
const verifyRelease = vi.mocked(verify.verifyRelease);

beforeEach(() => {
  verifyRelease.mockClear();
});

describe('provider mirror: one check of each version', () => {
  it('into a private registry: no verify of its own; publish checks the contents, and they arrive', async () => {
    const origin = await startOrigin([
      await buildRelease('1.2.3', ['darwin_arm64', 'linux_amd64']),
      await buildRelease('1.3.0', ['linux_amd64']),
    ]);
    const e = await emulator();
    const cwd = tempRoot();
    const result = await mirrorInto(origin, e, cwd, {}, '--versions', '>= 1.0.0');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(e.store.data.versions.map((v) => v.version).sort()).toEqual(['1.2.3', '1.3.0']);
    expect(verifyRelease).not.toHaveBeenCalled();
  });

  it('into --to-dir: one verify per version, of the staged folder', async () => {
    const origin = await startOrigin([
      await buildRelease('1.2.3', ['darwin_arm64', 'linux_amd64']),
      await buildRelease('1.3.0', ['linux_amd64']),
    ]);
    const cwd = tempRoot();
    const result = await runCli(
      ['mirror', 'acme/example', '--versions', '>= 1.0.0', '--from', origin.url, '--to-dir', 'out'],
      {
        cwd,
        homeDir: cwd,
        env: FAST,
      },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(fs.readdirSync(path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example')).sort()).toEqual([
      '1.2.3',
      '1.3.0',
    ]);
    expect(verifyRelease).toHaveBeenCalledTimes(2);
  });
});
