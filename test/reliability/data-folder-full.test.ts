/**
 * The emulator's data folder full: nothing lost, nothing crashed. Each seed starts an emulator on a data folder
 * with only a few KiB left (0 to 96 KiB, from the seed; the whole release needs about 60) and runs `provider publish` of the fixture release against
 * it: the disk fills somewhere among the creates, the uploads and the state saves. Whatever the client was
 * told, memory and `state.json` must agree after the run, no `.tmp`, `.part` or `.old` file may be left, every
 * file flagged uploaded must have its bytes on disk, and the emulator must keep answering. Then the space comes
 * back, the emulator restarts on the same folder with the same state, and the same publish finishes (exit 0):
 * complete and byte-identical.
 *
 * The full disk is real where this machine allows it (root: a 4 MiB tmpfs, filled with a filler file); elsewhere
 * (not root, or mount refused with EPERM) writes under the data folder fail with ENOSPC past the seed's budget
 * (an injected failure of `writeFileSync` and `createWriteStream`; PROVIDER_FULL_DISK=injected forces it). The
 * test's name and the report say which ran.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import { publishArgs } from '../commands/publish/helpers.js';
import { tempDir } from '../helpers/tmp.js';
import { REPLAYING, expectPublishedExactly, report, seeded, seedsFor, tail } from './helpers.js';

/** Injected mode: the bytes still free under `root` (undefined when the disk is real). */
const budget: { root?: string; left: number } = { left: 0 };

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  const inside = (file: unknown) => budget.root !== undefined && String(file).startsWith(budget.root);
  const take = (bytes: number): boolean => {
    if (bytes > budget.left) {
      budget.left = 0;
      return false;
    }
    budget.left -= bytes;
    return true;
  };
  const writeFileSync: typeof real.writeFileSync = (file, data, options) => {
    if (inside(file) && !take(typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength)) {
      real.writeFileSync(file, '', options);
      throw enospc();
    }
    real.writeFileSync(file, data, options);
  };
  const createWriteStream = ((file: fs.PathLike, options?: Parameters<typeof real.createWriteStream>[1]) => {
    const stream = real.createWriteStream(file, options);
    if (!inside(file)) return stream;
    const write = stream._write.bind(stream);
    // One chunk at a time, so that each is counted against the budget.
    (stream as { _writev?: unknown })._writev = undefined;
    stream._write = (chunk: Buffer, encoding, callback) => {
      if (!take(chunk.length)) return callback(enospc());
      write(chunk, encoding, callback);
    };
    return stream;
  }) as typeof real.createWriteStream;
  const patched = { ...real, writeFileSync, createWriteStream };
  return { ...patched, default: patched };
});

const SEEDS = seedsFor(920_001, 12);
const MOUNT_SIZE = 4 * 1024 * 1024;

/** Mounts a tmpfs when allowed: the full disk is then real. */
function mountTmpfs(): { dir: string; mounted: boolean; why?: string } {
  const dir = tempDir('full-disk');
  if (process.env.PROVIDER_FULL_DISK === 'injected')
    return { dir, mounted: false, why: 'PROVIDER_FULL_DISK=injected' };
  if (process.getuid?.() !== 0) return { dir, mounted: false, why: 'not root' };
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${MOUNT_SIZE}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir, mounted: true };
  } catch (error) {
    return { dir, mounted: false, why: String((error as { stderr?: Buffer }).stderr ?? error).trim() };
  }
}

const disk = mountTmpfs();
const MODE = disk.mounted ? 'a real full tmpfs' : `an injected ENOSPC (${disk.why ?? 'mount refused'})`;
const outcomes = { exits: new Map<number, number>(), failedWrites: 0 };

afterAll(() => {
  // Lazy: the worker may still hold a handle on the folder for a moment after the last emulator closed.
  // tempDir removes the folder after this hook, once it is unmounted.
  if (disk.mounted) execFileSync('umount', ['-l', disk.dir]);
  if (!REPLAYING) {
    report(
      `data folder full (${MODE}): ${SEEDS.length} seeds, first publish exits ${[...outcomes.exits]
        .map(([code, n]) => `${code}×${n}`)
        .join(' ')}, ${outcomes.failedWrites} answers 500 for a write that could not be saved`,
    );
  }
});

