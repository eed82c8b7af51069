/**
 * Per-token (per-address without a token) request limit over one-second windows, answered like the platform:
 * 429 with `Retry-After` and `X-RateLimit-Limit/-Remaining/-Reset`. `limitRate` is the emulator's step.
 */
import type { Step } from './exchange.js';
import { HttpProblem } from './http.js';

/** The verdict for one request. */
export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

/** Fixed one-second windows, one counter per key. */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perSecond: number) {}

  /** Counts a request for `key` at time `now` (ms) and says whether it may proceed. */
  take(key: string, now: number): RateDecision {
    let window = this.windows.get(key);
    if (!window || now - window.start >= 1000) {
      window = { start: now, count: 0 };
      this.windows.set(key, window);
      if (this.windows.size > 10_000) this.prune(now);
    }
    window.count += 1;
    const resetMs = Math.max(window.start + 1000 - now, 1);
    const allowed = window.count <= this.perSecond;
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(this.perSecond),
      'x-ratelimit-remaining': String(Math.max(this.perSecond - window.count, 0)),
      'x-ratelimit-reset': (resetMs / 1000).toFixed(3),
    };
    if (!allowed) headers['retry-after'] = String(Math.ceil(resetMs / 1000));
    return { allowed, headers };
  }

  private prune(now: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= 1000) this.windows.delete(key);
  }
}

/**
 * Step: counts an API request (`/api/…`) against its token (its address without one) and sets the
 * `X-RateLimit-*` headers; over the limit it is refused with 429 and `Retry-After`, its body drained.
 */
export function limitRate(limiter: RateLimiter, now: () => number): Step {
  return ({ req, res, ctx }) => {
    if (!ctx.path.startsWith('/api/')) return 'next';
    const key = req.headers.authorization ?? `ip:${req.socket.remoteAddress ?? ''}`;
    const verdict = limiter.take(key, now());
    for (const [name, value] of Object.entries(verdict.headers)) res.setHeader(name, value);
    if (verdict.allowed) return 'next';
    req.resume();
    throw new HttpProblem(429, [
      { status: 429, title: 'Too many requests', detail: "You have exceeded the API's rate limit." },
    ]);
  };
}
