/**
 * The one retry policy (src/net/retry.ts, src/net/retryPolicy.ts), a test per rule: which failures are retried
 * (each status and code, and each that is not), the server's waits (Retry-After in seconds, as a date, garbage,
 * over the cap; X-RateLimit-Reset), backoff growth and jitter bounds, the deadline, the abort signal before, during
 * an attempt and during a wait, the refresh and reconcile hooks, and how attempts are counted. Time is a fake
 * clock: waits are recorded, never slept.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, InterruptedError } from '../../src/errors.js';
import {
  Again,
  AnswerError,
  DEFAULT_POLICY,
  backoffMs,
  failureOf,
  isTransient,
  judge,
  pause,
  rateLimitResetMs,
  retryAfterMs,
  retrying,
  waitBeforeRetry,
  SERVER_WAIT_FLOOR_MS,
  type Failure,
  type RetryClock,
  type RetryInfo,
  type RetryOptions,
} from '../../src/net/retry.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

/** A clock whose sleeps are recorded and pass at once, moving `now` on. */
function fakeClock(random = 0.5) {
  const slept: number[] = [];
  let now = NOW;
  const clock: RetryClock = {
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
    random: () => random,
  };
  return { clock, slept, advance: (ms: number) => (now += ms) };
}

/** An error with a Node error code, as Node and got raise them. */
function coded(code: string, message = code): Error {
  return Object.assign(new Error(message), { code });
}

/** An error carrying the answer it failed on, as got's HTTPError does. */
function gotAnswer(status: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`Response code ${status}`), { response: { statusCode: status, headers } });
}

/** Runs an attempt that throws `errors` in turn (then succeeds with 'ok'), recording what happened. */
async function run(errors: unknown[], options: Partial<RetryOptions<string>> = {}, random = 0.5) {
  const { clock, slept } = fakeClock(random);
  const retries: RetryInfo[] = [];
  let attempts = 0;
  const queue = [...errors];
  const result = await retrying(
    async () => {
      attempts++;
      if (queue.length > 0) throw queue.shift();
      return 'ok';
    },
    { interrupted: 'Interrupted while testing', clock, onRetry: (i) => retries.push(i), ...options },
  ).catch((error: unknown) => ({ thrown: error }));
  return { result, attempts, slept, retries };
}

