/**
 * `rateLimit: n` (PRODUCT.md §6, registry-api.md §7): past n requests in the same second for one token, 429 with
 * the documented error body, `Retry-After` and `X-RateLimit-Limit`; allowed again in the next window. The clock
 * is the test's, so windows are exact.
 */
import { describe, expect, it } from 'vitest';
import { RATE_LIMIT_RESPONSE } from './documented-samples.js';
import {
  clients,
  emulatorPerTest,
  expectStatus,
  manualClock,
  providerPaths,
  type Api,
} from '../helpers/emulator/index.js';
import { shapeMismatches } from '../helpers/shape.js';

const start = emulatorPerTest();

async function statuses(api: Api, path: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) out.push((await api.get(path)).status);
  return out;
}

describe('rate limit', () => {
  it('answers 429 once n requests in the same second are exceeded, with the documented body and headers', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now, rateLimit: 3 });
    const { owner } = clients(emulator);
    const path = providerPaths(emulator.organization, 'example').providers;

    for (let i = 0; i < 3; i += 1) {
      const reply = await owner.get(path);
      expectStatus(reply, 200);
      expect(reply.headers.get('x-ratelimit-limit')).toBe('3');
    }
    clock.advance(999);
    const limited = await owner.get(path);
    expectStatus(limited, 429);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    const retryAfter = limited.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // go-tfe waits X-RateLimit-Reset seconds (a float) on 429 (registry-api.md §7).
    expect(limited.headers.get('x-ratelimit-reset')).toMatch(/^\d+(\.\d+)?$/);
    expect(limited.headers.get('content-type')).toContain('application/vnd.api+json');
    expect(shapeMismatches(limited.json, RATE_LIMIT_RESPONSE)).toEqual([]);
    expect(limited.json).toEqual(RATE_LIMIT_RESPONSE);

    clock.advance(1);
    expectStatus(await owner.get(path), 200);
  });

  it('counts per token: one token over the limit does not limit another', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now, rateLimit: 2 });
    const { owner, member } = clients(emulator);
    const path = providerPaths(emulator.organization, 'example').providers;
    expect(await statuses(owner, path, 3)).toEqual([200, 200, 429]);
    expect(await statuses(member, path, 2)).toEqual([200, 200]);
    expect(await statuses(member, path, 1)).toEqual([429]);
  });

  it('each refused request still counts in its window; the next window starts fresh', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now, rateLimit: 2 });
    const { owner } = clients(emulator);
    const path = providerPaths(emulator.organization, 'example').providers;
    expect(await statuses(owner, path, 5)).toEqual([200, 200, 429, 429, 429]);
    clock.advance(1_000);
    expect(await statuses(owner, path, 3)).toEqual([200, 200, 429]);
    clock.advance(5_000);
    expect(await statuses(owner, path, 2)).toEqual([200, 200]);
  });

  it('unauthenticated requests are limited too (per address), and answer 429 before 401', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now, rateLimit: 1 });
    const { anonymous } = clients(emulator);
    const path = providerPaths(emulator.organization, 'example').providers;
    expect(await statuses(anonymous, path, 2)).toEqual([401, 429]);
  });

  it('without rateLimit there is no limit and no X-RateLimit-Limit header', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now });
    const { owner } = clients(emulator);
    const path = providerPaths(emulator.organization, 'example').providers;
    const all = await statuses(owner, path, 40);
    expect(all.every((s) => s === 200)).toBe(true);
    expect((await owner.get(path)).headers.get('x-ratelimit-limit')).toBeNull();
  });
});
