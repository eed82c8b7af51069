/**
 * `GET /metrics`: the Prometheus text format, parsed by a real parser, with the counters moving as the platform's
 * requests and the jobs go: an accepted request, a 401, a 413 and a 404 by route and status; a finished job in
 * the handler histogram and the callback counter; queue depth and running jobs while a handler runs; a registry
 * per integrator; no secret in any label.
 */
import { describe, expect, it } from 'vitest';
import type { IntegratorOptions } from '../../../src/runtask/server/options.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { KEY, bytesOf, post, requestFor, sign, integratorsPerTest, type TestIntegrator } from '../helpers.js';
import { TestPlatform } from '../platform.js';
import { scrape } from './prometheus.js';

const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);

/** An integrator with a 4 KiB body limit (and these overrides). */
function start(overrides: Partial<IntegratorOptions> = {}): Promise<TestIntegrator> {
  return startIntegrator({ bodyLimit: 4096, ...overrides });
}

const REQUESTS = 'runtask_requests_total';

describe('GET /metrics', () => {
  it('answers the Prometheus text format with every metric named in the docs, at zero', async () => {
    const t = await start();
    const { scrape: s, contentType } = await scrape(t.integrator.url);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(Object.keys(s.families).sort()).toEqual(
      [
        'runtask_callbacks_total',
        'runtask_handler_duration_seconds',
        'runtask_job_takeovers_total',
        'runtask_jobs_queued',
        'runtask_jobs_reporting',
        'runtask_jobs_running',
        REQUESTS,
        'runtask_store_up',
      ].sort(),
    );
    expect(s.family(REQUESTS).type).toBe('counter');
    expect(s.family('runtask_handler_duration_seconds').type).toBe('histogram');
    expect(s.value('runtask_job_takeovers_total')).toBe(0);
    expect(s.family('runtask_job_takeovers_total').help).toMatch(/Always 0 with the local journal/);
    expect(s.value('runtask_store_up', { kind: 'journal' })).toBe(1);
    expect(s.value('runtask_jobs_queued', { route: '/' })).toBe(0);
    // Probes are not run task requests: /metrics and /healthz count nothing.
    await fetch(new URL('/healthz', t.integrator.url));
    expect((await scrape(t.integrator.url)).scrape.series(REQUESTS)).toEqual([]);
  });

  it('counts requests by route, status and outcome, and a finished job in the histogram and the callbacks', async () => {
    const t = await start();
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const body = bytesOf(request);

    // One accepted request; its handler waits for its orders, so the job is running when scraped.
    expect((await post(t.integrator.url, body)).status).toBe(200);
    await platform.waitForHandler(request.run_id);
    await platform.waitForCallbacks(request.task_result_id, 'running');
    const during = (await scrape(t.integrator.url)).scrape;
    expect(during.value(REQUESTS, { route: '/', status: '200', outcome: 'accepted' })).toBe(1);
    expect(during.value('runtask_jobs_running', { route: '/' })).toBe(1);
    expect(during.value('runtask_jobs_queued', { route: '/' })).toBe(0);
    expect(during.count('runtask_handler_duration_seconds', { route: '/' })).toBe(0);

    // One 401 (signed with another key), one 413 (over the 4096-byte limit), one 404 (no route there).
    expect((await post(t.integrator.url, body, sign(body, 'another-key'))).status).toBe(401);
    const big = JSON.stringify({ ...request, padding: 'x'.repeat(5000) });
    expect((await post(t.integrator.url, big)).status).toBe(413);
    expect((await post(new URL('/elsewhere', t.integrator.url).href, body)).status).toBe(404);

    platform.release(request.run_id, { stdout: '{"status":"passed","message":"fine"}\n' });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
    await t.integrator.idle();

    const after = (await scrape(t.integrator.url)).scrape;
    expect(after.series(REQUESTS)).toHaveLength(4);
    expect(after.value(REQUESTS, { route: '/', status: '200', outcome: 'accepted' })).toBe(1);
    expect(after.value(REQUESTS, { route: '/', status: '401', outcome: 'rejected' })).toBe(1);
    expect(after.value(REQUESTS, { route: '/', status: '413', outcome: 'rejected' })).toBe(1);
    expect(after.value(REQUESTS, { route: 'unmatched', status: '404', outcome: 'rejected' })).toBe(1);
    expect(after.count('runtask_handler_duration_seconds', { route: '/', result: 'passed' })).toBe(1);
    const histogram = after.histogram('runtask_handler_duration_seconds', { route: '/', result: 'passed' });
    expect(histogram.buckets['+Inf']).toBe(1);
    expect(histogram.sum).toBeGreaterThan(0);
    const callbacks = { route: '/', delivery: 'delivered' };
    expect(after.value('runtask_callbacks_total', { ...callbacks, status: 'passed' })).toBe(1);
    expect(after.value('runtask_callbacks_total', { ...callbacks, status: 'running' })).toBe(1);
    expect(after.value('runtask_callbacks_total', { ...callbacks, status: 'failed' })).toBe(0);
    expect(after.value('runtask_jobs_running', { route: '/' })).toBe(0);

    // No secret and no per-request value in any label: the token, the key, the callback URL, the run id.
    for (const label of after.labelValues()) {
      for (const secret of [
        request.access_token as string,
        KEY,
        request.task_result_callback_url as string,
      ]) {
        expect(label).not.toContain(secret);
      }
      expect(label).not.toContain(request.run_id);
    }
  });

  it('counts a verification request apart from an accepted job, and queued jobs as the queue depth', async () => {
    const t = await start({ maxJobs: 1 });
    expect((await post(t.integrator.url, '')).status).toBe(200);
    const first = requestFor(POST_PLAN_REQUEST, platform);
    const second = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(t.integrator.url, bytesOf(first))).status).toBe(200);
    await platform.waitForHandler(first.run_id);
    expect((await post(t.integrator.url, bytesOf(second))).status).toBe(200);
    // Re-sent by the platform while the job runs: one job, counted as a duplicate.
    expect((await post(t.integrator.url, bytesOf(second))).status).toBe(200);
    await platform.waitForCallbacks(second.task_result_id, 'running');
    const s = (await scrape(t.integrator.url)).scrape;
    expect(s.value(REQUESTS, { route: '/', outcome: 'verification' })).toBe(1);
    expect(s.value(REQUESTS, { route: '/', outcome: 'accepted' })).toBe(2);
    expect(s.value(REQUESTS, { route: '/', outcome: 'duplicate' })).toBe(1);
    expect(s.value('runtask_jobs_running', { route: '/' })).toBe(1);
    expect(s.value('runtask_jobs_queued', { route: '/' })).toBe(1);
    platform.release(first.run_id, { exitCode: 0 });
    platform.release(second.run_id, { exitCode: 0 });
    await t.integrator.idle();
  });

  it('keeps a registry per integrator: two in one process count apart', async () => {
    const a = await start();
    const b = await start();
    expect((await post(a.integrator.url, bytesOf({ x: 1 }), null)).status).toBe(401);
    expect((await scrape(a.integrator.url)).scrape.value(REQUESTS, { status: '401' })).toBe(1);
    expect((await scrape(b.integrator.url)).scrape.series(REQUESTS)).toEqual([]);
  });
});
