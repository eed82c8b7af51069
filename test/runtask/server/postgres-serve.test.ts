/**
 * `runtask serve` on PostgreSQL, against a real server this file starts on 127.0.0.1: two integrators on one
 * database, where the platform's retry of a request on the other instance is one job (one handler run, one
 * `running`, one final callback); a job whose instance crashed is taken over by the other, which sends its final
 * callback; and the command's flags: `--database-url` / `RUNTASK_DATABASE_URL`, the warning for a password on
 * the command line, and no password in any output, also when the database cannot be reached.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TAKEN_OVER_MESSAGE } from '../../../src/runtask/server/jobs.js';
import { SCHEMA } from '../../../src/runtask/server/postgres/postgres.js';
import { passwordsOf, redactDatabaseUrl } from '../../../src/runtask/server/redact.js';
import { runCli } from '../../helpers/cli.js';
import { postgresPerFile, startPostgres } from '../../helpers/postgres.js';
import { tempDir } from '../../helpers/tmp.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { bytesOf, integratorsPerTest, post, requestFor, type TestIntegrator } from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';

const server = postgresPerFile();
const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);

/** A database of the test's own. */
function freshDatabase(): Promise<string> {
  return server.freshDatabase('serve');
}

/** Everything the jobs table holds, as text. */
async function dump(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ text: string }>(`SELECT record::text AS text FROM ${SCHEMA}.jobs`);
    return rows.map((row) => row.text).join('\n');
  } finally {
    await client.end();
  }
}

function integrator(url: string, leaseMs = 3000): Promise<TestIntegrator> {
  return startIntegrator({ databaseUrl: url, leaseMs });
}

describe('two integrators on one database', () => {
  it('a retried request that lands on the other instance is one job: one handler, one final callback', async () => {
    const url = await freshDatabase();
    const [a, b] = [await integrator(url), await integrator(url)];
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const body = bytesOf(request);
    expect((await post(a.integrator.url, body)).status).toBe(200);
    await platform.waitForHandler(request.run_id);
    // The platform's retry goes to the other instance (a load balancer), and then to the first again.
    expect((await post(b.integrator.url, body)).status).toBe(200);
    expect((await post(a.integrator.url, body)).status).toBe(200);
    expect(b.events.some((e) => e.event === 'request.duplicate')).toBe(true);
    expect(b.integrator.jobs.counts()).toEqual({ queued: 0, running: 0, reporting: 0 });

    platform.release(request.run_id, { stdout: 'all fine\n', exitCode: 0 });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
    await a.integrator.jobs.idle();
    expect(platform.callbacks(request.task_result_id).map(statusOf)).toEqual(['running', 'passed']);
    // Accepted once, by the first instance; each retry answered as a duplicate.
    const accepted = [...a.events, ...b.events].filter((e) => e.event === 'job.accepted');
    expect(accepted).toHaveLength(1);
    expect([...a.events, ...b.events].filter((e) => e.event === 'request.duplicate')).toHaveLength(2);
    // The access token is gone from the database once the final callback is delivered.
    expect(await dump(url)).not.toContain(String(request.access_token));
  });

  it('a taken-over job whose check never started is run by its new holder, once', async () => {
    const url = await freshDatabase();
    const a = await startIntegrator({ databaseUrl: url, leaseMs: 3000, maxJobs: 1 });
    const b = await integrator(url);
    const [running, waiting] = [
      requestFor(POST_PLAN_REQUEST, platform),
      requestFor(POST_PLAN_REQUEST, platform),
    ];
    platform.release(running.run_id, { hang: true });
    expect((await post(a.integrator.url, bytesOf(running))).status).toBe(200);
    await platform.waitForHandler(running.run_id);
    // One slot: the second waits for it, its check not started.
    expect((await post(a.integrator.url, bytesOf(waiting))).status).toBe(200);
    await platform.waitFor((r) => r.path.includes(waiting.task_result_id) && statusOf(r) === 'running');
    await a.integrator.destroy();

    const [failed] = await platform.waitForCallbacks(running.task_result_id, 'failed');
    expect(failed!.json).toMatchObject({ data: { attributes: { message: TAKEN_OVER_MESSAGE } } });
    await platform.waitForHandler(waiting.run_id);
    platform.release(waiting.run_id, { stdout: 'checked by the new holder\n', exitCode: 0 });
    await platform.waitForCallbacks(waiting.task_result_id, 'passed');
    await b.integrator.jobs.idle();
    for (const request of [running, waiting]) {
      const finals = platform
        .callbacks(request.task_result_id)
        .filter((c) => ['passed', 'failed'].includes(statusOf(c) ?? ''));
      expect(finals).toHaveLength(1);
      const runs = platform.requests.filter(
        (r) => r.path === '/handler/start' && (r.json as { key: string }).key === request.run_id,
      );
      expect(runs).toHaveLength(1);
    }
    expect(
      b.events.find((e) => e.event === 'job.recovered' && e.fields.job === waiting.task_result_id),
    ).toMatchObject({
      fields: expect.objectContaining({ status: 'run' }) as unknown,
    });
  });

  it('handlers never see the database credentials: no PG* variable, no value holding its password', async () => {
    const url = await freshDatabase();
    // node-postgres takes the password from the query as well.
    const queryUrl = `${url.replace(`:${server.password}@`, '@')}?password=${server.password}`;
    const t = await startIntegrator({
      databaseUrl: queryUrl,
      leaseMs: 3000,
      env: {
        PATH: process.env.PATH,
        TEST_PLATFORM_URL: platform.url,
        PGPASSWORD: server.password,
        PGHOST: '127.0.0.1',
        PGUSER: 'postgres',
        APP_DATABASE: queryUrl,
        PGP_KEY_ID: 'not a database variable',
      },
    });
    const request = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(t.integrator.url, bytesOf(request))).status).toBe(200);
    const report = await platform.waitForHandler(request.run_id);
    platform.release(request.run_id, { stdout: 'ok\n', exitCode: 0 });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
    expect(Object.keys(report.env).filter((name) => name.startsWith('PG'))).toEqual(['PGP_KEY_ID']);
    expect(JSON.stringify(report.env)).not.toContain(server.password);
    expect(t.stderr.text).not.toContain(server.password);
  });

  it('a job whose instance crashed is taken over by the other, which sends its one final callback', async () => {
    const url = await freshDatabase();
    const [a, b] = [await integrator(url), await integrator(url)];
    const request = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(a.integrator.url, bytesOf(request))).status).toBe(200);
    await platform.waitForHandler(request.run_id);
    await a.integrator.destroy(); // as a crash: handler killed, nothing reported, the lease left to run out

    const [final] = await platform.waitForCallbacks(request.task_result_id, 'failed');
    expect(final!.json).toMatchObject({
      data: { attributes: { status: 'failed', message: TAKEN_OVER_MESSAGE } },
    });
    await b.integrator.jobs.idle();
    expect(platform.callbacks(request.task_result_id).map(statusOf)).toEqual(['running', 'failed']);
    expect(b.events.find((e) => e.event === 'store.took_over')).toMatchObject({
      fields: expect.objectContaining({ job: request.task_result_id }) as unknown,
    });
    expect(await dump(url)).not.toContain(String(request.access_token));
  });
});

