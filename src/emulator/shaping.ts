/**
 * Network shaping, to rehearse (and benchmark) a real network on loopback: every request waits `latencyMs`
 * before it is handled (one round trip), and the bytes of archivist uploads and downloads are paced to
 * `bytesPerSecond` per connection — each TCP connection has its own budget, so N parallel transfers get N
 * times the bandwidth, as they do through a per-flow limited network. Pacing holds the stream back, so TCP's
 * own flow control slows the sender down: nothing is buffered in memory.
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
}

/** Per connection: when its link is next free (performance.now() milliseconds). */
interface Budget {
  freeAt: number;
}

/** A burst allowance: a connection idle for a while may not send faster than the rate to catch up. */
const MAX_CREDIT_MS = 20;

/** Paces byte streams to a per-connection rate. */
export class Shaper {
  private readonly budgets = new WeakMap<Socket, Budget>();

  constructor(readonly options: ShapingOptions) {}

  /** True when bodies are paced. */
  get pacing(): boolean {
    return (this.options.bytesPerSecond ?? 0) > 0;
  }

  /**
   * Books `bytes` on the connection's link and returns how many milliseconds to hold them back: the chunk
   * occupies the link from when it is free (or now, less a small credit) for `bytes / rate`.
   */
  delayMs(socket: Socket, bytes: number): number {
    const rate = this.options.bytesPerSecond ?? 0;
    if (rate <= 0) return 0;
    let budget = this.budgets.get(socket);
    if (budget === undefined) {
      budget = { freeAt: 0 };
      this.budgets.set(socket, budget);
    }
    const now = performance.now();
    budget.freeAt = Math.max(budget.freeAt, now - MAX_CREDIT_MS) + (bytes / rate) * 1000;
    const wait = budget.freeAt - now;
    return wait < 1 ? 0 : wait;
  }

  /** A pipeline stage that passes chunks on no faster than the connection's rate. */
  pace(socket: Socket): (source: AsyncIterable<Buffer>) => AsyncGenerator<Buffer> {
    const delay = (bytes: number): number => this.delayMs(socket, bytes);
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
