/**
 * A job's final callback on a store that can lose the job (delivery.ts): claimed before it is sent, claimed again
 * while the store does not answer (the job held in `reporting`, never ended without its final) until the run's
 * token expires, sent with its whole deadline once claimed, cut short and claimed again when the lease stops
 * being sure, and nothing sent once the job is another's or the delivery is stopped. The callbacks go to a real
 * HTTP server on 127.0.0.1; the store is a stand-in whose answers each case sets.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePlatformHosts } from '../../../src/runtask/callback/origins.js';
import { deliverFinal, leaseWatch, TOKEN_LIFETIME_MS } from '../../../src/runtask/server/delivery.js';
import { Job } from '../../../src/runtask/server/job.js';
import type { EventLog } from '../../../src/runtask/server/log.js';
import { Slots } from '../../../src/runtask/server/slots.js';
import { clock, type JobStore } from '../../../src/runtask/server/store.js';
import { readRunTaskRequest } from '../../../src/terraform/runtask/payload.js';

/** The platform: answers each callback with `answer` (none: it keeps the request open until the client goes). */
let platform: Server;
/** Resolves once a request left open was given up by the integrator (its connection closed). */
let givenUp: Promise<void>;
let base: string;
let hits: number;
let answer: (n: number) => number | undefined;

