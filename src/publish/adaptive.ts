/**
 * `--concurrency auto`, the default: how many uploads run at once, decided from the throughput the uploads get.
 *
 * Why adaptive. A network limits either each connection (a per-flow limit: TCP over a long round trip, a proxy
 * or an object store that caps each stream) or the link as a whole (a CI runner's uplink). On the first, every
 * connection adds its own bandwidth. On the second, more connections add nothing, but cost nothing either in
 * time: only more files half-sent at a time (an interrupted run keeps the finished ones) and more load on the
 * upload host (docs/performance.md, "Concurrency that fits the network", has the figures). So the number starts high enough for a whole release (`AUTO.initial`), grows while
 * the throughput grows with it (doubling, within `AUTO.cap`), steps back to the last number that paid when a
 * step does not, probes again after a steady spell, and halves when an upload is retried (429, 5xx, a reset,
 * a timeout: the host or the network is overloaded).
 *
 * The policy is a pure class fed with throughput samples, so its decisions are tested without a clock; the
 * sampler around it (`AdaptiveWidth`) counts the bytes the uploads send and feeds it one sample per window.
 */
import type { Width } from './pool.js';

/** The constants of the policy. */
export const AUTO = {
  /**
   * Uploads at once to begin with: a whole goreleaser release (14 platforms, SHA256SUMS and its signature)
   * starts at once. Files are uploaded whole and equal ones finish together, so a number reached only after
   * a first measurement comes too late for them.
   */
  initial: 16,
  /** Never more at once than this (the most `--concurrency` takes). */
  cap: 32,
  /** Platform creates ahead of the uploads at once (API calls: the API's rate limit counts them). */
  creates: 16,
  /** Never fewer. */
  floor: 1,
  /** Milliseconds of transfer per sample (a few round trips of a distant registry; short next to a file). */
  windowMs: 150,
  /** A step up counts as growth when the throughput rose by at least this factor. */
  growth: 1.2,
  /** Samples at a steady number before probing one step up again (the network may have changed). */
  probeAfter: 20,
} as const;

/** One window of transfer, as the pool saw it. */
export interface ThroughputSample {
  /** Bytes the uploads sent during the window. */
  bytes: number;
  /** The window's length, milliseconds. */
  ms: number;
  /** Uploads in flight at the end of the window. */
  inFlight: number;
  /**
   * Whether uploads were waiting for a free slot at the end of the window. The pool fills a free slot at once
   * while uploads wait, so then every slot was busy all through the window: the number bound.
   */
  waiting: boolean;
}

/** What the policy did with a sample or a failure, and why (shown with --verbose). */
export interface Decision {
  limit: number;
  action: 'grow' | 'keep' | 'step back' | 'back off' | 'probe' | 'ignore';
  /** Bytes per second of the sample, when it had one. */
  rate?: number;
}

/** The options of one policy; AUTO's unless a test gives others. */
export interface AdaptiveOptions {
  initial: number;
  cap: number;
  floor: number;
  growth: number;
  probeAfter: number;
}

/**
 * Grows the number of uploads at once while the throughput grows with it, within a cap; halves it on failures.
 *
 * A sample is judged only when the number bound during the whole window: every slot busy, uploads waiting.
 * Otherwise (the last files, a slot between two uploads) it says nothing about whether more would help. The
 * window after a step up is not judged either: the uploads it started are still on their first round trip.
 */
export class AdaptiveConcurrency {
  private current: number;
  private growing = true;
  /** The number, and its throughput, to compare the next step with. */
  private base: { limit: number; rate: number } | undefined;
  private steady = 0;
  /**
   * The window after a start or a step up is not judged: the new uploads are still starting (a round trip, TCP's
   * slow start, socket buffers filling at memory speed).
   */
  private settling = true;
  private readonly options: AdaptiveOptions;

  constructor(options: Partial<AdaptiveOptions> = {}) {
    this.options = { ...AUTO, ...options };
    this.current = clamp(this.options.initial, this.options);
  }

  /** Uploads allowed at once now. */
  get limit(): number {
    return this.current;
  }

  /** The most it will ever allow. */
  get cap(): number {
    return this.options.cap;
  }

