/**
 * The verdict of a session, in one place: the result (the task result's status, or for the verification
 * request `verified`/`refused`), every violation, the request never accepted, the timeout, and the exit code —
 * 3 for any contract violation, else 4 for a request no attempt got accepted (the integrator refused, failed or
 * was not there: acceptance.ts), else 6 for a timeout, else 1 for a result other than `--expect`, else 0 — with
 * the error that carries it to the program's top-level catch.
 */
import { InterruptedError, ResultMismatchError, TimeoutError, VerificationError } from '../../errors.js';
import type { ProviderError } from '../../errors.js';
import { notAcceptedError } from './acceptance.js';
import { violationsOf, type NotAccepted, type SendViolation } from './events.js';
import type { SessionRecord } from './session.js';

/** What was decided. */
export interface Verdict {
  result: string;
  expected: 'passed' | 'failed' | undefined;
  violations: Array<SendViolation & { at: number }>;
  /** Why no attempt of the request was accepted (undefined once one was, or the task reported all the same). */
  notAccepted: NotAccepted | undefined;
  timeout: { window: 'progress-window' | 'max-duration'; ms: number } | undefined;
  exitCode: 0 | 1 | 3 | 4 | 6 | 130;
  /** One line for the end of the timeline. */
  summary: string;
  /** The error to throw (undefined for exit 0). */
  error: ProviderError | undefined;
}

/** The durations as the user wrote them, for messages. */
export interface WindowTexts {
  progressWindow: string;
  maxDuration: string;
}

/**
 * What the hint of a failing verdict adds when the integrator asked the local platform for paths it does not
 * serve: a real platform may have answered them, and the integrator's course may have followed from the 404.
 */
function unservedNote(record: SessionRecord): string {
  const paths = new Set(
    record.events.flatMap((e) => (e.kind === 'unserved' ? [`${e.method} ${e.path}`] : [])),
  );
  if (paths.size === 0) return '';
  const [first] = paths;
  const more = paths.size > 1 ? ` and ${paths.size - 1} more` : '';
  return ` The integrator also requested ${first}${more}, which the local platform does not serve (404, "unserved" in the timeline and the --json report): a real platform may answer it.`;
}

/** Decides the verdict of a finished session. */
export function decideVerdict(
  record: SessionRecord,
  expected: 'passed' | 'failed' | undefined,
  windows: WindowTexts,
): Verdict {
  const verification = record.issued.kind === 'verification';
  const result = verification ? (record.accepted ? 'verified' : 'refused') : record.taskStatus;
  const violations = violationsOf(record.events);
  let timeout: Verdict['timeout'];
  let notAccepted: NotAccepted | undefined;
  let lastStatus = 0;
  for (const event of record.events) {
    if (event.kind === 'timeout') timeout = { window: event.window, ms: event.ms };
    if (event.kind === 'gave-up') notAccepted = event.notAccepted;
    if (event.kind === 'answer' && event.http !== undefined) lastStatus = event.http;
  }
  const base = { result, expected, violations, notAccepted, timeout };
  const note = unservedNote(record);
  if (record.end === 'interrupted') {
    return {
      ...base,
      exitCode: 130,
      summary: 'INTERRUPTED  stopped before the end',
      error: new InterruptedError('interrupted while the run task was under way'),
    };
  }
  if (violations.length > 0) {
    const first = violations[0]!.message;
    const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : '';
    return {
      ...base,
      exitCode: 3,
      summary: `FAIL  ${violations.length} contract violation${violations.length > 1 ? 's' : ''}; result ${result}`,
      error: new VerificationError(`the integrator broke the run task contract: ${first}${more}`, {
        hint: `Each violation is in the timeline (or "violations" in the --json report); docs/runtask-send.md says what the platform expects.${note}`,
        details: { violations: violations.map(({ rule, message }) => ({ rule, message })) },
      }),
    };
  }
  if (notAccepted !== undefined) {
    return {
      ...base,
      exitCode: 4,
      summary: `NOT ACCEPTED  ${notAccepted.message}; result ${result}`,
      error: notAcceptedError(
        { ...notAccepted, hint: notAccepted.hint + note },
        record.issued.kind,
        lastStatus,
      ),
    };
  }
  if (timeout !== undefined) {
    const why =
      timeout.window === 'progress-window'
        ? `no progress update within ${windows.progressWindow} (the progress window)`
        : `still not final after ${windows.maxDuration} (the maximum duration)`;
    return {
      ...base,
      exitCode: 6,
      summary: `TIMEOUT  ${why}: the platform errored the task result`,
      error: new TimeoutError(`timed out: ${why}; the platform errors the task result`, {
        hint: `Send a running callback well inside the progress window and the final one within the maximum duration.${note}`,
      }),
    };
  }
  if (expected !== undefined && result !== expected) {
    return {
      ...base,
      exitCode: 1,
      summary: `UNEXPECTED  result ${result}, expected ${expected}`,
      error: new ResultMismatchError(`result ${result}, expected ${expected}`, {
        hint: `The integrator kept the contract but reached another verdict: check the check itself (its input is in the timeline).${note}`,
      }),
    };
  }
  const summary = verification
    ? 'PASS  the integrator answered the verification request with 200 and did not call back'
    : `PASS  the integrator kept the contract: result ${result}${expected ? ', as expected' : ''}`;
  return { ...base, exitCode: 0, summary, error: undefined };
}
