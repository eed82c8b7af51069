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
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RESTARTED_MESSAGE } from '../../../src/runtask/server/jobs.js';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { tempDir } from '../../helpers/tmp.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { HANDLER_COMMAND, KEY, bytesOf, post, requestFor } from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';
import { ensureBuilt, spawnServe, type ServeProcess } from '../serveProcess.js';

const REQUESTS = 60;
/** The platform's progress window (run-tasks.md §6): a final callback later than this would be too late. */
const PROGRESS_WINDOW_MS = 10 * 60_000;

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

async function serve(url: string): Promise<ServeProcess> {
  const dir = tempDir('instance');
  const p = await spawnServe({
    platform,
    stateDir: `${dir}/state`,
    exec: HANDLER_COMMAND,
    key: KEY,
    cwd: dir,
    args: ['--lease', '3s', '--grace', '1s', '--callback-timeout', '20s'],
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
      data: { attributes: { status: 'failed', message: RESTARTED_MESSAGE } },
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
    // The killed instance's unfinished jobs, and only those, were taken over and reported failed.
    expect(tookOver.length).toBe(takenOver);
    expect(takenOver).toBeGreaterThan(0);

    // No handler ran twice: retries were answered without a run, takeovers reported without one.
    const ran = readFileSync(runs, 'utf8').trim().split('\n');
    expect(new Set(ran).size).toBe(ran.length);
    expect(ran.length).toBeLessThanOrEqual(REQUESTS);

    for (const p of survivors) expect(await p.stop()).toEqual({ code: 0, signal: null });
    for (const p of instances) expect(p.stderr()).not.toContain(server.password);
  }, 180_000);
});
