/**
 * Two `runtask serve` processes (the built program, as a user runs it) on one PostgreSQL database, started by
 * this file on 127.0.0.1: the platform's retry of a request on the other instance is answered 200 and is the
 * same job; when the instance running it is killed with SIGKILL, the other takes it over once the lease
 * (`--lease 3s`) has run out and sends the one final callback.
 *
 * Then issue 17's acceptance run: three processes, 60 signed requests spread over them, a third of them retried
 * on another instance, and one instance killed with SIGKILL while its handlers run. Every task result gets
 * exactly one final callback (a second would be answered 409 by the platform and is counted here as a failure),
 * none later than the platform's 10-minute progress window, and no handler runs twice: a retry is answered 200
 * without a second run, and a job taken over from the killed instance is reported, not run again (its check was
 * cut short: `failed`, "the integrator restarted").
 *
 * Then the roles (`--role front|worker`): one front and two workers. The front answers the platform and queues;
 * the workers take the queued jobs as their slots free up (`--max-jobs 1` each), each job to one worker; a job
 * that waits in the queue gets its `running` callbacks from the instances (the platform's 10-minute window stays
 * open); a worker answers no run task request; /metrics shows the queue's depth. A worker killed with SIGKILL
 * while its handler runs has its job taken over by the other worker and reported failed (never run twice), and
 * the jobs waiting in the queue still run. Last, routes on a database: a queue per route, each route's key and
 * handler.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { QUEUED_MESSAGE, TAKEN_OVER_MESSAGE } from '../../../src/runtask/server/jobs.js';
import { SCHEMA, routeQueue } from '../../../src/runtask/server/postgres/postgres.js';
import { routeName } from '../../../src/runtask/server/routing.js';
import type { RouteOptions } from '../../../src/runtask/server/options.js';
import { postgresPerFile } from '../../helpers/postgres.js';
import { tempDir } from '../../helpers/tmp.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import {
  HANDLER_COMMAND,
  KEY,
  bytesOf,
  post,
  requestFor,
  sign,
  startTestIntegrator,
  testRoute,
} from '../helpers.js';
import { TestPlatform, statusOf, type Recorded } from '../platform.js';
import { ensureBuilt, spawnServe, type ServeProcess } from '../serveProcess.js';
import { scrape } from './prometheus.js';

const REQUESTS = 60;
/** The platform's progress window (run-tasks.md §6): a final callback later than this would be too late. */
const PROGRESS_WINDOW_MS = 10 * 60_000;

const running: ServeProcess[] = [];

beforeAll(() => ensureBuilt(), 120_000);
const server = postgresPerFile();
const platform = TestPlatform.perFile();
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exit;
  }
});

/** One `runtask serve` on the database at `url` (3 s lease, 1 s grace), with `extra` flags. */
async function serve(url: string, extra: string[] = [], name = 'instance'): Promise<ServeProcess> {
  const dir = tempDir(name);
  const p = await spawnServe({
    platform,
    stateDir: `${dir}/state`,
    exec: HANDLER_COMMAND,
    key: KEY,
    cwd: dir,
    args: [...extra, '--lease', '3s', '--grace', '1s', '--callback-timeout', '20s'],
    env: { RUNTASK_DATABASE_URL: url },
  });
  running.push(p);
  return p;
}

describe('two runtask serve processes on one database', () => {
  it('a retry on the other instance is one job; after a SIGKILL the other instance reports it once', async () => {
    await server.createDatabase('processes');
    const url = server.urlOf('processes');
    const [a, b] = await Promise.all([serve(url), serve(url)]);
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const body = bytesOf(request);

    expect((await post(a.url, body)).status).toBe(200);
    await a.orExit(platform.waitForHandler(request.run_id));
    expect((await post(b.url, body)).status).toBe(200);
    await b.waitForEvent('request.duplicate', (l) => l.job === request.task_result_id);
    expect(b.events().some((l) => l.event === 'job.accepted')).toBe(false);

    a.child.kill('SIGKILL');
    expect(await a.exit).toMatchObject({ signal: 'SIGKILL' });
    // Whatever handler A left behind is told to finish: its result has nobody to go to.
    platform.release(request.run_id, { stdout: 'too late\n', exitCode: 0 });

    const took = await b.waitForEvent('store.took_over', (l) => l.job === request.task_result_id);
    expect(took).toMatchObject({ phase: 'accepted' });
    const [final] = await b.orExit(platform.waitForCallbacks(request.task_result_id, 'failed'));
    expect(final!.json).toMatchObject({
      data: { attributes: { status: 'failed', message: TAKEN_OVER_MESSAGE } },
    });
    await b.waitForEvent('job.finished', (l) => l.job === request.task_result_id);
    expect(platform.callbacks(request.task_result_id).map(statusOf)).toEqual(['running', 'failed']);

    expect(await b.stop()).toEqual({ code: 0, signal: null });
    for (const p of [a, b]) expect(p.stderr()).not.toContain(server.password);
  });
});

