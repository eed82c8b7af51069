/**
 * The timeline of one `runtask send`: the platform's own events (callbacks judged, downloads, timeouts,
 * warnings) and the driver's (platform started, each POST attempt, its answer, retries, giving up).
 */
import type { PlatformEvent, ViolationRule } from '../../emulator/runtask/events.js';

/** Which request was sent. */
export type RequestKind = 'run' | 'verification';

/** Why no attempt was accepted. */
export type NotAcceptedReason = 'unreachable' | 'refused' | 'failing' | 'wrong-answer';

/** The judgement of a request that no attempt got accepted. */
export interface NotAccepted {
  reason: NotAcceptedReason;
  /** What happened, with every answer, e.g. "the integrator refused the verification request (1 attempt: 401)". */
  message: string;
  /** What to do about it. */
  hint: string;
}

/**
 * Rules about the POST's answer, on top of the platform's callback rules. An integrator that never accepts the
 * request breaks none: that is the `gave-up` event's judgement (acceptance.ts).
 */
export type SendViolationRule = ViolationRule | 'request-answer';

/** One broken rule. */
export interface SendViolation {
  rule: SendViolationRule;
  message: string;
}

/** The driver's events. */
export type DriverEvent =
  | {
      kind: 'platform';
      at: number;
      url: string;
      taskResultId: string;
      stage: string;
      enforcement: string;
      outcomesOffered: boolean;
      verification: boolean;
    }
  | { kind: 'request'; at: number; attempt: number; url: string; bytes: number; signed: boolean }
  | {
      kind: 'answer';
      at: number;
      attempt: number;
      http?: number | undefined;
      error?: string | undefined;
      ms: number;
      /** The integrator's words, for a refusal. */
      detail?: string | undefined;
      violations: SendViolation[];
    }
  | { kind: 'retry'; at: number; attempt: number; delayMs: number }
  | { kind: 'gave-up'; at: number; attempts: number; request: RequestKind; notAccepted: NotAccepted };

/** Any event of a send session. */
export type SendEvent = PlatformEvent | DriverEvent;

/** Every violation in a timeline, with when it happened. */
export function violationsOf(events: readonly SendEvent[]): Array<SendViolation & { at: number }> {
  const out: Array<SendViolation & { at: number }> = [];
  for (const event of events) {
    if ('violations' in event) for (const v of event.violations) out.push({ ...v, at: event.at });
  }
  return out;
}
