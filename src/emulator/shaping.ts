/**
 * Network shaping, to rehearse (and benchmark) a real network on loopback: every request waits `latencyMs`
 * before it is handled (one round trip), and the bytes of archivist uploads and downloads are paced. Two limits,
 * alone or together: `bytesPerSecond` per connection — each TCP connection has its own budget, so N parallel
 * transfers get N times the bandwidth, as they do through a per-flow limited network — and
 * `totalBytesPerSecond`, one budget each way shared by every connection (a token bucket: the uplink of a CI
 * runner, an office line), so N parallel transfers share one bandwidth and more connections gain nothing.
 * Pacing holds the stream back, so TCP's own flow control slows the sender down: nothing is buffered in memory.
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../errors.js';

/** What to shape; absent or zero means no shaping of that kind. */
export interface ShapingOptions {
  /** Added before each request is handled, in milliseconds. */
  latencyMs?: number | undefined;
  /** Bytes per second per connection, for archivist bodies (uploads and downloads). */
  bytesPerSecond?: number | undefined;
  /** Bytes per second shared by all connections, each way (uploads share one, downloads another). */
  totalBytesPerSecond?: number | undefined;
}

/** Which way bytes flow: uploads (request bodies) and downloads (response bodies) have separate shared budgets. */
export type Direction = 'up' | 'down';

/** A link's budget: when it is next free (milliseconds on the shaper's clock). */
interface Budget {
  freeAt: number;
}

/** A burst allowance: a link idle for a while may not send faster than the rate to catch up. */
const MAX_CREDIT_MS = 20;

/**
 * Books `bytes` on a link of `rate` bytes per second: the chunk occupies it from when it is free (or now, less
 * the credit) for `bytes / rate`; returns how long the chunk must wait (0 when the link is free enough).
 */
function book(budget: Budget, bytes: number, rate: number, now: number): number {
  budget.freeAt = Math.max(budget.freeAt, now - MAX_CREDIT_MS) + (bytes / rate) * 1000;
  return budget.freeAt - now;
}

/** Paces byte streams to a per-connection rate, a shared rate, or both (the slower one holds a chunk back). */
export class Shaper {
  private readonly budgets = new WeakMap<Socket, Budget>();
  private readonly shared: Record<Direction, Budget> = { up: { freeAt: 0 }, down: { freeAt: 0 } };

  /** `now` is the clock in milliseconds (performance.now() unless a test gives its own). */
  constructor(
    readonly options: ShapingOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** True when bodies are paced. */
  get pacing(): boolean {
    return (this.options.bytesPerSecond ?? 0) > 0 || (this.options.totalBytesPerSecond ?? 0) > 0;
  }

  /**
   * Books `bytes` on the connection's link and on the shared link of their direction, and returns how many
   * milliseconds to hold them back: the longer of the two waits. Each connection reads its next chunk only
   * after this one's wait, so the shared link serves the connections in turn, one chunk each.
   */
  delayMs(socket: Socket, bytes: number, direction: Direction): number {
    const perConnection = this.options.bytesPerSecond ?? 0;
    const total = this.options.totalBytesPerSecond ?? 0;
    const now = this.now();
    let wait = 0;
    if (perConnection > 0) {
      let budget = this.budgets.get(socket);
      if (budget === undefined) {
        budget = { freeAt: 0 };
        this.budgets.set(socket, budget);
      }
      wait = book(budget, bytes, perConnection, now);
    }
    if (total > 0) wait = Math.max(wait, book(this.shared[direction], bytes, total, now));
    return wait < 1 ? 0 : wait;
  }

  /** A pipeline stage that passes chunks on no faster than the connection's and the shared rate. */
  pace(socket: Socket, direction: Direction): (source: AsyncIterable<Buffer>) => AsyncGenerator<Buffer> {
    const delay = (bytes: number): number => this.delayMs(socket, bytes, direction);
    return async function* paced(source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        const wait = delay(chunk.length);
        if (wait > 0) await sleep(wait);
        yield chunk;
      }
    };
  }
}

const RATE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/** The accepted forms, shown in every rate error. */
export const RATE_FORMS =
  'Use a number of bytes per second with a unit: 500KB/s, 25MB/s, 1GB/s (powers of 1000) or 25MiB/s (powers of 1024); a bare number is bytes per second.';

/** Parses `25MB/s`, `25MiB/s`, `800KB/s`, `1GB/s` (the `/s` may be left out) or bare bytes per second. */
export function parseRate(text: string, what: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(?:([kmg]i?b|b)(?:\/s|ps)?)?$/i.exec(text.trim());
  const unit = match?.[2]?.toLowerCase() ?? 'b';
  const bytes = match ? Number(match[1]) * (RATE_UNITS[unit] ?? Number.NaN) : Number.NaN;
  if (!Number.isFinite(bytes)) {
    throw new UsageError(`${what} is not a valid rate: "${text}"`, { hint: RATE_FORMS });
  }
  if (bytes < 1)
    throw new UsageError(`${what} must be at least 1 byte per second: "${text}"`, { hint: RATE_FORMS });
  return Math.round(bytes);
}