  /** Judges one window of transfer; returns the (possibly new) limit and why. */
  observe(sample: ThroughputSample): Decision {
    if (this.settling) {
      this.settling = false;
      return { limit: this.current, action: 'ignore' };
    }
    if (sample.ms <= 0 || !sample.waiting || sample.inFlight < this.current) {
      return { limit: this.current, action: 'ignore' };
    }
    const rate = (sample.bytes / sample.ms) * 1000;
    const { cap, growth, probeAfter } = this.options;
    if (this.base === undefined) {
      this.base = { limit: this.current, rate };
      return this.growing ? this.stepUp(rate, 'grow') : { limit: this.current, action: 'keep', rate };
    }
    if (this.growing) {
      if (rate >= this.base.rate * growth) {
        this.base = { limit: this.current, rate };
        if (this.current < cap) return this.stepUp(rate, 'grow');
        this.growing = false;
        return { limit: this.current, action: 'keep', rate };
      }
      // No gain from the last step: back to the number that gave this throughput already.
      this.growing = false;
      this.steady = 0;
      this.current = this.base.limit;
      return { limit: this.current, action: 'step back', rate };
    }
    this.steady++;
    if (this.steady >= probeAfter && this.current < cap) {
      this.steady = 0;
      this.growing = true;
      this.base = { limit: this.current, rate };
      return this.stepUp(rate, 'probe');
    }
    return { limit: this.current, action: 'keep', rate };
  }

  /**
   * An upload was retried (429, 5xx, a reset, a timeout): the upload host or the network is overloaded, so
   * half as many at once, and no growing until a probe finds room again.
   */
  failed(): Decision {
    this.current = clamp(Math.floor(this.current / 2), this.options);
    this.growing = false;
    this.steady = 0;
    this.base = undefined;
    return { limit: this.current, action: 'back off' };
  }

  private stepUp(rate: number, action: 'grow' | 'probe'): Decision {
    this.current = clamp(this.current * 2, this.options);
    this.settling = true;
    return { limit: this.current, action, rate };
  }
}

function clamp(value: number, options: AdaptiveOptions): number {
  return Math.max(options.floor, Math.min(options.cap, Math.round(value)));
}

/**
 * The pool's width under the adaptive policy: counts the bytes the uploads send (`sent`), tracks how many are in
 * flight and waiting (`track`, called by the pool), and every `windowMs` feeds the policy a sample. Sampling
 * starts with the first byte sent (platform creates and round trips before it are not transfer), runs only
 * while uploads are in flight, and never keeps the process alive. Retries back off at most once per window: a
 * burst of failures (every upload answered 503 at once) is one sign of overload, not one per upload.
 */
export class AdaptiveWidth implements Width {
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private bytes = 0;
  private windowStart = 0;
  private running = 0;
  private waiting = 0;
  private backedOff = false;

  constructor(
    readonly policy: AdaptiveConcurrency = new AdaptiveConcurrency(),
    private readonly onDecision: (decision: Decision) => void = () => undefined,
    private readonly windowMs: number = AUTO.windowMs,
  ) {}

  get current(): number {
    return this.policy.limit;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Bytes an upload has just sent. */
  sent(bytes: number): void {
    if (bytes <= 0) return;
    this.bytes += bytes;
    if (this.timer === undefined && this.running > 0) {
      this.windowStart = performance.now();
      this.timer = setInterval(() => this.sample(), this.windowMs);
      this.timer.unref();
    }
  }

  /** An upload is being retried: back off (once per window). */
  retried(): void {
    if (this.backedOff) return;
    this.backedOff = true;
    this.apply(this.policy.failed());
  }

  /** The pool's state after each start and end; sampling stops after the last upload. */
  track(running: number, waiting: number): void {
    this.running = running;
    this.waiting = waiting;
    if (running === 0) this.stop();
  }

  /** Stops sampling (the uploads are over); the next byte sent starts it again. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.bytes = 0;
  }

  private sample(): void {
    const now = performance.now();
    const decision = this.policy.observe({
      bytes: this.bytes,
      ms: now - this.windowStart,
      inFlight: this.running,
      waiting: this.waiting > 0,
    });
    this.bytes = 0;
    this.windowStart = now;
    this.backedOff = false;
    this.apply(decision);
  }

  private apply(decision: Decision): void {
    this.onDecision(decision);
    if (decision.action !== 'ignore') for (const listener of this.listeners) listener();
  }
}