/** Takes the space away, leaving `free` bytes (a filler file on the tmpfs, or the injected budget). */
function fill(root: string, free: number): void {
  if (!disk.mounted) {
    budget.root = root;
    budget.left = free;
    return;
  }
  const filler = path.join(disk.dir, 'filler');
  const fd = fs.openSync(filler, 'a');
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch {
    // Full; now give `free` bytes back.
  } finally {
    fs.closeSync(fd);
  }
  const size = fs.statSync(filler).size;
  fs.truncateSync(filler, Math.max(0, size - free));
}

function unfill(): void {
  budget.root = undefined;
  fs.rmSync(path.join(disk.dir, 'filler'), { force: true });
}

/** What must hold of a data folder whatever happened: memory = disk, no leftovers, bytes for every flag. */
function expectConsistent(e: Emulator, dataDir: string, where: string): void {
  const onDisk = fs.readFileSync(path.join(dataDir, 'state.json'), 'utf8');
  expect(JSON.parse(onDisk), `${where}: state.json holds what the emulator holds in memory`).toEqual(
    JSON.parse(JSON.stringify(e.store.data)),
  );
  const leftovers = fs.readdirSync(dataDir, { recursive: true }).map(String);
  expect(
    leftovers.filter((f) => /\.(tmp|part|old)$/.test(f)),
    `${where}: temporary files left`,
  ).toEqual([]);
  const objects = [
    ...e.store.data.versions.flatMap((v) => [v.shasums, v.shasumsSig]),
    ...e.store.data.platforms.map((p) => p.binary),
  ];
  for (const object of objects.filter((o) => o.uploadedAt !== null)) {
    const file = e.store.objectPath(object.key);
    expect(fs.existsSync(file) && fs.statSync(file).size, `${where}: bytes of ${object.key}`).toBe(
      object.bytes,
    );
  }
}

async function publish(e: Emulator, work: string): Promise<{ exitCode: number; output: string }> {
  const env = {
    TFE_TOKEN: e.ownerToken,
    NO_COLOR: '1',
    PROVIDER_POLL_INTERVAL: '5ms',
    PROVIDER_RETRY_DELAY: '1ms',
    PROVIDER_HTTP_TIMEOUT: '10s',
  };
  const result = await runCli(publishArgs(e, ['--concurrency', '3']), { env, cwd: work, homeDir: work });
  return { exitCode: result.exitCode, output: `${result.stdout}\n${result.stderr}` };
}

describe(`emulator data folder full (${MODE})`, () => {
  it.each(SEEDS)('seed %i: nothing lost, nothing crashed; the next publish completes', async (seed) => {
    const r = seeded(seed);
    const free = r.int(0, 96) * 1024 + r.int(0, 1023);
    const where = `seed ${seed} [${free} bytes free, ${MODE}]`;
    const dataDir = tempDir('data', { parent: disk.dir });
    const work = tempDir('full-disk-work');
    const errors: unknown[] = [];
    let e = await startEmulator({ dataDir, onError: (error) => errors.push(error) });
    try {
      fill(dataDir, free);
      const first = await publish(e, work);
      outcomes.exits.set(first.exitCode, (outcomes.exits.get(first.exitCode) ?? 0) + 1);
      // 0: everything fitted; 4: the API kept answering 500 (the hint says to run again).
      expect([0, 4], `${where}: first exit\n${tail(first.output)}`).toContain(first.exitCode);
      const ping = await fetch(`${e.url}/api/v2/ping`);
      expect(ping.status, `${where}: still serving`).toBe(204);
      expectConsistent(e, dataDir, `${where}, disk full`);
      outcomes.failedWrites += e.requestLog.records.filter((rec) => rec.status === 500).length;
      expect(
        errors.every((error) => /ENOSPC/.test(String(error))),
        `${where}: only full-disk errors\n${errors.map(String).join('\n')}`,
      ).toBe(true);

      unfill();
      const before = JSON.stringify(e.store.data);
      await e.close();
      e = await startEmulator({ dataDir });
      expect(JSON.stringify(e.store.data), `${where}: a restart finds what was saved`).toBe(before);
      const second = await publish(e, work);
      expect(second.exitCode, `${where}: second exit\n${tail(second.output)}`).toBe(0);
      await expectPublishedExactly(e, where);
      expectConsistent(e, dataDir, `${where}, after`);
    } finally {
      unfill();
      await e.close();
    }
  });
});
