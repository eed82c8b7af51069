/**
 * Delivering the run task request like the platform: "respond with 200 OK, or HCP Terraform will retry"
 * (run-tasks.md §3). How often and how fast it retries is undocumented; here: up to 4 attempts, 1 s, 2 s and
 * 4 s apart, 30 s per attempt, stopping early once the task result is final. The verification request is sent
 * once: the platform refuses to create the run task unless that one answer is 200. Each answer, and the end
 * when none was a 200, is judged by acceptance.ts, the same way for both requests. The attempts run under the
 * one retry module (src/net/retry.ts) with the platform's rule, not the client's: every answer but a 200 and
 * every network failure is tried again (`Again`), on the fixed schedule.
 */
import type { PlatformTaskResult } from '../../emulator/runtask/taskResult.js';
import { InterruptedError } from '../../errors.js';
import { Again, retrying } from '../../net/retry.js';
import { serverDetail } from '../callback/client.js';
import { answerViolations, judgeNotAccepted, retryDelays } from './acceptance.js';
import { deliverRequest, type Delivery } from './deliver.js';
import type { SendEvent } from './events.js';

/** Timings the tests shorten. */
export interface SendTuning {
  /** Pauses between attempts; their count + 1 is the number of attempts. */
  retryDelaysMs: readonly number[];
  /** Quiet time after the end is known, to catch late callbacks. */
  lingerMs: number;
  attemptTimeoutMs: number;
}

/** The platform-like defaults. */
export const DEFAULT_TUNING: SendTuning = {
  retryDelaysMs: [1000, 2000, 4000],
  lingerMs: 1000,
  attemptTimeoutMs: 30_000,
};

/** Past this, a 200 comes with a warning (the work is likely done before answering). */
const SLOW_ANSWER_MS = 10_000;

/** POSTs the request until it is accepted; resolves true when an attempt got 200. */
export async function postRequest(input: {
  settings: { integratorUrl: URL; verification: boolean; tuning: SendTuning };
  task: PlatformTaskResult;
  body: Buffer;
  signature: string;
  emit: (event: SendEvent) => void;
  signal: AbortSignal;
}): Promise<boolean> {
  const { settings, task, body, signature, emit, signal } = input;
  const { tuning } = settings;
  const kind = settings.verification ? 'verification' : 'run';
  const delays = retryDelays(kind, tuning.retryDelaysMs);
  const deliveries: Delivery[] = [];
  const seen = new Set<number>();
  let previousDetail: string | undefined;
  // A final status makes further attempts pointless: stop waiting between them at once.
  const final = new AbortController();
  const unsubscribe = task.events.subscribe(() => {
    if (task.final) final.abort();
  });
  // Once the task result is final (or the user stops), no attempt starts and no pause goes on.
  const stop = AbortSignal.any([signal, final.signal]);
  if (task.final) final.abort();
  try {
    const accepted = await retrying(
      async ({ attempt }) => {
        const url = settings.integratorUrl.href;
        emit({ kind: 'request', at: Date.now(), attempt, url, bytes: body.length, signed: signature !== '' });
        task.requestSent();
        const delivery = await deliverRequest({
          url: settings.integratorUrl,
          body,
          signature,
          timeoutMs: tuning.attemptTimeoutMs,
          signal,
        });
        if (signal.aborted) throw new InterruptedError('interrupted');
        deliveries.push(delivery);
        const answered = delivery.kind === 'answered';
        // The integrator's words for a refusal, once: a retry that gets the same words says nothing new.
        const detail =
          answered && delivery.status >= 400 ? serverDetail(delivery.body, delivery.status) : undefined;
        emit({
          kind: 'answer',
          at: Date.now(),
          attempt,
          http: answered ? delivery.status : undefined,
          error: answered ? undefined : delivery.error,
          ms: delivery.ms,
          detail: detail === previousDetail ? undefined : detail,
          violations: answerViolations(delivery, kind, seen),
        });
        previousDetail = detail ?? previousDetail;
        if (!answered || delivery.status !== 200) {
          throw new Again(answered ? `status ${delivery.status}` : delivery.error);
        }
        if (delivery.ms > SLOW_ANSWER_MS) {
          const message = `the integrator took ${(delivery.ms / 1000).toFixed(1)}s to answer: the platform's HTTP timeout is undocumented; answer 200 at once and do the work afterwards`;
          emit({ kind: 'warning', at: Date.now(), message });
        }
        return true;
      },
      {
        policy: { delaysMs: delays },
        signal: stop,
        interrupted: 'interrupted',
        onRetry: ({ attempt, delayMs }) => emit({ kind: 'retry', at: Date.now(), attempt, delayMs }),
      },
    ).catch((error: unknown) => {
      // Not accepted (the attempts ran out), stopped by the user, or ended by a final task result.
      if (error instanceof Again || error instanceof InterruptedError) return false;
      throw error;
    });
    if (accepted) return true;
    // An integrator that answered otherwise but then reported a final status has been heard all the same.
    if (!task.final && !signal.aborted) {
      const notAccepted = judgeNotAccepted(deliveries, kind, {
        integratorUrl: settings.integratorUrl.href,
        platformOrigin: new URL(task.issued.callbackUrl).origin,
        signed: signature !== '',
      });
      emit({ kind: 'gave-up', at: Date.now(), attempts: deliveries.length, request: kind, notAccepted });
    }
    return false;
  } finally {
    unsubscribe();
  }
}
