/**
 * Publish's default order: each zip is proven by the one read that uploads it (its SHA-256 against its signed
 * SHA256SUMS line, every entry inflated with the right size and CRC-32), and the last part of its upload is held
 * back until it is. A zip that is not its signed bytes, one with an entry damaged deep inside, and one changed on
 * disk while it uploads each end with exit 3 naming the file: the file is never marked uploaded, no PUT of it
 * completes, and what the run created (the version, the provider; in a version that was there, its platforms) is
 * removed again (the request log's DELETEs); the signing key it registered stays. With --verify-first every zip
 * is read before the first write: the same bad zips write nothing at all.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import {
  emulatorPerTest,
  loadRelease,
  onRequestStart,
  publishFixture,
} from '../../helpers/emulator/index.js';
import { copyRelease, makeZip, replaceListed } from '../../release/helpers.js';
import {
  expectRunUndone,
  publish,
  servedToConsumers,
  watchPlatformId,
  writeRequests,
  writes,
} from './helpers.js';

const emulator = emulatorPerTest();
const ZIP = 'terraform-provider-example_1.2.3_linux_amd64.zip';
const EXE = 'terraform-provider-example_v1.2.3';
/** Several upload chunks (256 KiB each): the upload is well under way before the file's end is read. */
const SIZE = 3 * 1024 * 1024;

/** A copy of the fixture release whose linux_amd64 zip is a 3 MiB stored executable, listed and signed. */
async function bigRelease(): Promise<{ dist: string; file: string; zip: Buffer }> {
  const dist = copyRelease();
  const zip = makeZip([{ name: EXE, data: randomBytes(SIZE) }]);
  await replaceListed(dist, ZIP, zip);
  return { dist, file: path.join(dist, ZIP), zip };
}

/** Flips one byte of the executable's data near its end (the zip's central directory stays intact). */
function flipNearEnd(zip: Buffer): Buffer {
  const bytes = Buffer.from(zip);
  const at = 30 + EXE.length + SIZE - 100;
  bytes[at] = bytes[at]! ^ 0xff;
  return bytes;
}

/**
 * linux_amd64's zip was never uploaded complete (no PUT of it answered 200, nothing flagged), and the run removed
 * what it created: the version and the provider are gone, by DELETEs in the request log; the key stays.
 */
function expectUndone(e: Emulator, platformId: string | undefined): void {
  expect(platformId, 'linux_amd64 was created').toBeDefined();
  const puts = e.requestLog.records.filter((r) => r.method === 'PUT' && r.owner === platformId);
  expect(puts.length, 'its upload started').toBeGreaterThan(0);
  for (const put of puts) {
    expect(put.status).not.toBe(200);
    expect(put.bytes, 'the host never received the whole body').toBeLessThan(put.contentLength ?? 0);
  }
  expectRunUndone(e);
  expect(e.store.data.gpgKeys).toHaveLength(1);
}

/** The bad zips, each built into a fresh copy of the release before the run, and what the error says. */
const BAD = [
  {
    what: 'a zip whose bytes do not match its SHA256SUMS line',
    build: async () => {
      const release = await bigRelease();
      fs.writeFileSync(release.file, flipNearEnd(release.zip));
      return release;
    },
    message: new RegExp(
      `error: ${ZIP.replaceAll('.', '\\.')} does not match terraform-provider-example_1\\.2\\.3_SHA256SUMS line \\d+: the file hashes to [0-9a-f]{64}, the line says [0-9a-f]{64}`,
    ),
  },
  {
    what: 'a zip whose entry is damaged deep inside (listed and signed as it is: only its CRC-32 tells)',
    build: async () => {
      const release = await bigRelease();
      await replaceListed(release.dist, ZIP, flipNearEnd(release.zip));
      return release;
    },
    message: new RegExp(
      `error: ${ZIP.replaceAll('.', '\\.')}: the h1: lock hash cannot be computed: entry "${EXE}" cannot be read \\(its content does not match its CRC-32\\)`,
    ),
  },
];