beforeEach(async () => {
  hits = 0;
  answer = () => 200;
  let gaveUp: () => void;
  givenUp = new Promise((resolve) => (gaveUp = resolve));
  platform = createServer((req, res) => {
    const status = answer(++hits);
    req.resume();
    if (status === undefined) res.on('close', () => gaveUp());
    if (status !== undefined) req.on('end', () => res.writeHead(status).end('{}'));
  });
  await new Promise<void>((resolve) => platform.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(platform.address() as AddressInfo).port}`;
});
afterEach(async () => {
  platform.closeAllConnections();
  await new Promise((resolve) => platform.close(resolve));
});

/** A job accepted `ago` ms ago, its events, and what `deliverFinal` needs with `store`. */
function setUp(store: JobStore, ago = 0) {
  const raw = {
    payload_version: 1,
    stage: 'post_plan',
    access_token: 'token-1',
    task_result_id: 'taskrs-1',
    run_id: 'run-1',
    task_result_callback_url: `${base}/api/v2/task-results/taskrs-1/callback`,
  };
  const { request } = readRunTaskRequest(raw);
  const job = new Job({ id: 'taskrs-1', request, raw }, new Date(Date.now() - ago));
  const events: string[] = [];
  const note = (event: string): void => void events.push(event);
  const log = { info: note, warn: note, error: note } as unknown as EventLog;
  const deps = {
    ...job.reportDeps({ allowed: parsePlatformHosts([base]) } as never, log),
    retry: { baseDelayMs: 20, maxDelayMs: 50 },
  };
  const context = { store, log, deps, retryMs: 20 };
  return { job, events, context };
}

/** A store whose claims are not confirmed (no answer, lease past) until `confirmAfter` of them were made. */
function storeConfirming(confirmAfter: number, leaseMs = 60_000) {
  let claims = 0;
  let until = clock() - 1;
  const store = {
    report: async () => {
      claims++;
      if (claims < confirmAfter) return 'unsaved';
      until = clock() + leaseMs;
      return 'stored';
    },
    heldUntil: () => until,
  } as unknown as JobStore;
  return { store, claims: () => claims };
}

const passed = { status: 'passed', message: 'ok' } as const;

describe('deliverFinal on a store that can lose the job', () => {
  it('a claim not confirmed past the callback deadline is made again; once confirmed, the final is sent', async () => {
    const { store, claims } = storeConfirming(30);
    const { job, events, context } = setUp(store);
    const { outcome } = await deliverFinal(context, job, passed, 200);
    expect(outcome).toMatchObject({ kind: 'sent', status: 200 });
    expect(claims()).toBe(30);
    expect(hits).toBe(1);
    expect(events).toContain('callback.sent');
  });

  it('once claimed, the callback has its whole deadline, however long the claim took', async () => {
    const { store } = storeConfirming(30);
    const { job, context } = setUp(store);
    // The first two attempts fail: the deadline must leave room for the retries after them.
    answer = (n) => (n <= 2 ? 503 : 200);
    const { outcome } = await deliverFinal(context, job, passed, 500);
    expect(outcome).toMatchObject({ kind: 'sent', status: 200, attempts: 3 });
  });

  it('a store that never confirms: nothing is sent, and it gives up only when the run’s token expired', async () => {
    const { store, claims } = storeConfirming(Number.POSITIVE_INFINITY);
    const { job, context } = setUp(store, TOKEN_LIFETIME_MS - 300);
    const { outcome } = await deliverFinal(context, job, passed, 50);
    expect(outcome).toMatchObject({ kind: 'gave-up', attempts: 0 });
    expect((outcome as { reason: string }).reason).toContain('access token expired');
    expect(claims()).toBeGreaterThan(1);
    expect(hits).toBe(0);
  });

  it('a lease that stops being sure cuts the attempt short; claimed again, the final is sent', async () => {
    // The first claim gives a lease of 300 ms; the platform keeps the first request open past it.
    let claims = 0;
    let until = clock() - 1;
    const store = {
      report: async () => {
        claims++;
        until = clock() + (claims === 1 ? 300 : 60_000);
        return 'stored';
      },
      heldUntil: () => until,
    } as unknown as JobStore;
    answer = (n) => (n === 1 ? undefined : 200);
    const { job, events, context } = setUp(store);
    const { outcome } = await deliverFinal(context, job, passed, 30_000);
    expect(outcome).toMatchObject({ kind: 'sent', status: 200 });
    expect(claims).toBe(2);
    expect(hits).toBe(2);
    expect(events).toContain('job.lease_unsure');
  });

  it('a job another instance holds: nothing sent', async () => {
    const store = { report: async () => 'lost', heldUntil: () => clock() - 1 } as unknown as JobStore;
    const { job, events, context } = setUp(store);
    const { outcome } = await deliverFinal(context, job, passed, 1000);
    expect(outcome).toEqual({ kind: 'lost' });
    expect(hits).toBe(0);
    expect(events).toContain('job.lost');
  });

  it('stopped while claiming: aborted, nothing sent (the store keeps the job for the next holder)', async () => {
    const { store, claims } = storeConfirming(Number.POSITIVE_INFINITY);
    const { job, context } = setUp(store);
    const delivering = deliverFinal(context, job, passed, 50);
    while (claims() < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    job.delivery.abort('stopped');
    const { outcome } = await delivering;
    expect(outcome).toEqual({ kind: 'aborted', attempts: 0 });
    expect(hits).toBe(0);
  });

  it('stopped while the store does not answer a claim: aborted at once, nothing sent', async () => {
    let claims = 0;
    const store = {
      report: () => {
        claims++;
        return new Promise(() => undefined);
      },
      heldUntil: () => clock() - 1,
    } as unknown as JobStore;
    const { job, context } = setUp(store);
    const delivering = deliverFinal(context, job, passed, 50);
    while (claims === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    job.delivery.abort('stopped');
    const { outcome } = await delivering;
    expect(outcome).toEqual({ kind: 'aborted', attempts: 0 });
    expect(hits).toBe(0);
  });

  it('taken over while its final is sent: job.lost alone, no claim made again', async () => {
    let claims = 0;
    const store = {
      report: async () => (++claims === 1 ? 'stored' : 'lost'),
      heldUntil: () => clock() + 60_000,
    } as unknown as JobStore;
    answer = () => undefined;
    const { job, events, context } = setUp(store);
    const delivering = deliverFinal(context, job, passed, 30_000);
    while (hits === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    job.lost.abort();
    const { outcome } = await delivering;
    expect(outcome).toEqual({ kind: 'lost' });
    expect(claims).toBe(1);
    expect(events).toContain('job.lost');
    expect(events).not.toContain('job.lease_unsure');
  });
});

describe('progress callbacks of a job on a store that can lose it', () => {
  /** Starts the job's progress (heartbeats far apart, a long deadline) with the platform keeping it open. */
  function progressOf(until: () => number) {
    const store = { heldUntil: until } as unknown as JobStore;
    const { job } = setUp(store);
    answer = () => undefined;
    const settings = {
      heartbeatMs: 600_000,
      callbackTimeoutMs: 600_000,
      maxJobs: 1,
      allowed: parsePlatformHosts([base]),
    };
    const log = {
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    } as unknown as EventLog;
    job.startProgress(
      settings,
      new Slots(1),
      log,
      () => until() > clock(),
      (outer) => leaseWatch(store, job.id, outer, job.lost.signal),
    );
    return job;
  }

  it('a running callback in flight is cut short once the lease is past', async () => {
    const leaseEnds = clock() + 300;
    const job = progressOf(() => leaseEnds);
    await givenUp;
    await job.stopProgress();
    expect(hits).toBe(1);
  });

  it('a running callback in flight is cut short once another instance took the job over', async () => {
    const job = progressOf(() => clock() + 600_000);
    while (hits === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    job.lost.abort();
    await givenUp;
    await job.stopProgress();
    expect(hits).toBe(1);
  });
});
