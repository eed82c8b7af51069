/**
 * The one judgement of the integrator's answers to the POST, for the run task request and the verification
 * request alike. They differ only in how often the platform sends them (the run task request up to 4 times,
 * the verification request once) and in what the platform does when no answer is a 200 (the task result is
 * unreachable / the run task is not created). A 200 accepts the request. Another 2xx or a redirect breaks the
 * contract (`request-answer`: the integrator answered, but not as the platform reads it). 4xx, 5xx and network
 * errors do not accept it, and an integrator that never accepts has not broken the contract: it refused (a
 * 4xx, most often 401/403 for a signature made with another HMAC key), failed (a 5xx) or was not there (no
 * answer). That is exit 4, as for any other side that refused or could not be reached, with a hint for the
 * answers whose cause is known: 401/403, and any other 4xx whose body names the signature (an integrator without
 * a key answers a signed request `400 Unexpected x-tfc-task-signature header`), point at the HMAC key.
 */
import { ApiError } from '../../errors.js';
import type { Delivery } from './deliver.js';
import type { NotAccepted, NotAcceptedReason, RequestKind, SendViolation } from './events.js';

const NAME: Record<RequestKind, string> = {
  run: 'run task request',
  verification: 'verification request',
};

/** What the platform does when no attempt is accepted. */
export const NOT_ACCEPTED_CONSEQUENCE: Record<RequestKind, string> = {
  run: 'the task result is unreachable',
  verification: 'the platform would not create the run task',
};

/**
 * The pauses between attempts. The platform retries the run task request; the verification request is sent
 * once (run task creation fails at the first answer that is not 200), so it has none.
 */
export function retryDelays(kind: RequestKind, runDelaysMs: readonly number[]): readonly number[] {
  return kind === 'verification' ? [] : runDelaysMs;
}

/** The contract violation in one answer, if any: a 2xx other than 200, or a redirect (each status once). */
export function answerViolations(delivery: Delivery, kind: RequestKind, seen: Set<number>): SendViolation[] {
  if (delivery.kind !== 'answered') return [];
  const { status } = delivery;
  if (status === 200 || status >= 400 || seen.has(status)) return [];
  seen.add(status);
  const why =
    kind === 'verification'
      ? 'the platform creates the run task only after a 200'
      : 'the platform takes exactly 200 and retries anything else';
  return [{ rule: 'request-answer', message: `answered ${status} to the ${NAME[kind]}: ${why}` }];
}

function describe(delivery: Delivery): string {
  return delivery.kind === 'answered' ? String(delivery.status) : delivery.error;
}

function statuses(deliveries: readonly Delivery[]): number[] {
  return deliveries.flatMap((d) => (d.kind === 'answered' ? [d.status] : []));
}

function reasonOf(deliveries: readonly Delivery[]): NotAcceptedReason {
  const answered = statuses(deliveries);
  if (answered.some((s) => s >= 400 && s < 500)) return 'refused';
  if (answered.some((s) => s >= 500)) return 'failing';
  return answered.length === 0 ? 'unreachable' : 'wrong-answer';
}

/** Where runtask send's key comes from, for the hints. */
const KEY_SOURCES =
  'runtask send signs with the key in --hmac-key-file or in the variable named by --hmac-key-env (RUNTASK_HMAC_KEY by default), and sends an empty signature without one.';

/** The hint for a refusal that names the signature header (a 4xx other than 401/403 whose body says so). */
function signatureNamedHint(status: number, signed: boolean): string {
  return signed
    ? `The integrator refused the request's signature (${status}, naming the signature header): the HMAC key is the likely cause. An integrator without a key refuses a signed request ("Unexpected x-tfc-task-signature header"): give both sides the same key, or run runtask send without one. ${KEY_SOURCES}`
    : `The integrator refused the request's empty signature (${status}, naming the signature header): the HMAC key is the likely cause. It likely has a key and runtask send none: give runtask send the same key. ${KEY_SOURCES}`;
}

/** The status of a 4xx answer whose body names the signature header or the HMAC key, if any. */
function signatureNamed(deliveries: readonly Delivery[]): number | undefined {
  for (const d of deliveries) {
    if (d.kind === 'answered' && d.status >= 400 && d.status < 500 && /signature|hmac/i.test(d.body))
      return d.status;
  }
  return undefined;
}

/** What the hints need besides the answers. */
interface HintContext {
  integratorUrl: string;
  platformOrigin: string;
  /** Whether the request carried a signature (runtask send had a key). */
  signed: boolean;
}

function hintFor(reason: NotAcceptedReason, deliveries: readonly Delivery[], where: HintContext): string {
  const { integratorUrl, platformOrigin } = where;
  const answered = statuses(deliveries);
  switch (reason) {
    case 'refused': {
      if (answered.includes(401) || answered.includes(403))
        return `The integrator refused the signature (401/403: do both sides use the same HMAC key?). ${KEY_SOURCES}`;
      const named = signatureNamed(deliveries);
      if (named !== undefined) return signatureNamedHint(named, where.signed);
      if (answered.includes(422))
        return `422: does the integrator accept callbacks to ${platformOrigin}? runtask serve needs --platform-host with a fixed --port here.`;
      return "The platform takes exactly 200: the integrator's answer is in the timeline (request.attempts in the --json report).";
    }
    case 'failing':
      return "A 5xx is the integrator's own failure: its log says why. The platform takes exactly 200.";
    case 'wrong-answer':
      return 'The platform takes exactly 200: not another 2xx, and not a redirect.';
    case 'unreachable':
      return deliveries.every((d) => d.kind === 'failed' && d.error.startsWith('no answer within'))
        ? 'The integrator took the connection but did not answer in time: answer 200 at once and do the work afterwards.'
        : `Is the integrator listening at ${integratorUrl}? Start it first, then check the host and port in the URL.`;
  }
}

/** Judges a request that no attempt got accepted, from every attempt's answer (or network error). */
export function judgeNotAccepted(
  deliveries: readonly Delivery[],
  kind: RequestKind,
  where: HintContext,
): NotAccepted {
  const reason = reasonOf(deliveries);
  const count = `${deliveries.length} attempt${deliveries.length === 1 ? '' : 's'}`;
  const answers = `(${count}: ${deliveries.map(describe).join(', ')})`;
  const name = NAME[kind];
  const message =
    reason === 'unreachable'
      ? `no answer from the integrator to the ${name} ${answers}`
      : reason === 'refused'
        ? `the integrator refused the ${name} ${answers}`
        : `the integrator never answered 200 to the ${name} ${answers}`;
  return { reason, message, hint: hintFor(reason, deliveries, where) };
}

/** The error of a request that was never accepted: exit 4, like any other side that refused or was not there. */
export function notAcceptedError(notAccepted: NotAccepted, kind: RequestKind, status: number): ApiError {
  return new ApiError(`${notAccepted.message}: ${NOT_ACCEPTED_CONSEQUENCE[kind]}`, {
    status,
    hint: notAccepted.hint,
    details: { reason: notAccepted.reason },
  });
}
