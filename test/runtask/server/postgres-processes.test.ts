/**
 * Two `runtask serve` processes (the built program, as a user runs it) on one PostgreSQL database, started by
 * this file on 127.0.0.1: the platform's retry of a request on the other instance is answered 200 and is the
 * same job; when the instance running it is killed with SIGKILL, the other takes it over once the lease
 * (`--lease 3s`) has run out and sends the one final callback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RESTARTED_MESSAGE } from '../../../src/runtask/server/jobs.js';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { tempDir } from '../../helpers/tmp.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { HANDLER_COMMAND, KEY, bytesOf, post, requestFor } from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';
import { ensureBuilt, spawnServe, type ServeProcess } from '../serveProcess.js';

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