describe('three runtask serve processes on one database', () => {
  it('60 requests with retries across instances and a SIGKILL: one final callback each, in time, no handler twice', async () => {
    await server.createDatabase('three');
    const url = server.urlOf('three');
    const dir = tempDir('three');
    const runs = join(dir, 'handler-runs.log');
    // Each run of a handler leaves one line (its task result id), then the check takes 1.5 s.
    const exec = `echo "$RUNTASK_TASK_RESULT_ID" >> '${runs}'; sleep 1.5; echo checked`;
    const serve = async (n: number): Promise<ServeProcess> => {
      const p = await spawnServe({
        platform,
        stateDir: join(dir, `state-${n}`),
        exec,
        key: KEY,
        cwd: dir,
        args: ['--lease', '3s', '--grace', '1s', '--callback-timeout', '20s', '--max-jobs', '8'],
        env: { RUNTASK_DATABASE_URL: url },
      });
      running.push(p);
      return p;
    };
    const instances = await Promise.all([serve(0), serve(1), serve(2)]);

    const sent = new Map<string, number>();
    const requests = Array.from({ length: REQUESTS }, () => requestFor(POST_PLAN_REQUEST, platform));
    await Promise.all(
      requests.map(async (request, i) => {
        const body = bytesOf(request);
        sent.set(request.task_result_id, Date.now());
        expect((await post(instances[i % 3]!.url, body)).status).toBe(200);
        // A third are sent again to another instance, as the platform's retry after a lost answer may be.
        if (i % 3 === 0) expect((await post(instances[(i + 1) % 3]!.url, body)).status).toBe(200);
      }),
    );

    // Kill instance 0 while its handlers run (its 20 jobs cannot all have finished: 8 slots, 1.5 s each).
    const victim = instances[0];
    await victim.waitForEvent('handler.started');
    victim.child.kill('SIGKILL');
    expect(await victim.exit).toMatchObject({ signal: 'SIGKILL' });

    // Every task result reaches a final status, through the survivors.
    const finals = await Promise.all(
      requests.map((request) =>
        Promise.race([
          platform.waitForCallbacks(request.task_result_id, 'passed'),
          platform.waitForCallbacks(request.task_result_id, 'failed'),
        ]),
      ),
    );
    // Let late duplicates (if any) arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    let takenOver = 0;
    for (const [i, request] of requests.entries()) {
      const callbacks = platform.callbacks(request.task_result_id);
      const final = callbacks.filter((c) => ['passed', 'failed'].includes(statusOf(c) ?? ''));
      expect(final, `task result ${request.task_result_id} (request ${i})`).toHaveLength(1);
      expect(final[0]!.at - sent.get(request.task_result_id)!).toBeLessThan(PROGRESS_WINDOW_MS);
      if (statusOf(final[0]!) === 'failed') takenOver++;
      expect(finals[i]![0]).toBe(final[0]);
    }
    const survivors = instances.slice(1);
    const tookOver = survivors.flatMap((p) => p.events().filter((l) => l.event === 'store.took_over'));
    const recovered = survivors.flatMap((p) => p.events().filter((l) => l.event === 'job.recovered'));
    // The killed instance's unfinished jobs, and only those, were taken over: those whose check had started
    // reported failed, those still waiting for a slot run by their new holder.
    expect(tookOver.length).toBe(recovered.length);
    expect(recovered.filter((l) => l.status === 'failed').length).toBe(takenOver);
    expect(takenOver).toBeGreaterThan(0);

    // No handler ran twice: retries were answered without a run, takeovers reported without one.
    const ran = readFileSync(runs, 'utf8').trim().split('\n');
    expect(new Set(ran).size).toBe(ran.length);
    expect(ran.length).toBeLessThanOrEqual(REQUESTS);

    for (const p of survivors) expect(await p.stop()).toEqual({ code: 0, signal: null });
    for (const p of instances) expect(p.stderr()).not.toContain(server.password);
  }, 180_000);
});

function serveAs(url: string, role: 'front' | 'worker', name: string): Promise<ServeProcess> {
  return serve(url, ['--role', role, '--max-jobs', '1', '--heartbeat', '1s'], name);
}

const finals = (id: string): Recorded[] =>
  platform.callbacks(id).filter((c) => ['passed', 'failed'].includes(statusOf(c) ?? ''));
const messageOf = (r: Recorded): unknown =>
  (r.json as { data?: { attributes?: { message?: unknown } } }).data?.attributes?.message;

describe('a front and two workers on one database', () => {
  it('the front queues, each job runs once on a worker, queued jobs report progress, a killed worker’s job is taken over', async () => {
    await server.createDatabase('roles');
    const url = server.urlOf('roles');
    const front = await serveAs(url, 'front', 'front');
    const workers = await Promise.all([
      serveAs(url, 'worker', 'worker-a'),
      serveAs(url, 'worker', 'worker-b'),
    ]);
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
    expect(messageOf(failed!)).toBe(TAKEN_OVER_MESSAGE);

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
  const route = (path: string, hmacKey: string, exec: string): RouteOptions =>
    testRoute(platform.url, path, hmacKey, exec);

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

      // In the jobs table, one queue per route.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ name: string; n: number }>(
        `SELECT queue AS name, count(*)::int AS n FROM ${SCHEMA}.jobs WHERE queue LIKE 'runtask-jobs%' GROUP BY queue ORDER BY queue`,
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
