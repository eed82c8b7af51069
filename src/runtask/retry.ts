/** Backoff arithmetic shared by the callback client and the plan JSON fetch. */
import { setTimeout as delay } from 'node:timers/promises';

/** Backoff settings: first delay and ceiling, in milliseconds. */
export interface BackoffOptions {
  baseMs?: number;
  maxMs?: number;
}

/** Exponential backoff with jitter for attempt `n` (1-based): between half and all of min(max, base·2^(n-1)). */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const ceiling = Math.min(options.maxMs ?? 30_000, (options.baseMs ?? 500) * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Milliseconds a `Retry-After` header asks for (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(
  header: string | string[] | undefined,
  now: number = Date.now(),
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Waits, unless the signal fires first (then resolves false). */
export async function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await delay(Math.max(0, ms), undefined, signal === undefined ? {} : { signal });
    return true;
  } catch {
    return false;
  }
}
