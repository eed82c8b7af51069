/**
 * Network shaping (`--latency`, `--bandwidth`, `--total-bandwidth`): every request waits the latency before it
 * is handled; archivist bodies, both ways, are paced to the rate of their connection — one budget per
 * connection, so parallel connections each get the full rate — and to a rate all connections share — one budget
 * each way, so parallel connections split it — and arrive intact. The budgets are checked on a clock the test
 * moves; of real elapsed time only lower bounds are asserted: a busy machine may be slower, never faster.
 */
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { emulatorOptionsFromFlags, type EmulateFlags } from '../../src/commands/emulate.js';
import { Shaper, parseRate } from '../../src/emulator/shaping.js';
import { runCli } from '../helpers/cli.js';
import {
  call,
  clients,
  download,
  emulatorPerTest,
  expectSuccess,
  linkOf,
  loadRelease,
  providerPaths,
  publishFixture,
  upload,
} from '../helpers/emulator/index.js';

const start = emulatorPerTest();
const MiB = 1024 * 1024;

function flags(extra: Partial<EmulateFlags>): EmulateFlags {
  return { host: '127.0.0.1', port: '0', linkTtl: '25h', ...extra };
}

async function elapsed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

describe('parseRate', () => {
  it.each([
    ['25MB/s', 25_000_000],
    ['25MiB/s', 25 * MiB],
    ['800KB/s', 800_000],
    ['512KiB/s', 512 * 1024],
    ['1GB/s', 1_000_000_000],
    ['1.5MB/s', 1_500_000],
    ['25mb', 25_000_000],
    ['25MBps', 25_000_000],
    ['4096', 4096],
  ])('reads %s as %d bytes per second', (text, bytes) => {
    expect(parseRate(text, '--bandwidth')).toBe(bytes);
  });

  it.each(['fast', '0', '0MB/s', '-1MB/s', '25MB/h', '25 Mbit/s', ''])(
    'refuses %j, naming the flag',
    (text) => {
      expect(() => parseRate(text, '--bandwidth')).toThrow(UsageError);
      expect(() => parseRate(text, '--bandwidth')).toThrow(/--bandwidth/);
    },
  );
});

