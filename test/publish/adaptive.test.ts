/**
 * `--concurrency auto`: the policy's decisions, fed with throughput samples by hand (no clock, no network), and
 * the pool following a width that changes while its tasks run. What the policy must do: judge only windows in
 * which the number bound (uploads waiting, every slot busy) and not the one after a start or a step up; grow
 * while the throughput grows by the growth factor; step back to the last number that paid when a step did not;
 * halve on a failure; probe again after a steady spell; stay within its floor and cap.
 */
import { describe, expect, it } from 'vitest';
import {
  AUTO,
  AdaptiveConcurrency,
  AdaptiveWidth,
  type ThroughputSample,
} from '../../src/publish/adaptive.js';
import { runUploadTasks, type Width } from '../../src/publish/pool.js';

const MB = 1e6;

/** One binding window of 100 ms at `mbps` MB/s with `inFlight` uploads and more waiting. */
function window(mbps: number, inFlight: number, extra: Partial<ThroughputSample> = {}): ThroughputSample {
  return { bytes: (mbps * MB) / 10, ms: 100, inFlight, waiting: true, ...extra };
}

/** A policy with small numbers, easier to follow than AUTO's. */
function policy(options: Partial<ConstructorParameters<typeof AdaptiveConcurrency>[0]> = {}) {
  return new AdaptiveConcurrency({ initial: 4, cap: 32, floor: 1, growth: 1.2, probeAfter: 3, ...options });
}

describe('the adaptive policy', () => {
  it('starts at AUTO.initial, within AUTO.cap', () => {
    const p = new AdaptiveConcurrency();
    expect(p.limit).toBe(AUTO.initial);
    expect(p.cap).toBe(AUTO.cap);
    expect(AUTO.initial).toBeLessThanOrEqual(AUTO.cap);
  });

  it('on a network that limits each connection, doubles while the throughput grows, up to the cap', () => {
    const p = policy({ cap: 16 });
    // 25 MB/s per connection: the throughput follows the number.
    expect(p.observe(window(100, 4)).action).toBe('ignore'); // the first window: uploads starting
    expect(p.observe(window(100, 4))).toMatchObject({ action: 'grow', limit: 8, rate: 100 * MB });
    expect(p.observe(window(150, 8)).action).toBe('ignore'); // the window after a step up
    expect(p.observe(window(200, 8))).toMatchObject({ action: 'grow', limit: 16 });
    expect(p.observe(window(300, 16)).action).toBe('ignore');
    // At the cap it keeps the number, whatever the throughput does.
    expect(p.observe(window(400, 16))).toMatchObject({ action: 'keep', limit: 16 });
    expect(p.observe(window(400, 16))).toMatchObject({ action: 'keep', limit: 16 });
  });

  it('on a link whose total is the limit, steps back to the number that gave that throughput already', () => {
    const p = policy();
    p.observe(window(100, 4)); // starting
    expect(p.observe(window(100, 4))).toMatchObject({ action: 'grow', limit: 8 });
    p.observe(window(100, 8)); // settling
    // 8 at once move no more than 4 did (110 < 100 × 1.2): back to 4, and no more growing.
    expect(p.observe(window(110, 8))).toMatchObject({ action: 'step back', limit: 4 });
    expect(p.observe(window(100, 4))).toMatchObject({ action: 'keep', limit: 4 });
  });

  it('counts a gain just at the growth factor as growth, and one below it as none', () => {
    const at = policy();
    at.observe(window(100, 4));
    at.observe(window(100, 4));
    at.observe(window(0, 8));
    expect(at.observe(window(120, 8))).toMatchObject({ action: 'grow', limit: 16 });
    const below = policy();
    below.observe(window(100, 4));
    below.observe(window(100, 4));
    below.observe(window(0, 8));
    expect(below.observe(window(119, 8))).toMatchObject({ action: 'step back', limit: 4 });
  });

  it('judges nothing when the number did not bind: nothing waiting, or fewer in flight than allowed', () => {
    const p = policy();
    p.observe(window(100, 4)); // starting
    expect(p.observe(window(100, 4, { waiting: false }))).toMatchObject({ action: 'ignore', limit: 4 });
    expect(p.observe(window(100, 3))).toMatchObject({ action: 'ignore', limit: 4 });
    expect(p.observe(window(100, 4, { ms: 0 }))).toMatchObject({ action: 'ignore', limit: 4 });
    // The first binding window is the base of the comparison.
    expect(p.observe(window(100, 4))).toMatchObject({ action: 'grow', limit: 8 });
  });

  it('probes one step up again after a steady spell, and steps back when the probe does not pay', () => {
    const p = policy({ probeAfter: 3 });
    p.observe(window(100, 4));
    p.observe(window(100, 4));
    p.observe(window(100, 8));
    expect(p.observe(window(100, 8))).toMatchObject({ action: 'step back', limit: 4 });
    expect(p.observe(window(100, 4)).action).toBe('keep');
    expect(p.observe(window(100, 4)).action).toBe('keep');
    // The third steady window: the network may have changed, so 8 are tried again.
    expect(p.observe(window(100, 4))).toMatchObject({ action: 'probe', limit: 8 });
    expect(p.observe(window(100, 8)).action).toBe('ignore');
    expect(p.observe(window(180, 8))).toMatchObject({ action: 'grow', limit: 16 });
  });

  it('halves on a failure, never below the floor, and grows again only after a probe', () => {
    const p = policy({ initial: 16, probeAfter: 2 });
    expect(p.failed()).toMatchObject({ action: 'back off', limit: 8 });
    expect(p.failed()).toMatchObject({ action: 'back off', limit: 4 });
    expect(p.failed()).toMatchObject({ action: 'back off', limit: 2 });
    expect(p.failed()).toMatchObject({ action: 'back off', limit: 1 });
    expect(p.failed()).toMatchObject({ action: 'back off', limit: 1 });
    // After a back-off the first binding window is a new base, then a steady spell, then a probe.
    p.observe(window(10, 1)); // still the start-up window
    expect(p.observe(window(10, 1))).toMatchObject({ action: 'keep', limit: 1 });
    expect(p.observe(window(10, 1))).toMatchObject({ action: 'keep', limit: 1 });
    expect(p.observe(window(10, 1))).toMatchObject({ action: 'probe', limit: 2 });
  });

  it('never goes past the cap when doubling overshoots it', () => {
    const p = policy({ initial: 12, cap: 16 });
    p.observe(window(100, 12));
    expect(p.observe(window(100, 12))).toMatchObject({ action: 'grow', limit: 16 });
  });
});

