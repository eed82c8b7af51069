/**
 * Timing knobs of publishing: request timeout, retry backoff and poll interval. The defaults suit a real
 * registry; the environment can change them (slow networks, rehearsals, tests) without new flags. The retry
 * backoff is handed to the one retry policy (src/net/retry.ts) by every request publish makes.
 */
import { parseDuration } from '../config/index.js';
import type { Backoff } from '../net/retry.js';

/** How patient publishing is. */
export interface PublishTuning {
  /** Retries of every request: 4, from PROVIDER_RETRY_DELAY doubling to 16 times it. */
  retry: Backoff;
  /** Milliseconds to wait for an answer to one request (API call or transfer). */
  requestTimeoutMs: number;
  /** First and longest pause between polls of the uploaded flags. */
  pollMinMs: number;
  pollMaxMs: number;
}

/** Variables read by `tuningFromEnv`, documented in docs/publish.md. */
export const TUNING_VARIABLES = {
  timeout: 'PROVIDER_HTTP_TIMEOUT',
  retryDelay: 'PROVIDER_RETRY_DELAY',
  pollInterval: 'PROVIDER_POLL_INTERVAL',
} as const;

/** Reads `PROVIDER_HTTP_TIMEOUT` (60s), `PROVIDER_RETRY_DELAY` (500ms) and `PROVIDER_POLL_INTERVAL` (250ms). */
export function tuningFromEnv(env: Record<string, string | undefined>): PublishTuning {
  const read = (name: string, fallback: number): number => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? fallback : parseDuration(value, name);
  };
  const base = read(TUNING_VARIABLES.retryDelay, 500);
  const poll = read(TUNING_VARIABLES.pollInterval, 250);
  return {
    retry: { limit: 4, baseDelayMs: base, maxDelayMs: base * 16 },
    requestTimeoutMs: read(TUNING_VARIABLES.timeout, 60_000),
    pollMinMs: poll,
    pollMaxMs: poll * 8,
  };
}
