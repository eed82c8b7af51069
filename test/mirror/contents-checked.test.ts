/**
 * A zip the origin signed whose contents do not hold (an entry that does not inflate to its CRC-32): its SHA-256
 * matches the signed SHA256SUMS, so only the check of the zip's contents finds it. Into a private registry the
 * staged folder is handed to publish, whose upload of each zip checks its contents as it reads it and holds its
 * last part back until they hold (the mirror does not check them a second time); into `--to-dir` the mirror
 * checks them itself. Either way the version fails with exit 3 naming the zip, and nothing of it is kept: the
 * zip is never uploaded complete and the registry ends as it was (what the run created is removed again), and
 * no folder is left.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { FAST, watchPlatformId, writeRequests } from '../commands/publish/helpers.js';
import { FIXTURES, signDetached } from '../release/helpers.js';
import { buildRelease, hostDir, mirrorInto, type OriginRelease, sha, startOrigin } from './origin.js';

const emulator = emulatorPerTest();
const BROKEN = 'terraform-provider-example_1.2.3_linux_amd64.zip';

/** The release with BROKEN's stored CRC-32 changed, then listed and signed again: the origin signed it so. */
async function signedBrokenRelease(): Promise<OriginRelease> {
  const release = await buildRelease('1.2.3', ['darwin_arm64', 'linux_amd64']);
  const zip = Buffer.from(release.zips.get(BROKEN)!);
  // The local header's CRC-32 (offset 14) and the central directory's (offset 16 of its record).
  zip.writeUInt32LE(zip.readUInt32LE(14) ^ 1, 14);
  const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  zip.writeUInt32LE(zip.readUInt32LE(central + 16) ^ 1, central + 16);
  release.zips.set(BROKEN, zip);
  const sums = release.sums
    .toString('utf8')
    .split('\n')
    .map((line) => (line.endsWith(`  ${BROKEN}`) ? `${sha(zip)}  ${BROKEN}` : line))
    .join('\n');
  release.sums = Buffer.from(sums);
  const secret = fs.readFileSync(path.join(FIXTURES, 'keys', 'signer.sec.asc'), 'utf8');
  release.sig = Buffer.from(await signDetached(release.sums, secret));
  return release;
}

describe('provider mirror: a signed zip whose contents do not hold', () => {
  it.each([
    ['downloaded first', false],
    ['streamed from an origin that answers ranges', true],
  ])(
    'into a private registry (%s): exit 3 naming the zip, never uploaded complete, the registry as it was',
    async (_, ranges) => {
      const origin = await startOrigin([await signedBrokenRelease()], { ranges });
      const e = await emulator();
      const brokenId = watchPlatformId(e, 'linux', 'amd64');
      const cwd = tempRoot();
      const tmp = path.join(cwd, 'tmp');
      fs.mkdirSync(tmp);
      const result = await mirrorInto(origin, e, cwd, { tmpDir: tmp });
      expect(result.exitCode, result.stderr).toBe(3);
      expect(result.stderr).toContain(BROKEN);
      expect(result.stderr).toMatch(/CRC/i);
      // Every zip was downloaded; the broken one never reached the registry whole, and nothing of the run stays.
      expect(origin.requests.filter((p) => p.endsWith('.zip'))).toHaveLength(2);
      // (A zip this small is one chunk, held back whole: its request may not even have reached the host.)
      expect(brokenId(), 'its platform was created').toBeDefined();
      const puts = e.requestLog.records.filter((r) => r.method === 'PUT' && r.owner === brokenId());
      for (const put of puts) expect(put.status, 'a PUT of the broken zip completed').not.toBe(200);
      // The signing key it registered stays: a public key, not release content.
      const { providers, versions, platforms } = e.store.data;
      expect({ providers, versions, platforms }).toEqual({ providers: [], versions: [], platforms: [] });
      expect(writeRequests(e).filter((w) => w.startsWith('DELETE'))).toHaveLength(2);
      expect(fs.readdirSync(tmp)).toEqual([]);
    },
  );

  it('into --to-dir: exit 3 naming the zip, and no folder of the version', async () => {
    const origin = await startOrigin([await signedBrokenRelease()]);
    const cwd = tempRoot();
    const result = await runCli(['mirror', 'acme/example', '--from', origin.url, '--to-dir', 'out'], {
      cwd,
      homeDir: cwd,
      env: FAST,
    });
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain(BROKEN);
    expect(fs.existsSync(path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example', '1.2.3'))).toBe(false);
  });
});
