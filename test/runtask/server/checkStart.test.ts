/**
 * What a recovered job becomes (run, or reported with which result), and how a check's start is stored: tried
 * again while the store cannot write it, never started once the job is another instance's.
 */
import { describe, expect, it } from 'vitest';
import {
  NOT_SERVED_MESSAGE,
  recoveredVerdict,
  storeStart,
} from '../../../src/runtask/server/check/checkStart.js';
import { RESTARTED_MESSAGE, TAKEN_OVER_MESSAGE } from '../../../src/runtask/server/job.js';
import type { JobRecord, JobStore } from '../../../src/runtask/server/store.js';

const record = (extra: Partial<JobRecord>): JobRecord => ({
  version: 1,
  id: 'job-1',
  acceptedAt: '2026-11-27T00:00:00.000Z',
  phase: 'accepted',
  request: {},
  checkStartedAt: null,
  ...extra,
});
const failed = (message: string): unknown => ({ run: false, result: { status: 'failed', message } });

describe('a recovered job', () => {
  it('delivers a stored result, runs a check that never started, reports a started one failed', () => {
    const result = { status: 'passed' as const, message: 'fine' };
    expect(recoveredVerdict(record({ phase: 'reporting', result }), 'postgres', true)).toEqual({
      run: false,
      result,
    });
    expect(recoveredVerdict(record({ checkStartedAt: null }), 'postgres', true)).toEqual({ run: true });
    expect(recoveredVerdict(record({ checkStartedAt: null }), 'journal', true)).toEqual({ run: true });
    const started = record({ checkStartedAt: '2026-11-27T00:00:01.000Z' });
    expect(recoveredVerdict(started, 'postgres', true)).toEqual(failed(TAKEN_OVER_MESSAGE));
    expect(recoveredVerdict(started, 'journal', true)).toEqual(failed(RESTARTED_MESSAGE));
  });

  it('runs nothing on a retired route', () => {
    expect(recoveredVerdict(record({ checkStartedAt: null }), 'journal', false)).toEqual(
      failed(NOT_SERVED_MESSAGE),
    );
  });
});

/** A store whose `started` answers from a script, counting the calls. */
function scripted(answers: ('stored' | 'lost' | 'unsaved' | Error)[]): {
  store: JobStore;
  calls: () => number;
} {
  let calls = 0;
  const store = {
    started: () => {
      const answer = answers[Math.min(calls++, answers.length - 1)]!;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  } as unknown as JobStore;
  return { store, calls: () => calls };
}

describe("storing a check's start", () => {
  it('tries again while the store cannot write (or throws), until stored', async () => {
    const { store, calls } = scripted(['unsaved', new Error('down'), 'unsaved', 'stored']);
    expect(await storeStart(store, record({}), new AbortController().signal, 1)).toBe('stored');
    expect(calls()).toBe(4);
  });

  it('stops at once when the job is another instance’s now, or when the job is stopped', async () => {
    const lost = scripted(['lost']);
    expect(await storeStart(lost.store, record({}), new AbortController().signal, 1)).toBe('lost');
    expect(lost.calls()).toBe(1);
    const stop = new AbortController();
    const never = scripted(['unsaved']);
    const waiting = storeStart(never.store, record({}), stop.signal, 60_000);
    stop.abort('stopped');
    expect(await waiting).toBe('aborted');
    expect(never.calls()).toBe(1);
  });
});
