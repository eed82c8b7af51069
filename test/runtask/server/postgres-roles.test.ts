/**
 * `runtask serve --role front|worker` (issue 17): one front and two workers, processes of the built program on
 * one PostgreSQL database started by this file on 127.0.0.1. The front answers the platform and queues; the
 * workers take the queued jobs as their slots free up (`--max-jobs 1` each), each job to one worker; a job that
 * waits in the queue gets its `running` callbacks from the instances (the platform's 10-minute window stays
 * open); a worker answers no run task request; /metrics shows the queue's depth. Then a worker is killed with
 * SIGKILL while its handler runs: the other worker takes the job over once the lease ran out and reports it
 * failed (never run twice), and still runs the jobs waiting in the queue. Last, routes on a database: a queue
 * per route, each route's key and handler.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PlatformOrigins } from '../../../src/runtask/callback/origins.js';
import { SCHEMA, routeQueue } from '../../../src/runtask/server/postgres.js';
import { routeName } from '../../../src/runtask/server/routing.js';
import type { RouteOptions } from '../../../src/runtask/server/server.js';
import { QUEUED_MESSAGE, RESTARTED_MESSAGE } from '../../../src/runtask/server/jobs.js';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { tempDir } from '../../helpers/tmp.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { HANDLER_COMMAND, KEY, bytesOf, post, requestFor, sign, startTestIntegrator } from '../helpers.js';
import { TestPlatform, statusOf, type Recorded } from '../platform.js';
import { ensureBuilt, spawnServe, type ServeProcess } from '../serveProcess.js';
import { scrape } from './prometheus.js';

let server: TestPostgres;
let platform: TestPlatform;
const running: ServeProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  [server, platform] = await Promise.all([startPostgres(), TestPlatform.start()]);
}, 120_000);
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exit;
  }
});
afterAll(async () => {
  await platform?.close();
  await server?.stop();
});

async function serve(url: string, role: 'front' | 'worker', name: string): Promise<ServeProcess> {
  const dir = tempDir(name);
  const p = await spawnServe({
    platform,
    stateDir: `${dir}/state`,
    exec: HANDLER_COMMAND,
    key: KEY,
    cwd: dir,
    args: [
      ...['--role', role, '--max-jobs', '1', '--heartbeat', '1s', '--lease', '3s'],
      ...['--grace', '1s', '--callback-timeout', '20s'],
    ],
    env: { RUNTASK_DATABASE_URL: url },
  });
  running.push(p);
  return p;
}

const finals = (id: string): Recorded[] =>
  platform.callbacks(id).filter((c) => ['passed', 'failed'].includes(statusOf(c) ?? ''));
const messageOf = (r: Recorded): unknown =>
  (r.json as { data?: { attributes?: { message?: unknown } } }).data?.attributes?.message;

describe('a front and two workers on one database', () => {
  it('the front queues, each job runs once on a worker, queued jobs report progress, a killed worker’s job is taken over', async () => {
    await server.createDatabase('roles');
    const url = server.urlOf('roles');
    const front = await serve(url, 'front', 'front');
    const workers = await Promise.all([serve(url, 'worker', 'worker-a'), serve(url, 'worker', 'worker-b')]);
    expect((await front.health()).body).toMatchObject({ status: 'ok', role: 'front' });
    expect((await workers[0].health()).body).toMatchObject({ status: 'ok', role: 'worker' });

    // A worker answers no run task request: a load balancer that sends one there is told to try elsewhere.
    const stray = requestFor(POST_PLAN_REQUEST, platform);
    const refused = await post(workers[0].url, bytesOf(stray));
    expect(refused.status).toBe(503);
    expect(platform.callbacks(stray.task_result_id)).toEqual([]);

    // Three requests, one after the other (the queue is first in, first out): two workers with one slot each.
    const requests = [0, 1, 2].map(() => requestFor(POST_PLAN_REQUEST, platform));
    for (const request of requests) expect((await post(front.url, bytesOf(request))).status).toBe(200);
    const [first, second, third] = requests as [
      (typeof requests)[0],
      (typeof requests)[0],
      (typeof requests)[0],
    ];
    await Promise.all([platform.waitForHandler(first.run_id), platform.waitForHandler(second.run_id)]);

    // The third waits in the queue: an instance keeps its progress window open, and /metrics counts it.
    const queued = await platform.waitFor(
      (r) => r.path.includes(third.task_result_id) && messageOf(r) === QUEUED_MESSAGE,
    );
    expect(statusOf(queued)).toBe('running');
    const { scrape: during } = await scrape(front.url);
    expect(during.value('runtask_queue_depth')).toBe(1);
    expect(during.value('runtask_requests_total', { outcome: 'accepted' })).toBe(3);
    // The front ran nothing.
    expect(front.events().some((l) => l.event === 'handler.started')).toBe(false);

    // Which worker holds which job, from their logs.
    const holder = async (id: string): Promise<number> => {
      const claimed = await Promise.race(
        workers.map((w, i) => w.waitForEvent('job.claimed', (l) => l.job === id).then(() => i)),
      );
      return claimed;
    };
    const firstOn = await holder(first.task_result_id);
    const secondOn = await holder(second.task_result_id);
    expect(firstOn).not.toBe(secondOn);

    // The first passes; its worker's slot frees up, and it takes the third from the queue.
    platform.release(first.run_id, { stdout: 'checked\n', exitCode: 0 });
    await platform.waitForCallbacks(first.task_result_id, 'passed');
    await platform.waitForHandler(third.run_id);
    expect(await holder(third.task_result_id)).toBe(firstOn);
    expect((await scrape(front.url)).scrape.value('runtask_queue_depth')).toBe(0);

    // The second's worker dies while its handler runs: the other worker takes it over after the lease.
    const victim = workers[secondOn]!;
    const survivor = workers[firstOn]!;
    victim.child.kill('SIGKILL');
    expect(await victim.exit).toMatchObject({ signal: 'SIGKILL' });
    platform.release(second.run_id, { stdout: 'nobody reads this\n', exitCode: 0 });
    const took = await survivor.waitForEvent('store.took_over', (l) => l.job === second.task_result_id);
    expect(took).toMatchObject({ phase: 'accepted' });
    const [failed] = await platform.waitForCallbacks(second.task_result_id, 'failed');
    expect(messageOf(failed!)).toBe(RESTARTED_MESSAGE);

    platform.release(third.run_id, { stdout: 'checked\n', exitCode: 0 });
    await platform.waitForCallbacks(third.task_result_id, 'passed');
    await survivor.waitForEvent('job.finished', (l) => l.job === third.task_result_id);

    // One final callback each; the third's history: queued progress, then its worker's, then the result.
    for (const request of requests) expect(finals(request.task_result_id)).toHaveLength(1);
    const history = platform.callbacks(third.task_result_id);
    expect(history.map(statusOf).at(-1)).toBe('passed');
    expect(history.slice(0, -1).every((c) => statusOf(c) === 'running')).toBe(true);
    expect(history.findIndex((c) => messageOf(c) === QUEUED_MESSAGE)).toBe(0);
    expect(history.some((c) => messageOf(c) === 'Running the check.')).toBe(true);
    // Each job was claimed by one worker only.
    const claims = workers.flatMap((w) =>
      w
        .events()
        .filter((l) => l.event === 'job.claimed')
        .map((l) => l.job),
    );
    expect(claims.sort()).toEqual(requests.map((r) => r.task_result_id).sort());

    expect(await survivor.stop()).toEqual({ code: 0, signal: null });
    expect(await front.stop()).toEqual({ code: 0, signal: null });
    for (const p of [front, ...workers]) expect(p.stderr()).not.toContain(server.password);
  }, 120_000);
});

describe('routes on one database', () => {
  const KEY_A = 'route-a-key-on-a-database';
  const KEY_B = 'route-b-key-on-a-database';
  const route = (path: string, hmacKey: string, exec: string): RouteOptions => ({
    path,
    hmacKey,
    exec,
    timeoutMs: 20_000,
    timeoutText: '20s',
    maxJobs: 2,
    allowed: new PlatformOrigins([platform.url]),
  });

  it('each route has its own queue: a front queues each request of its own key, a worker runs each route’s own handler', async () => {
    await server.createDatabase('routes');
    const url = server.urlOf('routes');
    const routes = [
      route('/policy-a', KEY_A, 'echo "checked by handler A"'),
      route('/tenants/b', KEY_B, 'echo "checked by handler B"; exit 1'),
    ];
    const common = { routes, databaseUrl: url, leaseMs: 3000, pollEveryMs: 100 };
    const front = await startTestIntegrator(platform, { ...common, role: 'front' });
    const worker = await startTestIntegrator(platform, { ...common, role: 'worker' });
    try {
      const at = (path: string): string => new URL(path, front.integrator.url).href;
      const a = requestFor(POST_PLAN_REQUEST, platform);
      const b = requestFor(POST_PLAN_REQUEST, platform);
      // Each route refuses the other's signature.
      expect((await post(at('/policy-a'), bytesOf(a), sign(bytesOf(a), KEY_B))).status).toBe(401);
      expect((await post(at('/tenants/b'), bytesOf(b), sign(bytesOf(b), KEY_A))).status).toBe(401);
      expect((await post(at('/policy-a'), bytesOf(a), sign(bytesOf(a), KEY_A))).status).toBe(200);
      expect((await post(at('/tenants/b'), bytesOf(b), sign(bytesOf(b), KEY_B))).status).toBe(200);

      const [passed] = await platform.waitForCallbacks(a.task_result_id, 'passed');
      const [failed] = await platform.waitForCallbacks(b.task_result_id, 'failed');
      expect(messageOf(passed!)).toBe('checked by handler A');
      expect(messageOf(failed!)).toBe('checked by handler B');
      await worker.waitForEvent('job.finished', (e) => e.fields.job === b.task_result_id);
      await worker.waitForEvent('job.finished', (e) => e.fields.job === a.task_result_id);
      // Claimed by the worker under each one's own route.
      const claimed = worker.events.filter((e) => e.event === 'job.claimed');
      expect(claimed.map((e) => [e.fields.job, e.fields.route]).sort()).toEqual(
        [
          [a.task_result_id, '/policy-a'],
          [b.task_result_id, '/tenants/b'],
        ].sort(),
      );

      // In pg-boss's table, one queue per route.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ name: string; n: number }>(
        `SELECT name, count(*)::int AS n FROM ${SCHEMA}.job WHERE name LIKE 'runtask-jobs%' GROUP BY name ORDER BY name`,
      );
      await client.end();
      expect(rows).toEqual([
        { name: routeQueue(routeName('/policy-a', true)), n: 1 },
        { name: routeQueue(routeName('/tenants/b', true)), n: 1 },
      ]);
      expect(rows[0]!.name).toMatch(/^runtask-jobs_policy-a-[0-9a-f]{12}$/);
    } finally {
      await front.cleanup();
      await worker.cleanup();
    }
  });
});