describe('the flags', () => {
  it('turn into latency and bandwidth options', () => {
    const options = emulatorOptionsFromFlags(
      flags({ latency: '40ms', bandwidth: '25MB/s', totalBandwidth: '50MB/s' }),
      '/',
      {},
    );
    expect(options).toMatchObject({ latencyMs: 40, bandwidth: 25_000_000, totalBandwidth: 50_000_000 });
  });

  it('shape nothing when absent', () => {
    const options = emulatorOptionsFromFlags(flags({}), '/', {});
    expect(options.latencyMs).toBeUndefined();
    expect(options.bandwidth).toBeUndefined();
    expect(options.totalBandwidth).toBeUndefined();
  });

  it('are refused with exit 2 when malformed', async () => {
    for (const args of [
      ['--latency', 'soon'],
      ['--bandwidth', 'fast'],
      ['--total-bandwidth', '0MB/s'],
    ]) {
      const result = await runCli(['emulate', ...args]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(args[0]);
    }
  });

  it('are listed in the help', async () => {
    const result = await runCli(['emulate', '--help']);
    expect(result.stdout).toContain('--latency <duration>');
    expect(result.stdout).toContain('--bandwidth <rate>');
    expect(result.stdout).toContain('--total-bandwidth <rate>');
  });
});

/** A clock the test moves by hand, in milliseconds. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('the per-connection budget', () => {
  const socket = (): Socket => ({}) as Socket;

  it('holds bytes back for length / rate, adding up on one connection', () => {
    const clock = manualClock();
    const shaper = new Shaper({ bytesPerSecond: 1_000_000 }, clock.now);
    const one = socket();
    // The first chunk may use the 20 ms credit; the second queues behind it.
    expect(shaper.delayMs(one, 1_000_000, 'up')).toBe(980);
    expect(shaper.delayMs(one, 1_000_000, 'up')).toBe(1980);
    clock.advance(1980);
    expect(shaper.delayMs(one, 1_000_000, 'up')).toBe(1000);
  });

  it('gives every connection its own rate', () => {
    const clock = manualClock();
    const shaper = new Shaper({ bytesPerSecond: 1_000_000 }, clock.now);
    const [a, b] = [socket(), socket()];
    expect(shaper.delayMs(a, 1_000_000, 'up')).toBe(980);
    expect(shaper.delayMs(b, 1_000_000, 'up')).toBe(980);
  });

  it('lets small chunks through at once while under the rate', () => {
    const shaper = new Shaper({ bytesPerSecond: 1_000_000 }, manualClock().now);
    expect(shaper.delayMs(socket(), 1000, 'up')).toBe(0);
    expect(new Shaper({}).delayMs(socket(), 1e9, 'up')).toBe(0);
    expect(new Shaper({}).pacing).toBe(false);
  });
});

describe('the shared (total) budget', () => {
  const socket = (): Socket => ({}) as Socket;

  it('makes parallel connections split the rate', () => {
    const clock = manualClock();
    const shaper = new Shaper({ totalBytesPerSecond: 1_000_000 }, clock.now);
    expect(shaper.pacing).toBe(true);
    const [a, b, c] = [socket(), socket(), socket()];
    // Three connections each send 100 kB at once: the link carries them one after another, 100 ms each.
    expect(shaper.delayMs(a, 100_000, 'up')).toBe(80);
    expect(shaper.delayMs(b, 100_000, 'up')).toBe(180);
    expect(shaper.delayMs(c, 100_000, 'up')).toBe(280);
    // Once the link has carried them it is free again (less the credit).
    clock.advance(280);
    expect(shaper.delayMs(a, 100_000, 'up')).toBe(100);
  });

  it('has one budget for uploads and another for downloads', () => {
    const clock = manualClock();
    const shaper = new Shaper({ totalBytesPerSecond: 1_000_000 }, clock.now);
    expect(shaper.delayMs(socket(), 100_000, 'up')).toBe(80);
    expect(shaper.delayMs(socket(), 100_000, 'down')).toBe(80);
    expect(shaper.delayMs(socket(), 100_000, 'up')).toBe(180);
  });

  it('over a per-connection limit, holds a chunk back by the slower of the two', () => {
    const clock = manualClock();
    // 1 MB/s per connection, 1.5 MB/s in total: one connection is held by its own rate, two by the total.
    const shaper = new Shaper({ bytesPerSecond: 1_000_000, totalBytesPerSecond: 1_500_000 }, clock.now);
    const [a, b] = [socket(), socket()];
    expect(shaper.delayMs(a, 100_000, 'up')).toBe(80);
    // b's own link is free (80 ms), the shared one is busy with a's chunk until ~113 ms.
    expect(shaper.delayMs(b, 100_000, 'up')).toBeCloseTo(113.33, 1);
  });
});

describe('a shaped emulator', () => {
  it('delays every request by the latency', async () => {
    const emulator = await start({ latencyMs: 120 });
    for (const path of ['/healthz', '/api/v2/ping']) {
      const { ms, value } = await elapsed(() => call(emulator.url, 'GET', path));
      expect(value.status).toBeLessThan(300);
      expect(ms).toBeGreaterThanOrEqual(118);
    }
  });

  it('paces an upload and its download to the bandwidth, and keeps the bytes intact', async () => {
    // 4 MiB/s: 1 MiB takes at least a quarter of a second, less the 20 ms credit.
    const emulator = await start({ bandwidth: 4 * MiB });
    const release = loadRelease();
    const published = await publishFixture(emulator, { platforms: [] });
    const bytes = new Uint8Array(MiB).map((_, i) => (i * 7919) % 251);
    const put = await elapsed(() => upload(linkOf(published.version, 'shasums-upload'), bytes));
    expectSuccess(put.value);
    expect(put.ms).toBeGreaterThanOrEqual(200);

    const { owner } = clients(emulator);
    const org = emulator.organization;
    const version = await owner.get(providerPaths(org, release.name).version(release.version));
    const get = await elapsed(() => download(linkOf(version.json, 'shasums-download')));
    expect(get.value.status).toBe(200);
    expect(get.ms).toBeGreaterThanOrEqual(200);
    expect(Buffer.compare(get.value.bytes, Buffer.from(bytes))).toBe(0);
  });

  it('serves parallel downloads through a shared total bandwidth, bytes intact', async () => {
    const emulator = await start({ totalBandwidth: 8 * MiB });
    const release = loadRelease();
    const published = await publishFixture(emulator, { platforms: [] });
    const bytes = new Uint8Array(MiB / 2).map((_, i) => (i * 7919) % 251);
    expectSuccess(await upload(linkOf(published.version, 'shasums-upload'), bytes));
    const { owner } = clients(emulator);
    const version = await owner.get(
      providerPaths(emulator.organization, release.name).version(release.version),
    );
    const link = linkOf(version.json, 'shasums-download');
    const gets = await Promise.all([download(link), download(link), download(link)]);
    for (const get of gets) {
      expect(get.status).toBe(200);
      expect(Buffer.compare(get.bytes, Buffer.from(bytes))).toBe(0);
    }
  });
});