/** A width the test moves by hand. */
class ManualWidth implements Width {
  current: number;
  readonly tracked: [number, number][] = [];
  private listener: (() => void) | undefined;
  constructor(start: number) {
    this.current = start;
  }
  onChange(listener: () => void): () => void {
    this.listener = listener;
    return () => (this.listener = undefined);
  }
  track(running: number, waiting: number): void {
    this.tracked.push([running, waiting]);
  }
  set(value: number): void {
    this.current = value;
    this.listener?.();
  }
}

/** Tasks that run until the test releases them, recording how many run at once. */
function gatedTasks(count: number) {
  const gates: (() => void)[] = [];
  let running = 0;
  const peaks: number[] = [];
  const tasks = Array.from({ length: count }, () => async () => {
    running++;
    peaks.push(running);
    await new Promise<void>((resolve) => gates.push(resolve));
    running--;
  });
  const releaseOne = async (): Promise<void> => {
    gates.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { tasks, peaks, releaseOne, started: () => peaks.length, running: () => running };
}

describe('runUploadTasks with a changing width', () => {
  it('starts more tasks as soon as the width grows, and fewer once it shrinks', async () => {
    const width = new ManualWidth(2);
    const g = gatedTasks(8);
    const done = runUploadTasks(g.tasks, width);
    await new Promise((resolve) => setImmediate(resolve));
    expect(g.running()).toBe(2);
    width.set(5);
    await new Promise((resolve) => setImmediate(resolve));
    expect(g.running()).toBe(5);
    // Shrinking stops nothing in flight; the next tasks wait until fewer than 2 run.
    width.set(2);
    await g.releaseOne();
    await g.releaseOne();
    await g.releaseOne();
    expect(g.running()).toBe(2);
    expect(g.started()).toBe(5);
    await g.releaseOne();
    expect(g.running()).toBe(2);
    expect(g.started()).toBe(6);
    while (g.running() > 0) await g.releaseOne();
    await done;
    expect(g.started()).toBe(8);
    expect(Math.max(...g.peaks)).toBe(5);
    // The pool told the width how many ran and waited, ending with nothing.
    expect(width.tracked[0]).toEqual([1, 7]);
    expect(width.tracked.at(-1)).toEqual([0, 0]);
  });

  it('resolves at once with no tasks', async () => {
    await runUploadTasks([], new ManualWidth(3));
  });
});

describe('the adaptive width', () => {
  it('backs off once per window however many uploads are retried at once', () => {
    const decisions: string[] = [];
    const width = new AdaptiveWidth(policy({ initial: 16 }), (d) => decisions.push(`${d.action} ${d.limit}`));
    width.retried();
    width.retried();
    width.retried();
    expect(width.current).toBe(8);
    expect(decisions).toEqual(['back off 8']);
    width.stop();
  });

  it('tells its listeners of a change, and stops sampling when the last upload ends', () => {
    const width = new AdaptiveWidth(policy({ initial: 16 }));
    let told = 0;
    const unsubscribe = width.onChange(() => told++);
    width.track(3, 0);
    width.sent(1000);
    width.retried();
    expect(told).toBe(1);
    unsubscribe();
    width.track(0, 0);
    width.stop();
  });
});