describe('provider publish proves each zip by the read that uploads it', () => {
  it.each(BAD)(
    '$what: exit 3 naming it, never uploaded complete, what the run created removed',
    async ({ build, message }) => {
      const e = await emulator();
      const { dist } = await build();
      const id = watchPlatformId(e, 'linux', 'amd64');
      const result = await publish(e, [], { release: dist });
      expect(result.exitCode, result.stderr).toBe(3);
      expect(result.stderr).toMatch(message);
      expectUndone(e, id());
      expect(result.stderr).toContain('Removed version 1.2.3, which this run created');
      expect((await servedToConsumers(e)).size).toBe(0);
    },
  );

  // The verification's read checks each entry as it inflates, so a zip whose bytes are not its line's is
  // refused by its first damaged entry there: named either way.
  it.each(BAD)('$what, with --verify-first: exit 3 and no write at all', async ({ build }) => {
    const e = await emulator();
    const { dist } = await build();
    const result = await publish(e, ['--verify-first'], { release: dist });
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain(`error: ${ZIP}`);
    expect(writeRequests(e)).toEqual([]);
  });

  it.each([[], ['--verify-first']])(
    'a zip changed on disk while it uploads %j: exit 3 naming it, never uploaded complete, undone',
    async (...extra) => {
      const e = await emulator();
      const { dist, file, zip } = await bigRelease();
      const id = watchPlatformId(e, 'linux', 'amd64');
      // As its upload starts, its last bytes are not read yet: they change under the read.
      let changed = false;
      onRequestStart(e, (request) => {
        const key = e.store.data.platforms.find((p) => p.id === id())?.binary.key;
        if (changed || request.method !== 'PUT' || key === undefined || request.objectKey !== key) return;
        changed = true;
        fs.writeFileSync(file, flipNearEnd(zip));
      });
      const result = await publish(e, extra, { release: dist });
      expect(changed).toBe(true);
      expect(result.exitCode, result.stderr).toBe(3);
      expect(result.stderr).toMatch(
        new RegExp(
          // Rewritten in place: the read sees the new bytes, or the file cut short while it is rewritten.
          `error: ${ZIP.replaceAll('.', '\\.')} changed since it was verified: it now (hashes to [0-9a-f]{64}, not [0-9a-f]{64}|has \\d+ bytes, not \\d+)`,
        ),
      );
      expectUndone(e, id());
    },
  );

  it('a zip the registry has already (not uploaded again) is read and checked before any write', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: ['linux_amd64'], uploads: ['linux_amd64'] });
    e.requestLog.clear();
    const dist = copyRelease();
    const bytes = fs.readFileSync(path.join(dist, ZIP));
    bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
    fs.writeFileSync(path.join(dist, ZIP), bytes);
    const result = await publish(e, [], { release: dist });
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain(`error: ${ZIP}`);
    expect(writeRequests(e)).toEqual([]);
  });

  it('into a version that was there: only the platforms this run created are removed', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: ['darwin_amd64'], uploads: ['darwin_amd64'] });
    const before = e.store.data.platforms.map((p) => p.id);
    e.requestLog.clear();
    const { dist, zip, file } = await bigRelease();
    fs.writeFileSync(file, flipNearEnd(zip));
    const result = await publish(e, [], { release: dist });
    expect(result.exitCode, result.stderr).toBe(3);
    expect(e.store.data.versions).toHaveLength(1);
    expect(e.store.data.providers).toHaveLength(1);
    expect(e.store.data.platforms.map((p) => p.id)).toEqual(before);
    const deletes = e.requestLog.records.filter((r) => r.method === 'DELETE' && r.status < 300);
    expect(deletes).toHaveLength(4);
    for (const d of deletes) expect(d.path).toMatch(/\/versions\/1\.2\.3\/platforms\/[a-z]+\/[a-z0-9]+$/);
    expect(result.stderr).toMatch(/Removed platform linux_amd64 of 1\.2\.3, which this run created/);
  });

  it('a removal that fails is a warning naming what finishes it; the error stays the zip’s', async () => {
    const e = await emulator();
    e.faults.add({ method: 'DELETE', path: '/api/v2/organizations/*/registry-providers/**', status: 500 });
    const { dist, zip, file } = await bigRelease();
    fs.writeFileSync(file, flipNearEnd(zip));
    const result = await publish(e, [], { release: dist });
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toMatch(
      /version 1\.2\.3 was created by this run and could not be removed \(.*\); remove it with: provider delete 1\.2\.3/,
    );
    expect(result.stderr).toMatch(new RegExp(`error: ${ZIP.replaceAll('.', '\\.')} does not match`));
    expect(e.store.data.versions).toHaveLength(1);
  });

  it('a good release: every zip read once, by its upload, and its lock hashes reported', async () => {
    const e = await emulator();
    const { dist, zip, file } = await bigRelease();
    // Once its upload is answered, the zip on disk is damaged: a second read of it (for the lock hashes, say)
    // would fail the run.
    const id = watchPlatformId(e, 'linux', 'amd64');
    const add = e.requestLog.add.bind(e.requestLog);
    e.requestLog.add = (record) => {
      if (record.method === 'PUT' && record.status === 200 && record.owner === id())
        fs.writeFileSync(file, flipNearEnd(zip));
      add(record);
    };
    const result = await publish(e, ['--json'], { release: dist });
    expect(result.exitCode, result.stderr).toBe(0);
    const served = await servedToConsumers(e);
    expect(served.get('linux_amd64')?.equals(zip)).toBe(true);
    expect(fs.readFileSync(file).equals(zip), 'the zip was damaged after its upload').toBe(false);
    expect(writes(e).filter((w) => w === 'upload linux_amd64')).toEqual(['upload linux_amd64']);
    const doc = JSON.parse(result.stdout) as { lock: { hashes: string[] } };
    const fixture = loadRelease();
    // Each zip's zh: is its SHA256SUMS hash; the h1:s are the platforms' (one per zip).
    expect(doc.lock.hashes.filter((h) => h.startsWith('h1:'))).toHaveLength(fixture.zips.length);
  });
});
