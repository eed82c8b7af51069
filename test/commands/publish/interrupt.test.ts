/**
 * Stopping and waiting: Ctrl-C (the run's AbortSignal) during uploads or polls exits 130 and the next run
 * completes; the waiter polls until the registry flips its flags, times out with exit 6, or is skipped.
 */
import { describe, expect, it, vi } from 'vitest';
import { emulatorPerTest, manualClock } from '../../helpers/emulator/index.js';
import { expectComplete, jsonOf, publish, writes } from './helpers.js';

const emulator = emulatorPerTest();

describe('provider publish interrupted', () => {
  it('exits 130 when Ctrl-C arrives during uploads, and the next run finishes the job', async () => {
    // Uploads after the first two hang, so the interruption lands with transfers in flight.
    const e = await emulator({ faults: [{ method: 'PUT', path: '/_archivist/**', delayMs: 3000, skip: 2 }] });
    const controller = new AbortController();
    const running = publish(e, [], { signal: controller.signal });
    // Interrupt once the first two uploads are complete and a later one hangs (uploads run in parallel).
    const completed = () => e.requestLog.records.filter((r) => r.method === 'PUT' && r.status === 200).length;
    await vi.waitFor(
      () => {
        expect(e.faults.fired[0]).toBeGreaterThan(0);
        expect(completed()).toBeGreaterThanOrEqual(2);
      },
      { timeout: 5000, interval: 5 },
    );
    const atAbort = completed();
    controller.abort('SIGINT');
    const result = await running;
    expect(result.exitCode).toBe(130);
    // It stopped at once: no upload held by the delay was waited for (each would have ended 200 after 3 s).
    expect(completed()).toBe(atAbort);
    expect(result.stderr).toMatch(
      /error: Interrupted (while uploading terraform-provider-example_1\.2\.3_\S+|during POST)/,
    );
    expect(result.stderr).toContain('Run the same command again to finish');

    e.faults.clear();
    e.requestLog.clear();
    const again = await publish(e);
    expect(again.exitCode, again.stderr).toBe(0);
    expectComplete(e);
    expect(e.store.data.platforms).toHaveLength(5);
    // The resumed run uploads only what the interrupted one did not finish.
    expect(writes(e).filter((w) => w.startsWith('upload')).length).toBeLessThanOrEqual(5);
  });

  it('exits 130 when Ctrl-C arrives while waiting for the registry', async () => {
    const clock = manualClock();
    const e = await emulator({ flagDelayMs: 60_000, now: clock.now });
    const controller = new AbortController();
    const running = publish(e, [], { signal: controller.signal });
    // Every GET of the version is the waiter's poll (the provider was absent, so the plan never read it).
    const polls = () =>
      e.requestLog.records.filter((r) => r.method === 'GET' && r.path.endsWith('/versions/1.2.3'));
    await vi.waitFor(() => expect(polls().length).toBeGreaterThan(1), { timeout: 5000, interval: 5 });
    controller.abort('SIGINT');
    const result = await running;
    expect(result.exitCode).toBe(130);
    expect(result.stderr).toMatch(/Interrupted (while waiting for the registry|during GET)/);
  });
});

describe('provider publish waiting', () => {
  it('polls until the registry reports every file uploaded', async () => {
    // Long enough that a stalled machine still polls more than once before the flags turn (5 ms polls).
    const e = await emulator({ flagDelayMs: 1000 });
    const result = await publish(e);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/The registry reports every file uploaded \((\d+) polls\)/);
    const polls = Number(/\((\d+) polls\)/.exec(result.stderr)?.[1]);
    expect(polls).toBeGreaterThan(1);
  });

  it("starts the consumer check from the wait's last poll: after the uploads, the version and its platforms are read once", async () => {
    const e = await emulator();
    const result = await publish(e);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/The registry reports every file uploaded \(1 poll\)/);
    expect(result.stderr).toContain('terraform init will accept 1.2.3');
    const records = e.requestLog.records;
    const lastPut = records.map((r) => r.method).lastIndexOf('PUT');
    const after = records.slice(lastPut + 1).filter((r) => r.method === 'GET');
    const reads = (pattern: RegExp) => after.filter((r) => pattern.test(r.path.split('?')[0]!)).length;
    expect(reads(/\/versions\/1\.2\.3$/)).toBe(1);
    expect(reads(/\/versions\/1\.2\.3\/platforms$/)).toBe(1);
    // The rest of the check is still done: the signing keys, and SHA256SUMS and its signature downloaded.
    expect(reads(/\/gpg-keys/)).toBe(1);
    expect(after.filter((r) => r.object === 'shasums' || r.object === 'shasums-sig')).toHaveLength(2);
  });

  it('times out with exit 6 and says how to resume; the next run completes without uploading again', async () => {
    const clock = manualClock();
    const e = await emulator({ flagDelayMs: 10_000, now: clock.now });
    const result = await publish(e, ['--wait-timeout', '100ms']);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(
      /error: The registry had not processed terraform-provider-example_1\.2\.3_SHA256SUMS, .* after 100ms/,
    );
    expect(result.stderr).toContain('run the same command again to resume');
    clock.advance(10_000);
    e.requestLog.clear();
    const again = await publish(e);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(writes(e)).toEqual([]);
    expectComplete(e);
  });

  it('returns at once with --no-wait, and leaves the consumer check out', async () => {
    const clock = manualClock();
    const e = await emulator({ flagDelayMs: 60_000, now: clock.now });
    const doc = jsonOf(await publish(e, ['--no-wait', '--json']));
    expect(doc).toMatchObject({
      ok: true,
      waited: false,
      check: { status: 'skipped', reason: '--no-wait: the registry had not confirmed the uploads' },
    });
    expect(e.requestLog.records.filter((r) => r.method === 'PUT')).toHaveLength(7);
  });

  it('skips the consumer check with --no-check', async () => {
    const e = await emulator();
    const result = await publish(e, ['--no-check']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('consumer check skipped (--no-check)');
    expect(e.requestLog.records.some((r) => r.path.endsWith('/gpg-keys') && r.method === 'GET')).toBe(false);
  });
});
