/**
 * Release files that change between verification and upload: a zip rewritten (same size), shrunk, grown or
 * removed after `publish` verified it is never uploaded complete; publish exits 3 naming it, consumers are
 * never served the changed bytes, and a run after the file is restored finishes the job. SHA256SUMS and its
 * signature are uploaded from the verified bytes in memory, whatever happens to them on disk meanwhile.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { emulatorPerTest, loadRelease, onRequestStart } from '../../helpers/emulator/index.js';
import { copyRelease } from '../../release/helpers.js';
import {
  PLATFORMS,
  expectComplete,
  expectRunUndone,
  jsonOf,
  publish,
  servedToConsumers,
  watchPlatformId,
  writes,
} from './helpers.js';
import { aStringMatching } from '../../helpers/matchers.js';

const emulator = emulatorPerTest();
const fixture = loadRelease();
const ZIP = 'terraform-provider-example_1.2.3_linux_amd64.zip';
const SUMS = 'terraform-provider-example_1.2.3_SHA256SUMS';
const SIG = `${SUMS}.sig`;

/**
 * Runs `change` once, at the first write publish sends: verification is over (the registry's side is read while
 * the files are hashed, so a read may come sooner), no upload has started.
 */
function afterVerification(e: Emulator, change: () => void): void {
  let done = false;
  onRequestStart(e, ({ method }) => {
    if (done || method === 'GET') return;
    done = true;
    change();
  });
}

/**
 * The linux_amd64 platform's stored state and the PUTs of its zip answered 200 (`id`: its id, from
 * `watchPlatformId`, as the run that failed removed what it created).
 */
function linuxAmd64(e: Emulator, id: string | undefined) {
  const platform = e.store.data.platforms.find((p) => p.os === 'linux' && p.arch === 'amd64');
  expect(id, 'linux_amd64 was created').toBeDefined();
  const puts = e.requestLog.records.filter((r) => r.method === 'PUT' && r.owner === id);
  return { uploaded: platform?.binary.uploadedAt != null, completed: puts.filter((r) => r.status === 200) };
}

describe('provider publish when a release file changes after verification', () => {
  const CHANGES = [
    {
      change: 'rewritten with the same size',
      apply: (file: string) => {
        const bytes = fs.readFileSync(file);
        bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
        fs.writeFileSync(file, bytes);
      },
      how: /it now hashes to [0-9a-f]{64}, not [0-9a-f]{64}/,
    },
    {
      change: 'shrunk',
      apply: (file: string) => fs.truncateSync(file, 100),
      how: /it now has 100 bytes, not \d+/,
    },
    {
      change: 'grown',
      apply: (file: string) => fs.appendFileSync(file, Buffer.alloc(4096)),
      how: /it now has more than \d+ bytes/,
    },
    {
      change: 'removed',
      apply: (file: string) => fs.rmSync(file),
      how: /it cannot be read any more \(ENOENT\)/,
    },
  ];
  // Both orders: by default the read that uploads the zip is its first; with --verify-first it is read again,
  // checked against the verification's chunk digests.
  const CASES = CHANGES.flatMap((c) => [
    { ...c, order: 'the default order', extra: [] as string[] },
    { ...c, order: '--verify-first', extra: ['--verify-first'] },
  ]);
  it.each(CASES)(
    'a zip $change ($order): exit 3 naming it, never uploaded complete, never served; a re-run after restoring it completes',
    async ({ apply, how, extra }) => {
      const e = await emulator();
      const dist = copyRelease();
      const file = path.join(dist, ZIP);
      afterVerification(e, () => apply(file));
      const id = watchPlatformId(e, 'linux', 'amd64');
      const result = await publish(e, extra, { release: dist });
      expect(result.exitCode, result.stderr).toBe(3);
      expect(result.stderr).toMatch(
        new RegExp(`error: ${ZIP.replaceAll('.', '\\.')} changed since it was verified: ${how.source}`),
      );
      expect(result.stderr).toMatch(/hint: .*Restore the file .*run the same command again/);
      expect(result.stdout).not.toContain('consumer check passed');
      // Its zip never arrived complete, and what the run created (the platform with it) is gone.
      expect(linuxAmd64(e, id())).toEqual({ uploaded: false, completed: [] });
      expectRunUndone(e);
      expect((await servedToConsumers(e)).has('linux_amd64')).toBe(false);

      // Restored, the same command finishes the job, and consumers get the release's bytes.
      fs.writeFileSync(file, fixture.zip('linux', 'amd64').bytes);
      e.requestLog.clear();
      const again = await publish(e, [], { release: dist });
      expect(again.exitCode, again.stderr).toBe(0);
      expect(writes(e)).toContain('upload linux_amd64');
      expectComplete(e);
      await expectServedAsReleased(e);
    },
  );

  it('--json: the error document names the file, and nothing is printed as published', async () => {
    const e = await emulator();
    const dist = copyRelease();
    afterVerification(e, () => fs.truncateSync(path.join(dist, ZIP), 0));
    const id = watchPlatformId(e, 'linux', 'amd64');
    const result = await publish(e, ['--json'], { release: dist });
    expect(result.exitCode).toBe(3);
    expect(jsonOf(result)).toMatchObject({
      ok: false,
      error: {
        code: 'verification',
        message: `${ZIP} changed since it was verified: it now has 0 bytes, not ${fixture.zip('linux', 'amd64').bytes.length}`,
        hint: aStringMatching(/run the same command again/),
        details: { file: ZIP },
      },
    });
    expect(linuxAmd64(e, id())).toEqual({ uploaded: false, completed: [] });
    expectRunUndone(e);
  });

  it('uploads SHA256SUMS and its signature from the verified bytes in memory, whatever happens to them on disk', async () => {
    const e = await emulator();
    const dist = copyRelease();
    afterVerification(e, () => {
      fs.writeFileSync(path.join(dist, SUMS), 'not the verified checksums\n');
      fs.truncateSync(path.join(dist, SIG), 10);
    });
    const result = await publish(e, [], { release: dist });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('consumer check passed');
    const [version] = e.store.data.versions;
    expect(fs.readFileSync(e.store.objectPath(version!.shasums.key)).equals(fixture.sums)).toBe(true);
    expect(fs.readFileSync(e.store.objectPath(version!.shasumsSig.key)).equals(fixture.sig)).toBe(true);
    await expectServedAsReleased(e);
  });
});

/** Every platform is served to consumers, each with the fixture release's bytes. */
async function expectServedAsReleased(e: Emulator): Promise<void> {
  const served = await servedToConsumers(e);
  expect([...served.keys()].sort()).toEqual(PLATFORMS);
  for (const zip of fixture.zips) {
    expect(served.get(`${zip.os}_${zip.arch}`)?.equals(zip.bytes), zip.filename).toBe(true);
  }
}
