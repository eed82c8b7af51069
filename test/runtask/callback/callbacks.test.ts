/**
 * Callbacks as the platform receives them: Bearer token and JSON:API content type on every attempt; retried on
 * 500/503/429 (Retry-After honoured) and connection resets until accepted; 401/422 not retried and logged with
 * the server's detail; and the token never sent to an origin outside `--platform-host`, whatever the payload
 * names (callback URL, plan URL) — the plan's download link alone, which carries no token, may be elsewhere.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parsePlatformHosts } from '../../../src/runtask/callback/origins.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { bytesOf, post, requestFor, startTestIntegrator, type TestIntegrator } from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';

let platform: TestPlatform;
let elsewhere: TestPlatform;
let t: TestIntegrator;

beforeAll(async () => {
  platform = await TestPlatform.start();
  elsewhere = await TestPlatform.start();
});
afterAll(async () => {
  await platform.close();
  await elsewhere.close();
});
afterEach(async () => {
  await t?.cleanup();
});

const JSONAPI_401 = JSON.stringify({
  errors: [{ status: '401', title: 'unauthorized', detail: 'token expired' }],
});
const JSONAPI_422 = JSON.stringify({
  errors: [{ status: '422', title: 'invalid attribute', detail: 'Status is not included in the list' }],
});

describe('retries', () => {
  it('retries the running and final callbacks on 500, 503, 429 and resets until they are accepted', async () => {
    t = await startTestIntegrator(platform);
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const id = request.task_result_id;
    platform.script(id, [
      { status: 500 },
      { status: 503, body: 'unavailable' },
      { reset: true },
      { status: 429, headers: { 'retry-after': '1' } },
    ]);
    expect((await post(t.integrator.url, bytesOf(request))).status).toBe(200);
    await platform.waitForCallbacks(id, 'running', 5);
    const attempts = platform.callbacks(id);
    // Retry-After: 1 was honoured: the attempt after the 429 came a second later.
    expect(attempts[4]!.at - attempts[3]!.at).toBeGreaterThanOrEqual(900);

    platform.script(id, [{ status: 503 }, { reset: true }]);
    platform.release(request.run_id, { stdout: 'checked\n' });
    await platform.waitForCallbacks(id, 'passed', 3);
    await t.integrator.jobs.idle();
    const all = platform.callbacks(id);
    expect(all.map(statusOf)).toEqual([
      'running',
      'running',
      'running',
      'running',
      'running',
      'passed',
      'passed',
      'passed',
    ]);
    for (const attempt of all) {
      expect(attempt.headers.authorization).toBe(`Bearer ${request.access_token as string}`);
      expect(attempt.headers['content-type']).toBe('application/vnd.api+json');
    }
    expect(t.events.filter((e) => e.event === 'callback.retry')).toHaveLength(6);
  });

  it('does not retry a 401 or 422 on the final callback, and logs the server detail', async () => {
    t = await startTestIntegrator(platform);
    for (const [status, body, detail] of [
      [401, JSONAPI_401, 'unauthorized: token expired'],
      [422, JSONAPI_422, 'invalid attribute: Status is not included in the list'],
    ] as const) {
      const request = requestFor(POST_PLAN_REQUEST, platform);
      await post(t.integrator.url, bytesOf(request));
      await platform.waitForCallbacks(request.task_result_id, 'running');
      platform.script(request.task_result_id, [
        { status, body, headers: { 'content-type': 'application/vnd.api+json' } },
      ]);
      platform.release(request.run_id, { exitCode: 1, stdout: 'found a problem\n' });
      const refused = await t.waitForEvent(
        'callback.refused',
        (e) => e.fields.job === request.task_result_id,
      );
      expect(refused.fields).toMatchObject({ http: status, detail });
      await t.integrator.jobs.idle();
      expect(platform.callbacks(request.task_result_id).map(statusOf)).toEqual(['running', 'failed']);
    }
  });

  it('abandons a job whose first running callback gets 401: the token is not valid', async () => {
    t = await startTestIntegrator(platform);
    const request = requestFor(POST_PLAN_REQUEST, platform);
    platform.script(request.task_result_id, [{ status: 401, body: JSONAPI_401 }]);
    platform.release(request.run_id, { hang: true });
    await post(t.integrator.url, bytesOf(request));
    await t.waitForEvent('callback.refused', (e) => e.fields.job === request.task_result_id);
    await t.integrator.jobs.idle();
    expect(platform.callbacks(request.task_result_id)).toHaveLength(1);
  });
});

describe('where the access token goes', () => {
  it('parses --platform-host values: host, host:port or URL (origin only)', () => {
    expect([...parsePlatformHosts(undefined).origins]).toEqual(['https://app.terraform.io']);
    const allowed = parsePlatformHosts([
      'tfe.example.com:8443',
      'http://127.0.0.1:9000/some/path',
      'app.terraform.io',
    ]);
    expect([...allowed.origins]).toEqual([
      'https://tfe.example.com:8443',
      'http://127.0.0.1:9000',
      'https://app.terraform.io',
    ]);
    expect(allowed.allows('https://app.terraform.io/api/v2/task-results/x/callback')).toBe(true);
    expect(allowed.allows('http://app.terraform.io/api/v2/task-results/x/callback')).toBe(false);
    expect(allowed.allows('https://app.terraform.io.evil.example/api')).toBe(false);
    expect(allowed.allows('http://127.0.0.1:9001/')).toBe(false);
    expect(() => parsePlatformHosts(['ftp://x'])).toThrow(/--platform-host/);
  });

  it('refuses a payload whose callback URL is on another origin: 422, and that origin gets nothing', async () => {
    t = await startTestIntegrator(platform);
    const request = requestFor(POST_PLAN_REQUEST, platform, {
      task_result_callback_url: `${elsewhere.url}/api/v2/task-results/taskrs-stolen/callback`,
    });
    const answer = await post(t.integrator.url, bytesOf(request));
    expect(answer.status).toBe(422);
    expect(answer.text).toContain('--platform-host');
    expect(elsewhere.requests).toEqual([]);
    expect(platform.requests.filter((r) => r.path.includes(request.task_result_id))).toEqual([]);
    expect(t.integrator.jobs.counts()).toEqual({ queued: 0, running: 0, reporting: 0 });
  });

  it('refuses a payload whose plan JSON URL is on another origin', async () => {
    t = await startTestIntegrator(platform);
    const request = requestFor(POST_PLAN_REQUEST, platform, {
      plan_json_api_url: `${elsewhere.url}/api/v2/plans/plan-x/json-output`,
    });
    expect((await post(t.integrator.url, bytesOf(request))).status).toBe(422);
    expect(elsewhere.requests).toEqual([]);
  });

  it('follows the 307 to a download link on another origin without the token', async () => {
    t = await startTestIntegrator(platform);
    const request = requestFor(POST_PLAN_REQUEST, platform, {
      plan_json_api_url: `${platform.url}/api/v2/plans/plan-redirected/json-output`,
    });
    platform.script('plan-redirected', [
      { status: 307, headers: { location: `${elsewhere.url}/_archivist/v1/object/secret-blob` } },
    ]);
    elsewhere.script('blob', [{ status: 200, body: '{"format_version":"1.2","elsewhere":true}' }]);
    await post(t.integrator.url, bytesOf(request));
    const report = await platform.waitForHandler(request.run_id);
    expect(report.plan).toEqual({ format_version: '1.2', elsewhere: true });
    expect(elsewhere.requests).toHaveLength(1);
    expect(elsewhere.requests[0]!.headers.authorization).toBeUndefined();
    platform.release(request.run_id, { exitCode: 0 });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
    expect(elsewhere.requests).toHaveLength(1);
  });

  it('waits for a plan that is not ready yet (204), then fetches it', async () => {
    t = await startTestIntegrator(platform);
    const request = requestFor(POST_PLAN_REQUEST, platform, {
      plan_json_api_url: `${platform.url}/api/v2/plans/plan-slow/json-output`,
    });
    platform.script('plan-slow', [{ status: 204 }, { status: 503 }]);
    platform.plans.set('plan-slow', { format_version: '1.2', slow: true });
    await post(t.integrator.url, bytesOf(request));
    const report = await platform.waitForHandler(request.run_id);
    expect(report.plan).toEqual({ format_version: '1.2', slow: true });
    expect(platform.requests.filter((r) => r.path === '/api/v2/plans/plan-slow/json-output')).toHaveLength(3);
    platform.release(request.run_id, { exitCode: 0 });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
  });

  it('reports failed when the plan JSON is refused (the handler does not run)', async () => {
    t = await startTestIntegrator(platform);
    const request = requestFor(POST_PLAN_REQUEST, platform, {
      plan_json_api_url: `${platform.url}/api/v2/plans/plan-denied/json-output`,
    });
    platform.script('plan-denied', [
      { status: 404, body: JSON.stringify({ errors: [{ status: '404', title: 'not found' }] }) },
    ]);
    await post(t.integrator.url, bytesOf(request));
    const [final] = await platform.waitForCallbacks(request.task_result_id, 'failed');
    expect(JSON.stringify(final!.json)).toContain('refused the plan JSON request');
    expect(
      platform.requests.filter(
        (r) => r.path === '/handler/start' && (r.json as { key: string }).key === request.run_id,
      ),
    ).toEqual([]);
  });
});
