/**
 * One integrator serving several run tasks (`routes`): each path has its own HMAC key and handler, refuses a
 * request signed with another route's key (401, nothing started), and runs its own handler (told apart by the
 * result the platform receives); a path no route serves is 404 without naming the others. A job's route is where
 * its journal record is: after a crash, the restart reports it under its own route, and still reports it when
 * the route has left the configuration.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PlatformOrigins } from '../../../src/runtask/callback/origins.js';
import { RESTARTED_MESSAGE } from '../../../src/runtask/server/jobs.js';
import type { RouteOptions } from '../../../src/runtask/server/options.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import {
  HANDLER_COMMAND,
  bytesOf,
  journaledIds,
  post,
  requestFor,
  sign,
  integratorsPerTest,
  testRoute,
  type TestIntegrator,
} from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';
import { tempDir } from '../../helpers/tmp.js';
import { scrape } from './prometheus.js';

const KEY_A = 'route-a-key-1c2d';
const KEY_B = 'route-b-key-9e8f';

const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);

function route(path: string, hmacKey: string, exec: string): RouteOptions {
  return testRoute(platform.url, path, hmacKey, exec);
}

/** Route A passes, route B fails, each saying which handler it is. */
function twoRoutes(bExec = `echo "checked by handler B"; exit 1`): RouteOptions[] {
  return [route('/policy-a', KEY_A, 'echo "checked by handler A"'), route('/tenants/b', KEY_B, bExec)];
}

/** Starts both routes, starts a job on route B and crashes while its handler runs: the state dir keeps it. */
async function crashWithJobOnB(): Promise<{ stateDir: string; b: ReturnType<typeof requestFor> }> {
  const stateDir = tempDir('state');
  const crashing = await startIntegrator({ stateDir, routes: twoRoutes(HANDLER_COMMAND) });
  const b = requestFor(POST_PLAN_REQUEST, platform);
  expect((await post(urlOf(crashing, '/tenants/b'), bytesOf(b), sign(bytesOf(b), KEY_B))).status).toBe(200);
  await platform.waitForHandler(b.run_id);
  await crashing.integrator.destroy();
  return { stateDir, b };
}

function urlOf(t: TestIntegrator, path: string): string {
  return new URL(path, t.integrator.url).href;
}

function finalOf(taskResultId: string): Promise<{ status?: string; message?: string }> {
  return platform
    .waitFor(
      (r) =>
        r.method === 'PATCH' &&
        r.path.includes(taskResultId) &&
        ['passed', 'failed'].includes(statusOf(r) ?? ''),
    )
    .then((r) => (r.json as { data: { attributes: { status?: string; message?: string } } }).data.attributes);
}