describe('what is retried', () => {
  it.each([408, 425, 429, 500, 502, 503, 504, 507, 520, 521, 522, 523, 524])(
    'an answer %i: retried; for a create, ambiguous (read before sending it again)',
    async (status) => {
      const failure = failureOf(new AnswerError(status, {}));
      expect(judge(failure, true)).toEqual({ retry: true, ambiguous: false, reason: `status ${status}` });
      expect(judge(failure, false)).toEqual({ retry: true, ambiguous: true, reason: `status ${status}` });
      const { result, attempts } = await run([new AnswerError(status, {})]);
      expect(result).toBe('ok');
      expect(attempts).toBe(2);
    },
  );

  it.each([301, 302, 304, 400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 501, 505])(
    'an answer %i: final, thrown as it is after one attempt',
    async (status) => {
      const error = new AnswerError(status, {});
      expect(judge(failureOf(error), true)).toMatchObject({ retry: false, ambiguous: false });
      expect(judge(failureOf(error), false)).toMatchObject({ retry: false, ambiguous: false });
      const { result, attempts, retries } = await run([error]);
      expect(result).toEqual({ thrown: error });
      expect(attempts).toBe(1);
      expect(retries).toEqual([]);
    },
  );

  it.each([
    'ECONNRESET',
    'ECONNREFUSED',
    'ECONNABORTED',
    'ETIMEDOUT',
    'ESOCKETTIMEDOUT',
    'EPIPE',
    'ENOTFOUND',
    'EAI_AGAIN',
    'ENETUNREACH',
    'ENETDOWN',
    'EHOSTUNREACH',
    'EADDRINUSE',
    'HPE_INVALID_CONSTANT',
    'UND_ERR_SOCKET',
    'ERR_STREAM_PREMATURE_CLOSE',
    'ERR_NETWORK',
  ])('no answer (%s): retried, named by its code; for a create, ambiguous', async (code) => {
    expect(failureOf(coded(code))).toEqual({ kind: 'no-answer', reason: code, tls: false });
    expect(judge(failureOf(coded(code)), false)).toEqual({ retry: true, ambiguous: true, reason: code });
    const { result, retries } = await run([coded(code)]);
    expect(result).toBe('ok');
    expect(retries.map((r) => r.reason)).toEqual([code]);
  });

  it.each([
    ['EPROTO', 'write EPROTO 0820:error:0A00010B:SSL routines:ssl3_get_record:wrong version number'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number'],
    ['ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE', 'handshake failure'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"],
    ['CERT_HAS_EXPIRED', 'certificate has expired'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'],
  ])(
    'no answer because of TLS (%s): final, the same server will not start speaking it',
    async (code, message) => {
      const error = coded(code, message);
      expect(failureOf(error)).toEqual({ kind: 'no-answer', reason: code, tls: true });
      expect(judge(failureOf(error), true)).toMatchObject({ retry: false });
      const { result, attempts } = await run([error]);
      expect(result).toEqual({ thrown: error });
      expect(attempts).toBe(1);
    },
  );

  it.each([
    'ENOENT',
    'EACCES',
    'EPERM',
    'ENOSPC',
    'EISDIR',
    'EMFILE',
    'ERR_INVALID_URL',
    'ERR_GOT_REQUEST_ERROR',
  ])('a local or unknown code (%s): final', async (code) => {
    expect(failureOf(coded(code))).toEqual({ kind: 'final' });
    const { attempts } = await run([coded(code)]);
    expect(attempts).toBe(1);
  });

  it('an error without a code, or with one of our own lower-case codes, is final', async () => {
    expect(failureOf(new Error('bug'))).toEqual({ kind: 'final' });
    expect(failureOf('a string')).toEqual({ kind: 'final' });
    expect(failureOf(new InterruptedError('Interrupted elsewhere'))).toEqual({ kind: 'final' });
    const { attempts } = await run([new TypeError('x is undefined')]);
    expect(attempts).toBe(1);
  });

  it("reads got's HTTPError shape (the answer it carries, headers included)", () => {
    expect(failureOf(gotAnswer(503, { 'retry-after': '2' }))).toEqual({
      kind: 'answer',
      status: 503,
      headers: { 'retry-after': '2' },
    });
    expect(failureOf(gotAnswer(404))).toMatchObject({ kind: 'answer', status: 404 });
  });

  it('an error carrying a 2xx whose body was cut short is read by its code: no answer, retried', async () => {
    const cut = (code?: string): Error => Object.assign(gotAnswer(200), code === undefined ? {} : { code });
    expect(failureOf(cut('ECONNRESET'))).toEqual({ kind: 'no-answer', reason: 'ECONNRESET', tls: false });
    expect(failureOf(cut('ETIMEDOUT'))).toEqual({ kind: 'no-answer', reason: 'ETIMEDOUT', tls: false });
    expect(failureOf(cut())).toEqual({ kind: 'final' });
    const { result, attempts } = await run([cut('ECONNRESET')]);
    expect(result).toBe('ok');
    expect(attempts).toBe(2);
  });

  it("reads the registry client's ApiError: status 0 is no answer (its reason), another status an answer", () => {
    const lost = new ApiError('POST failed: ECONNRESET', { status: 0, details: { reason: 'ECONNRESET' } });
    expect(failureOf(lost)).toEqual({ kind: 'no-answer', reason: 'ECONNRESET', tls: false });
    expect(failureOf(new ApiError('x', { status: 0 }))).toEqual({
      kind: 'no-answer',
      reason: 'no answer',
      tls: false,
    });
    expect(failureOf(new ApiError('x', { status: 503 }))).toEqual({ kind: 'answer', status: 503 });
    expect(judge(failureOf(new ApiError('x', { status: 422 })), false)).toMatchObject({ retry: false });
  });

  it("`Again` is the caller's word: always retried, never ambiguous, named by its reason", async () => {
    expect(judge(failureOf(new Again('the plan is not ready (204)')), false)).toEqual({
      retry: true,
      ambiguous: false,
      reason: 'the plan is not ready (204)',
    });
    const { result, retries } = await run([new Again('not yet')], { idempotent: false });
    expect(result).toBe('ok');
    expect(retries.map((r) => r.reason)).toEqual(['not yet']);
  });

  it('a create (not idempotent) without a reconcile hook is not sent again after an ambiguous failure', async () => {
    const error = new AnswerError(503, {});
    const { result, attempts } = await run([error], { idempotent: false });
    expect(result).toEqual({ thrown: error });
    expect(attempts).toBe(1);
  });

  it('a call site adds its own finals through `failure`', async () => {
    const changed = coded('ECONNRESET');
    const { attempts } = await run([changed], {
      failure: (e): Failure => (e === changed ? { kind: 'final' } : failureOf(e)),
    });
    expect(attempts).toBe(1);
  });

  it('isTransient tells retries that ran out from a refusal that was final from the start', () => {
    expect(isTransient(new AnswerError(503, {}))).toBe(true);
    expect(isTransient(coded('ECONNRESET'))).toBe(true);
    expect(isTransient(new AnswerError(401, {}))).toBe(false);
    expect(isTransient(coded('EPROTO'))).toBe(false);
    expect(isTransient(new Error('bug'))).toBe(false);
  });
});

describe('how long to wait', () => {
  const answer = (status: number, headers: Record<string, string | string[]>): Failure => ({
    kind: 'answer',
    status,
    headers,
  });
  const wait = (failure: Failure, retry = 1, random = 0.5) =>
    waitBeforeRetry(retry, failure, {}, { now: () => NOW, random: () => random });

  it('Retry-After in seconds (a fraction too; 0 is raised to the backoff, at most 1 s: never a tight loop)', () => {
    expect(retryAfterMs('3', NOW)).toBe(3000);
    expect(retryAfterMs(' 1.5 ', NOW)).toBe(1500);
    expect(retryAfterMs(['2', '9'], NOW)).toBe(2000);
    // Backoff before retry 1 with random 0.5 is 375 ms; before retry 5 it is past the 1 s floor's cap.
    expect(wait(answer(429, { 'retry-after': '0' }))).toBe(375);
    expect(wait(answer(429, { 'retry-after': '0' }), 5)).toBe(SERVER_WAIT_FLOOR_MS);
    expect(wait(answer(429, { 'retry-after': new Date(NOW - 60_000).toUTCString() }))).toBe(375);
    expect(wait(answer(503, { 'retry-after': '7' }))).toBe(7000);
  });

  it('Retry-After as an HTTP date: the time until then, 0 once it is past', () => {
    expect(retryAfterMs(new Date(NOW + 10_000).toUTCString(), NOW)).toBe(10_000);
    expect(retryAfterMs('Wednesday, 01-Jan-25 00:00:05 GMT', NOW)).toBe(5000);
    expect(retryAfterMs(new Date(NOW - 60_000).toUTCString(), NOW)).toBe(0);
    expect(wait(answer(429, { 'retry-after': new Date(NOW + 4_000).toUTCString() }))).toBe(4000);
  });

  it('Retry-After that is garbage is ignored: backoff instead', () => {
    for (const garbage of [
      'soon',
      '-5',
      '',
      '1e3',
      '3 seconds',
      '2025-01-01',
      'Wed, 99 Foo 2025 00:00:00 GMT',
    ]) {
      expect(retryAfterMs(garbage, NOW)).toBeUndefined();
      expect(wait(answer(429, { 'retry-after': garbage }), 1, 1)).toBe(DEFAULT_POLICY.baseDelayMs);
    }
    expect(retryAfterMs(undefined, NOW)).toBeUndefined();
  });

  it('a server asking for more than the cap (120 s) is not waited for: the failure is thrown at once', async () => {
    expect(wait(answer(429, { 'retry-after': '120' }))).toBe(120_000);
    expect(wait(answer(429, { 'retry-after': '121' }))).toBeUndefined();
    const { clock } = fakeClock();
    expect(
      waitBeforeRetry(1, answer(429, { 'retry-after': '5' }), { maxServerWaitMs: 4000 }, clock),
    ).toBeUndefined();
    const limited = new AnswerError(429, { 'retry-after': '3600' });
    const { result, attempts, slept } = await run([limited]);
    expect(result).toEqual({ thrown: limited });
    expect(attempts).toBe(1);
    expect(slept).toEqual([]);
    const within = await run([new AnswerError(429, { 'retry-after': '120' })]);
    expect(within.result).toBe('ok');
    expect(within.slept).toEqual([120_000]);
  });

  it('X-RateLimit-Reset on a 429 without Retry-After: seconds until the window resets, or an epoch second', () => {
    expect(rateLimitResetMs('0.412', NOW)).toBe(412);
    expect(rateLimitResetMs(String(NOW / 1000 + 30), NOW)).toBe(30_000);
    expect(rateLimitResetMs('later', NOW)).toBeUndefined();
    expect(wait(answer(429, { 'x-ratelimit-reset': '0.412' }))).toBe(412);
    expect(wait(answer(429, { 'x-ratelimit-reset': '0.250' }))).toBe(375);
    // Retry-After comes first; on another status the window's reset says nothing about the failure.
    expect(wait(answer(429, { 'retry-after': '1', 'x-ratelimit-reset': '0.250' }))).toBe(1000);
    expect(wait(answer(503, { 'x-ratelimit-reset': '0.250' }), 1, 1)).toBe(DEFAULT_POLICY.baseDelayMs);
    // Over the cap, like any server wait.
    expect(wait(answer(429, { 'x-ratelimit-reset': '600' }))).toBeUndefined();
  });

  it('under a deadline a long server wait is waited for, cut to what is left of the deadline (the final callback)', async () => {
    const clock = { now: () => NOW, random: () => 0.5 };
    expect(waitBeforeRetry(1, answer(429, { 'retry-after': '180' }), { deadlineMs: 300_000 }, clock)).toBe(
      180_000,
    );
    const limited = new AnswerError(429, { 'retry-after': '3600' });
    const { result, attempts, slept } = await run([limited], { policy: { deadlineMs: 300_000 } });
    expect(result).toBe('ok');
    expect(attempts).toBe(2);
    expect(slept).toEqual([300_000]);
  });

  it('backoff doubles from the base up to the cap', () => {
    const policy = { baseDelayMs: 500, maxDelayMs: 8000 };
    const ceilings = [1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(n, policy, () => 1));
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(backoffMs(1, {}, () => 1)).toBe(DEFAULT_POLICY.baseDelayMs);
    expect(backoffMs(9, {}, () => 1)).toBe(DEFAULT_POLICY.maxDelayMs);
  });

  it('jitter keeps each wait within the upper half of its ceiling', () => {
    const policy = { baseDelayMs: 400, maxDelayMs: 10_000 };
    for (const random of [0, 0.001, 0.25, 0.5, 0.999]) {
      for (const retry of [1, 2, 3, 4, 5, 6]) {
        const ceiling = Math.min(10_000, 400 * 2 ** (retry - 1));
        const ms = backoffMs(retry, policy, () => random);
        expect(ms).toBeGreaterThanOrEqual(ceiling / 2);
        expect(ms).toBeLessThanOrEqual(ceiling);
        expect(ms).toBe(ceiling / 2 + random * (ceiling / 2));
      }
    }
  });

  it('retries wait as the policy says, and a server wait replaces the backoff for that retry only', async () => {
    const { slept } = await run(
      [new AnswerError(503, {}), new AnswerError(429, { 'retry-after': '2' }), coded('ECONNRESET')],
      { policy: { baseDelayMs: 100, maxDelayMs: 1000 } },
      1,
    );
    expect(slept).toEqual([100, 2000, 400]);
  });

  it('a fixed schedule replaces backoff, and its length is the retry limit', async () => {
    const errors = [1, 2, 3, 4].map(() => new Again('not 200'));
    const { result, attempts, slept } = await run(errors, { policy: { delaysMs: [1000, 2000, 4000] } });
    expect(result).toEqual({ thrown: errors[3] });
    expect(attempts).toBe(4);
    expect(slept).toEqual([1000, 2000, 4000]);
    const once = await run([new Again('not 200')], { policy: { delaysMs: [] } });
    expect(once.attempts).toBe(1);
  });
});

describe('attempts, deadline and interruption', () => {
  it('counts attempts: `limit` retries after the first, then the last error is thrown unchanged', async () => {
    const errors = [2, 3, 4].map((n) => new AnswerError(500 + n, {}));
    const { result, attempts, retries } = await run(errors, { policy: { limit: 2, baseDelayMs: 10 } });
    expect(attempts).toBe(3);
    expect(result).toEqual({ thrown: errors[2] });
    expect(retries.map((r) => [r.attempt, r.reason])).toEqual([
      [1, 'status 502'],
      [2, 'status 503'],
    ]);
  });

  it('the default limit is 4 retries (5 attempts)', async () => {
    const errors = Array.from({ length: 9 }, () => coded('ECONNRESET'));
    const { attempts } = await run(errors);
    expect(attempts).toBe(DEFAULT_POLICY.limit + 1);
  });

  it('the attempt number is passed to the attempt', async () => {
    const seen: number[] = [];
    const { clock } = fakeClock();
    await retrying(
      async ({ attempt }) => {
        seen.push(attempt);
        if (attempt < 3) throw coded('ECONNRESET');
        return attempt;
      },
      { interrupted: 'x', clock },
    );
    expect(seen).toEqual([1, 2, 3]);
  });

  it('under a deadline: retries without a count until it passes, each wait cut to what is left', async () => {
    const { clock, slept } = fakeClock(1);
    const left: number[] = [];
    let attempts = 0;
    const error = coded('ECONNRESET');
    const thrown = await retrying(
      async ({ remainingMs }) => {
        attempts++;
        left.push(remainingMs);
        throw error;
      },
      { interrupted: 'x', clock, policy: { baseDelayMs: 1000, maxDelayMs: 4000, deadlineMs: 10_000 } },
    ).catch((e: unknown) => e);
    expect(thrown).toBe(error);
    // 1000 + 2000 + 4000 = 7000, then 3000 is all that is left; no attempt after the deadline.
    expect(slept).toEqual([1000, 2000, 4000, 3000]);
    expect(attempts).toBe(5);
    expect(left).toEqual([10_000, 9000, 7000, 3000, 0]);
  });

  it('under a deadline: a server wait longer than what is left is cut to it', async () => {
    const { result, slept } = await run([new AnswerError(429, { 'retry-after': '60' })], {
      policy: { deadlineMs: 5000 },
    });
    expect(result).toBe('ok');
    expect(slept).toEqual([5000]);
  });

  it('an aborted signal before the first attempt: no attempt, an InterruptedError with the message and hint', async () => {
    const controller = new AbortController();
    controller.abort('SIGINT');
    const { result, attempts } = await run([], {
      signal: controller.signal,
      interrupted: { message: 'Interrupted while uploading X', hint: 'Run it again.' },
    });
    expect(attempts).toBe(0);
    const error = (result as { thrown: InterruptedError }).thrown;
    expect(error).toBeInstanceOf(InterruptedError);
    expect(error.message).toBe('Interrupted while uploading X');
    expect(error.hint).toBe('Run it again.');
  });

  it('an abort during an attempt ends the retries with an InterruptedError, even for a retryable failure', async () => {
    const controller = new AbortController();
    const { clock, slept } = fakeClock();
    let attempts = 0;
    const error = await retrying(
      async () => {
        attempts++;
        controller.abort('SIGINT');
        throw coded('ECONNRESET');
      },
      { interrupted: 'Interrupted during GET /x', signal: controller.signal, clock },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect((error as Error).message).toBe('Interrupted during GET /x');
    expect((error as Error).cause).toMatchObject({ code: 'ECONNRESET' });
    expect(attempts).toBe(1);
    expect(slept).toEqual([]);
  });

  it("an attempt's own InterruptedError passes unchanged (its words name the request)", async () => {
    const controller = new AbortController();
    const inner = new InterruptedError('Interrupted during POST /api/v2/x');
    const error = await retrying(
      async () => {
        controller.abort();
        throw inner;
      },
      { interrupted: 'Interrupted while creating x', signal: controller.signal },
    ).catch((e: unknown) => e);
    expect(error).toBe(inner);
  });

  it('an abort during a wait ends it at once with an InterruptedError (the real clock, a 2-minute backoff)', async () => {
    const controller = new AbortController();
    let attempts = 0;
    const error = await retrying(
      async () => {
        attempts++;
        throw coded('ECONNRESET');
      },
      {
        interrupted: 'Interrupted while waiting',
        signal: controller.signal,
        policy: { baseDelayMs: 120_000, maxDelayMs: 120_000 },
        onRetry: () => setImmediate(() => controller.abort('SIGINT')),
      },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect((error as Error).message).toBe('Interrupted while waiting');
    expect(attempts).toBe(1);
  });

  it('pause throws the InterruptedError at once when the signal is already aborted, else waits', async () => {
    const controller = new AbortController();
    const { clock } = fakeClock();
    const slept: number[] = [];
    await pause(25, controller.signal, 'x', { sleep: async (ms) => void slept.push(ms) });
    expect(slept).toEqual([25]);
    controller.abort();
    await expect(pause(25, controller.signal, 'Interrupted while polling', clock)).rejects.toThrow(
      new InterruptedError('Interrupted while polling'),
    );
  });
});

describe('hooks', () => {
  const refused = () => new AnswerError(403, {});
  const refreshOn403 = (run: () => Promise<{ value: string } | undefined>, limit = 2) => ({
    when: (f: Failure) => f.kind === 'answer' && f.status === 403,
    limit,
    run,
  });

  it('refresh: a refused target is replaced and tried again at once, outside the retry count', async () => {
    let target = 'link-1';
    const tried: string[] = [];
    const { clock, slept } = fakeClock();
    const retries: RetryInfo[] = [];
    const result = await retrying(
      async () => {
        tried.push(target);
        if (target === 'link-1') throw refused();
        if (tried.length === 2) throw new AnswerError(503, {});
        return target;
      },
      {
        interrupted: 'x',
        clock,
        policy: { limit: 1 },
        onRetry: (i) => retries.push(i),
        refresh: refreshOn403(async () => {
          target = 'link-2';
          return undefined;
        }),
      },
    );
    expect(result).toBe('link-2');
    expect(tried).toEqual(['link-1', 'link-2', 'link-2']);
    // Only the 503 was a retry (and waited); the refresh went at once and did not use up the one retry.
    expect(retries.map((r) => r.reason)).toEqual(['status 503']);
    expect(slept).toHaveLength(1);
  });

  it('refresh: at most `limit` times, then the refusal is thrown', async () => {
    let refreshes = 0;
    const last = refused();
    const { result, attempts } = await run([refused(), refused(), last], {
      refresh: refreshOn403(async () => void refreshes++),
    });
    expect(refreshes).toBe(2);
    expect(attempts).toBe(3);
    expect(result).toEqual({ thrown: last });
  });

  it('refresh: the hook may end with a value (the file is there already) or with its own error', async () => {
    const found = await run([refused()], { refresh: refreshOn403(async () => ({ value: 'present' })) });
    expect(found).toMatchObject({ result: 'present', attempts: 1 });
    const gone = new Error('the resource vanished');
    const failed = await run([refused()], {
      refresh: refreshOn403(async () => {
        throw gone;
      }),
    });
    expect(failed).toMatchObject({ result: { thrown: gone }, attempts: 1 });
  });

  it('refresh: without the hook, the refusal is final', async () => {
    const error = refused();
    expect(await run([error])).toMatchObject({ result: { thrown: error }, attempts: 1 });
  });

  it('reconcile: an ambiguous failure of a create reads first, and what it finds ends the retries', async () => {
    const lost: string[] = [];
    const { result, attempts, slept } = await run([coded('ECONNRESET')], {
      idempotent: false,
      reconcile: async ({ reason }) => {
        lost.push(reason);
        return { value: 'found' };
      },
    });
    expect(result).toBe('found');
    expect(attempts).toBe(1);
    expect(lost).toEqual(['ECONNRESET']);
    expect(slept).toEqual([]);
  });

  it('reconcile: nothing found means the create is sent again after the wait', async () => {
    let reads = 0;
    const { result, attempts, slept } = await run([new AnswerError(503, {})], {
      idempotent: false,
      reconcile: async () => void reads++,
    });
    expect(result).toBe('ok');
    expect(attempts).toBe(2);
    expect(reads).toBe(1);
    expect(slept).toHaveLength(1);
  });

  it('reconcile: not asked for a final failure, for `Again`, for a request that may be repeated, or past the limit', async () => {
    let reads = 0;
    const reconcile = async () => void reads++;
    await run([new AnswerError(422, {})], { idempotent: false, reconcile });
    await run([new Again('not ready')], { idempotent: false, reconcile });
    await run([new AnswerError(503, {})], { idempotent: true, reconcile });
    expect(reads).toBe(0);
    const errors = [coded('ECONNRESET'), coded('ECONNRESET')];
    const limited = await run(errors, { idempotent: false, reconcile, policy: { limit: 1 } });
    expect(limited.result).toEqual({ thrown: errors[1] });
    expect(reads).toBe(1);
  });
});
