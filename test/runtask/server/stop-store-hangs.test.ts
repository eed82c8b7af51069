/**
 * A graceful stop while the job store does not answer: it ends within its bounds instead of waiting for the
 * database. The job manager's drain leaves a final whose claim is never confirmed to the store (a stand-in that
 * never answers); the PostgreSQL store's release, on a real PostgreSQL whose backends are stopped (SIGSTOP),
 * stops waiting after `overdueMs`, leaves the leases to run out, and ends its connections.
 */
import { describe, expect, it } from 'vitest';
import { parsePlatformHosts } from '../../../src/runtask/callback/origins.js';
import { JobManager, type JobSettings } from '../../../src/runtask/server/jobs.js';
import { EventLog } from '../../../src/runtask/server/log.js';
import { PostgresStore } from '../../../src/runtask/server/postgres/postgres.js';
import { clock, type JobRecord, type JobStore } from '../../../src/runtask/server/store.js';
import { Output } from '../../../src/ui/output.js';
import { Capture } from '../../helpers/cli.js';
import { postgresPerFile } from '../../helpers/postgres.js';
import { recordOf } from './store.contract.js';

describe('a stop while the store does not answer', () => {
  it('drain: a final whose claim is never confirmed is left to the store once the stop callbacks ran out', async () => {
    const record: JobRecord = {
      ...recordOf('taskrs-stop'),
      acceptedAt: new Date().toISOString(),
      checkStartedAt: null,
    };
    let claims = 0;
    let finished = 0;
    const store = {
      kind: 'postgres',
      where: 'a database that hangs',
      takeOverEveryMs: undefined,
      takeOver: async () => [record],
      // Never answered, and the lease is never sure: the final can be neither claimed nor sent.
      report: () => {
        claims++;
        return new Promise(() => undefined);
      },
      heldUntil: () => clock() - 1,
      finish: async () => void finished++,
      health: () => ({ status: 'failing', problems: 1, unsaved: 0 }),
      release: async () => undefined,
    } as unknown as JobStore;
    const settings = {
      heartbeatMs: 600_000,
      // No slot: the job waits for one until the stop.
      maxJobs: 0,
      callbackTimeoutMs: 1000,
      shutdownCallbackTimeoutMs: 50,
      storeRetryMs: 20,
      allowed: parsePlatformHosts(['https://app.terraform.io']),
    } as unknown as JobSettings;
    const note = (): void => undefined;
    const log = { info: note, warn: note, error: note } as unknown as EventLog;
    const jobs = new JobManager(settings, store, log);
    expect(await jobs.recover()).toBe(1);
    await jobs.drain(0);
    expect(claims).toBe(1);
    expect(jobs.counts()).toEqual({ queued: 0, running: 0, reporting: 0 });
    // Not finished: the store keeps it for the instance that takes it over.
    expect(finished).toBe(0);
  }, 20_000);
});

describe('PostgreSQL: a release while the database hangs', () => {
  const server = postgresPerFile();

  it('stops waiting after overdueMs, leaves the leases, and ends the connections', async () => {
    await server.createDatabase('stop_hangs');
    const stderr = new Capture();
    const log = EventLog.for(new Output({ stdout: new Capture(), stderr, env: {} }));
    const store = await PostgresStore.open({
      url: server.urlOf('stop_hangs'),
      log,
      leaseMs: 60_000,
      // Longer than the test: only the release's own deadline can end it in time.
      statementTimeoutMs: 120_000,
      overdueMs: 500,
      poolSize: 2,
    });
    const pids: number[] = [];
    try {
      expect(await store.accept({ ...recordOf('job-s'), checkStartedAt: null })).toBe('accepted');
      const ran = await Promise.all(
        [0, 1].map(() => store.run('SELECT pg_backend_pid() AS pid, pg_sleep(0.3)', [])),
      );
      pids.push(...ran.map(({ rows }) => Number(rows[0]!.pid)));
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      await store.release();
      expect(stderr.text).toContain('store.release_late');
      expect(store.heldJobs()).toEqual([]);
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGCONT');
    }
  }, 30_000);
});