describe('routes', () => {
  it('runs each route’s own handler for a request signed with that route’s key', async () => {
    const t = await startIntegrator({ routes: twoRoutes() });
    expect(t.integrator.routes.map((r) => r.path)).toEqual(['/policy-a', '/tenants/b']);
    const a = requestFor(POST_PLAN_REQUEST, platform);
    const b = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(urlOf(t, '/policy-a'), bytesOf(a), sign(bytesOf(a), KEY_A))).status).toBe(200);
    expect((await post(urlOf(t, '/tenants/b'), bytesOf(b), sign(bytesOf(b), KEY_B))).status).toBe(200);

    expect(await finalOf(a.task_result_id)).toEqual({ status: 'passed', message: 'checked by handler A' });
    expect(await finalOf(b.task_result_id)).toEqual({ status: 'failed', message: 'checked by handler B' });
    await t.integrator.idle();

    // Each route's jobs are counted under it, and its events name it.
    const { scrape: s } = await scrape(t.integrator.url);
    expect(s.value('runtask_requests_total', { route: '/policy-a', outcome: 'accepted' })).toBe(1);
    expect(s.value('runtask_requests_total', { route: '/tenants/b', outcome: 'accepted' })).toBe(1);
    expect(s.count('runtask_handler_duration_seconds', { route: '/policy-a', result: 'passed' })).toBe(1);
    expect(s.count('runtask_handler_duration_seconds', { route: '/tenants/b', result: 'failed' })).toBe(1);
    const accepted = t.events.filter((e) => e.event === 'job.accepted');
    expect(accepted.map((e) => [e.fields.run_id, e.fields.route])).toEqual([
      [a.run_id, '/policy-a'],
      [b.run_id, '/tenants/b'],
    ]);
  });

  it('refuses on each route a request signed with the other route’s key: 401, nothing started', async () => {
    const t = await startIntegrator({ routes: twoRoutes() });
    const a = requestFor(POST_PLAN_REQUEST, platform);
    const b = requestFor(POST_PLAN_REQUEST, platform);
    const onA = await post(urlOf(t, '/policy-a'), bytesOf(a), sign(bytesOf(a), KEY_B));
    const onB = await post(urlOf(t, '/tenants/b'), bytesOf(b), sign(bytesOf(b), KEY_A));
    expect([onA.status, onB.status]).toEqual([401, 401]);
    expect(JSON.parse(onA.text)).toMatchObject({ errors: [{ status: '401', title: 'unauthorized' }] });
    expect(t.events.filter((e) => e.event === 'job.accepted')).toEqual([]);
    expect(
      t.events.filter((e) => e.event === 'request.rejected').map((e) => [e.fields.route, e.fields.http]),
    ).toEqual([
      ['/policy-a', 401],
      ['/tenants/b', 401],
    ]);
    const { scrape: s } = await scrape(t.integrator.url);
    expect(s.value('runtask_requests_total', { route: '/policy-a', status: '401' })).toBe(1);
    expect(s.value('runtask_requests_total', { route: '/tenants/b', status: '401' })).toBe(1);
    expect(platform.callbacks(a.task_result_id)).toEqual([]);
    expect(platform.callbacks(b.task_result_id)).toEqual([]);
  });

  it('answers 404 with a JSON error for a path no route serves, naming none of them; /healthz lists them', async () => {
    const t = await startIntegrator({ routes: twoRoutes() });
    const a = requestFor(POST_PLAN_REQUEST, platform);
    for (const path of ['/', '/policy-a/', '/tenants', '/tenants/b/x']) {
      const answer = await post(urlOf(t, path), bytesOf(a), sign(bytesOf(a), KEY_A));
      expect(answer.status, path).toBe(404);
      expect(JSON.parse(answer.text)).toEqual({
        errors: [{ status: '404', title: 'not found', detail: 'no run task is served at this path' }],
      });
    }
    const health = await fetch(urlOf(t, '/healthz'));
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: 'ok',
      store: { kind: 'journal', status: 'ok' },
      routes: { '/policy-a': { store: 'ok' }, '/tenants/b': { store: 'ok' } },
    });
    const { scrape: s } = await scrape(t.integrator.url);
    expect(s.value('runtask_requests_total', { route: 'unmatched', status: '404' })).toBe(4);
  });

  it('keeps a job’s route across a crash: the record is in the route’s folder, the restart reports it there', async () => {
    const { stateDir, b } = await crashWithJobOnB();

    // The state dir holds route A's and route B's folders; B's has the record, and says whose it is.
    const folders = readdirSync(join(stateDir, 'routes'));
    const bFolder = folders.find((f) => f.startsWith('tenants_b-'))!;
    expect(folders).toHaveLength(2);
    expect(journaledIds(join(stateDir, 'routes', bFolder))).toEqual([b.task_result_id]);
    expect(JSON.parse(readFileSync(join(stateDir, 'routes', bFolder, 'route.json'), 'utf8'))).toEqual({
      path: '/tenants/b',
      platformHosts: [platform.url],
    });
    expect(journaledIds(stateDir)).toEqual([]);

    const t = await startIntegrator({ stateDir, routes: twoRoutes(HANDLER_COMMAND) });
    expect(await finalOf(b.task_result_id)).toEqual({ status: 'failed', message: RESTARTED_MESSAGE });
    await t.integrator.idle();
    const recovered = t.events.find((e) => e.event === 'job.recovered')!;
    expect(recovered.fields).toMatchObject({ job: b.task_result_id, route: '/tenants/b' });
    const { scrape: s } = await scrape(t.integrator.url);
    expect(
      s.value('runtask_callbacks_total', { route: '/tenants/b', status: 'failed', delivery: 'delivered' }),
    ).toBe(1);
    expect(s.value('runtask_callbacks_total', { route: '/policy-a' })).toBe(0);
  });

  it('still reports a job left by a route that is no longer configured, to that route’s platform hosts, and serves that path no more', async () => {
    const { stateDir, b } = await crashWithJobOnB();

    // The remaining route and the defaults allow another platform host only: route B's own is in its folder.
    const elsewhere = new PlatformOrigins(['https://tfe.elsewhere.example']);
    const [a] = twoRoutes();
    const t = await startIntegrator({
      stateDir,
      allowed: elsewhere,
      routes: [{ ...a!, allowed: elsewhere }],
    });
    expect(await finalOf(b.task_result_id)).toEqual({ status: 'failed', message: RESTARTED_MESSAGE });
    await t.integrator.idle();
    expect(platform.callbacks(b.task_result_id).map(statusOf)).toEqual(['running', 'failed']);
    expect(t.integrator.routes.map((r) => r.path)).toEqual(['/policy-a']);
    const again = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(urlOf(t, '/tenants/b'), bytesOf(again), sign(bytesOf(again), KEY_B))).status).toBe(
      404,
    );
    const health = (await (await fetch(urlOf(t, '/healthz'))).json()) as { routes: Record<string, unknown> };
    expect(health.routes['/tenants/b']).toMatchObject({ retired: true });
  });
});
