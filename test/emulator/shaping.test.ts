/**
 * Network shaping (`--latency`, `--bandwidth`): every request waits the latency before it is handled; archivist
 * bodies, both ways, are paced to the rate of their connection — one budget per connection, so parallel
 * connections each get the full rate — and arrive intact. Only lower bounds of elapsed time are asserted: a busy
 * machine may be slower, never faster.
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
    const options = emulatorOptionsFromFlags(flags({ latency: '40ms', bandwidth: '25MB/s' }), '/', {});
    expect(options).toMatchObject({ latencyMs: 40, bandwidth: 25_000_000 });
  });

  it('shape nothing when absent', () => {
    const options = emulatorOptionsFromFlags(flags({}), '/', {});
    expect(options.latencyMs).toBeUndefined();
    expect(options.bandwidth).toBeUndefined();
  });

  it('are refused with exit 2 when malformed', async () => {
    for (const args of [
      ['--latency', 'soon'],
      ['--bandwidth', 'fast'],
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
  });
});

describe('the per-connection budget', () => {
  const socket = (): Socket => ({}) as Socket;

  it('holds bytes back for length / rate, adding up on one connection', () => {
    const shaper = new Shaper({ bytesPerSecond: 1_000_000 });
    const one = socket();
    // The first chunk may use a 20 ms credit; the second queues behind it.
    expect(shaper.delayMs(one, 1_000_000)).toBeGreaterThan(970);
    expect(shaper.delayMs(one, 1_000_000)).toBeGreaterThan(1970);
  });

  it('gives every connection its own rate', () => {
    const shaper = new Shaper({ bytesPerSecond: 1_000_000 });
    const [a, b] = [socket(), socket()];
    shaper.delayMs(a, 1_000_000);
    const other = shaper.delayMs(b, 1_000_000);
    expect(other).toBeGreaterThan(970);
    expect(other).toBeLessThan(1010);
  });

  it('lets small chunks through at once while under the rate', () => {
    const shaper = new Shaper({ bytesPerSecond: 1_000_000 });
    expect(shaper.delayMs(socket(), 1000)).toBe(0);
    expect(new Shaper({}).delayMs(socket(), 1e9)).toBe(0);
    expect(new Shaper({}).pacing).toBe(false);
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
});