describe('a database that goes away', () => {
  it('/healthz says so (503, degraded, the store failing) and new requests are refused with 503', async () => {
    const own = await startPostgres();
    try {
      const t = await startIntegrator({ databaseUrl: own.url, leaseMs: 3000 });
      const healthz = async (): Promise<{ status: number; body: Record<string, unknown> }> => {
        const response = await fetch(new URL('/healthz', t.integrator.url));
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      expect(await healthz()).toMatchObject({
        status: 200,
        body: { status: 'ok', store: { status: 'ok' } },
      });
      await own.stop();
      // The next renewal (every second of a 3 s lease) finds the server gone.
      const failed = await t.waitForEvent('store.failed');
      expect(String(failed.msg)).not.toContain(own.password);
      expect(await healthz()).toMatchObject({
        status: 503,
        body: { status: 'degraded', store: { status: 'failing' } },
      });
      // Anyone may ask /healthz: codes only there (the refused connection's address is in the log).
      let refused = await healthz();
      while (
        (refused.body.store as { lastProblem?: { code?: string } }).lastProblem?.code !== 'ECONNREFUSED'
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        refused = await healthz();
      }
      expect(JSON.stringify(refused.body)).not.toContain(`:${own.port}`);
      const request = requestFor(POST_PLAN_REQUEST, platform);
      const answer = await post(t.integrator.url, bytesOf(request));
      expect(answer.status).toBe(503);
      expect(answer.text).toContain('cannot write its database');
      expect(platform.callbacks(request.task_result_id)).toEqual([]);
      expect(t.stderr.text).not.toContain(own.password);
    } finally {
      await own.stop();
    }
  });
});

/** Runs serve with an already-fired signal: it starts, prints, and stops at once. */
function serve(args: string[], env: Record<string, string> = {}): ReturnType<typeof runCli> {
  const stopped = new AbortController();
  stopped.abort('SIGTERM');
  const dir = tempDir('serve');
  return runCli(
    ['runtask', 'serve', '--port', '0', '--exec', 'true', '--state-dir', join(dir, 'state'), ...args],
    {
      env,
      cwd: dir,
      signal: stopped.signal,
    },
  );
}

/** A loopback port nothing listens on (taken, then given back). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('runtask serve --database-url', () => {
  it('with a password on the command line: works, warns, and never shows the password', async () => {
    const url = await freshDatabase();
    const result = await serve(['--json', '--database-url', url]);
    expect(result.exitCode).toBe(0);
    const startLine = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(startLine).toMatchObject({ store: 'postgres', database: url.replace(server.password, '***') });
    expect(startLine).not.toHaveProperty('stateDir');
    expect(result.stderr).toMatch(/--database-url holds a password.*RUNTASK_DATABASE_URL/);
    expect(result.stdout + result.stderr).not.toContain(server.password);
  });

  it('with the password in the query (?password=…): works, warns, and never shows it', async () => {
    const url = await freshDatabase();
    const queryUrl = `${url.replace(`:${server.password}@`, '@')}?application_name=x&password=${server.password}`;
    const result = await serve(['--json', '--database-url', queryUrl]);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      store: 'postgres',
      database: queryUrl.replace(server.password, '***'),
    });
    expect(result.stderr).toMatch(/--database-url holds a password/);
    expect(result.stdout + result.stderr).not.toContain(server.password);
  });

  it('from RUNTASK_DATABASE_URL: no warning, no password', async () => {
    const url = await freshDatabase();
    const result = await serve(['--json', '--lease', '5s', '--database-timeout', '20s'], {
      RUNTASK_DATABASE_URL: url,
    });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ store: 'postgres' });
    expect(result.stderr).toContain('lease 5s');
    expect(result.stderr).not.toContain('holds a password');
    expect(result.stdout + result.stderr).not.toContain(server.password);
  });

  it('a database that cannot be reached → exit 2, the URL shown without its password', async () => {
    const port = await closedPort();
    const url = `postgres://someone:hunter2-secret@127.0.0.1:${port}/jobs`;
    const result = await serve(['--database-url', url]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`cannot use the database postgres://someone:***@127.0.0.1:${port}/jobs`);
    expect(result.stdout + result.stderr).not.toContain('hunter2-secret');
  });

  it('a wrong password → exit 2, neither password shown', async () => {
    const url = server.urlOf('postgres').replace(server.password, 'not-the-password');
    const result = await serve([], { RUNTASK_DATABASE_URL: url });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/password authentication failed/);
    expect(result.stdout + result.stderr).not.toContain('not-the-password');
    expect(result.stdout + result.stderr).not.toContain(server.password);
  });

  it.each([
    ['not a URL', ['--database-url', 'host=db password=pw'], /the database URL is not a URL \(not shown/],
    [
      'another scheme',
      ['--database-url', 'mysql://u:pw@db/x'],
      /mysql:\/\/u:\*\*\*@db\/x is not a postgres:\/\/ URL/,
    ],
    ['--lease without a database', ['--lease', '30s'], /--lease needs a shared job store/],
    ['--role front without a database', ['--role', 'front'], /--role front needs a shared job store/],
    [
      '--database-pool without a database',
      ['--database-pool', '5'],
      /--database-pool needs a shared job store/,
    ],
    [
      'a pool of one',
      ['--database-url', 'postgres://db/x', '--database-pool', '1'],
      /--database-pool must be a whole number between 2 and 100, got "1"/,
    ],
    ['--role worker without a database', ['--role', 'worker'], /--role worker needs a shared job store/],
    [
      '--database-timeout without a database',
      ['--database-timeout', '30s'],
      /--database-timeout needs a shared job store/,
    ],
    [
      'a database timeout too short',
      ['--database-url', 'postgres://db/x', '--database-timeout', '500ms'],
      /--database-timeout must be between 1s and 5m, got "500ms"/,
    ],
    [
      'an unknown role',
      ['--database-url', 'postgres://db/x', '--role', 'both'],
      /--role must be one of all, front, worker, got "both"/,
    ],
    [
      'a lease too short',
      ['--database-url', 'postgres://db/x', '--lease', '1s'],
      /--lease must be between 2s and 5m/,
    ],
  ])('%s → exit 2', async (_name, args, message) => {
    const result = await serve(args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\bpw\b/);
  });
});

describe('the database URL as shown', () => {
  it('has its password replaced, percent-encoded or not; other text is not shown at all', () => {
    expect(redactDatabaseUrl('postgres://u:p%40ss%2Fw@db.internal:5432/jobs?sslmode=require')).toBe(
      'postgres://u:***@db.internal:5432/jobs?sslmode=require',
    );
    expect(passwordsOf('postgres://u:p%40ss%2Fw@db/jobs')).toEqual(['p%40ss%2Fw', 'p@ss/w']);
    expect(redactDatabaseUrl('postgres://u@db/jobs')).toBe('postgres://u@db/jobs');
    expect(passwordsOf('postgres://u@db/jobs')).toEqual([]);
    expect(redactDatabaseUrl('host=db password=pw')).toBe('(not a URL: not shown)');
    expect(redactDatabaseUrl('postgres://u@db/jobs?sslmode=require&password=p%40ss&PASSWORD=two')).toBe(
      'postgres://u@db/jobs?sslmode=require&password=***&PASSWORD=***',
    );
    expect(passwordsOf('postgres://u@db/jobs?password=p%40ss')).toEqual(['p%40ss', 'p@ss']);
  });
});
