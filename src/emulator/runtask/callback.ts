/**
 * The platform's judgement of one callback, in its order: method (405), the verification's dummy task (401),
 * token (401), content type (415, in the platform's own words), JSON (400), a final status already reached
 * (409), the document (422 with pointers). Outcomes sent when none were offered are a violation but are
 * answered 200 and ignored: a platform that does not offer outcomes does not read them.
 */
import type { Violation } from './events.js';
import { judgeCallbackDocument } from './judge.js';
import { resultFromCallbackDocument } from '../../terraform/runtask/result.js';
import type { PlatformTaskResult } from './taskResult.js';
import { JSONAPI } from '../../terraform/names.js';

/** A callback as received. */
export interface CallbackRequest {
  method: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: Buffer;
}

/** The platform's answer: status, JSON:API body, extra headers. */
export interface CallbackAnswer {
  http: number;
  document: unknown;
  headers?: Record<string, string>;
}

/** Run task tokens live 10 minutes (run-tasks.md §5); whether updates extend that is undocumented. */
const TOKEN_LIFETIME_MS = 10 * 60_000;
const MAX_LISTED = 10;

function error(status: number, title: string, detail: string): { errors: unknown[] } {
  return { errors: [{ status: String(status), title, detail }] };
}

type Read = { status?: string; message?: string; url?: string; outcomes?: number };
type Verdict = { answer: CallbackAnswer; violations: Violation[]; read?: Read };

function judge(task: PlatformTaskResult, request: CallbackRequest): Verdict {
  const refuse = (http: number, violation: Violation, document: unknown, read?: Read): Verdict => ({
    answer: { http, document },
    violations: [violation],
    ...(read ? { read } : {}),
  });
  if (request.method !== 'PATCH') {
    const message = `the callback was a ${request.method}; the platform takes PATCH`;
    const verdict = refuse(
      405,
      { rule: 'callback-method', message },
      error(405, 'method not allowed', 'Use PATCH.'),
    );
    verdict.answer.headers = { allow: 'PATCH' };
    return verdict;
  }
  if (task.issued.kind === 'verification') {
    const message =
      'called back after the verification request, which expects a 200 and nothing else ("test-token" is no token)';
    return refuse(
      401,
      { rule: 'verification-callback', message },
      error(401, 'unauthorized', 'Invalid token.'),
    );
  }
  if (!task.acceptsToken(request.authorization)) {
    const why = request.authorization === undefined ? 'no Authorization header' : 'not the access_token sent';
    const message = `the callback's token is wrong (${why}); send "Authorization: Bearer <access_token>"`;
    return refuse(401, { rule: 'token', message }, error(401, 'unauthorized', 'Invalid or missing token.'));
  }
  const mediaType = (request.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== JSONAPI) {
    const given = JSON.stringify(request.contentType ?? '');
    const message = `the callback's Content-Type is ${given}; the platform takes ${JSONAPI}`;
    const doc = error(415, 'invalid content type', `content-type must be ${JSONAPI}`);
    return refuse(415, { rule: 'content-type', message }, doc);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(request.body.toString('utf8'));
  } catch (e) {
    const message = `the callback body is not JSON (${(e as Error).message})`;
    return refuse(
      400,
      { rule: 'not-json', message },
      error(400, 'bad request', 'The body is not valid JSON.'),
    );
  }
  const judged = judgeCallbackDocument(doc);
  const read = { status: judged.status, message: judged.message, url: judged.url, outcomes: judged.outcomes };
  if (task.final) {
    const message = `an update (${judged.status ?? 'no status'}) after the final status ${task.status}, which cannot change`;
    const detail = 'The task result is in a terminal state and cannot be updated.';
    return refuse(409, { rule: 'after-final', message }, error(409, 'conflict', detail), read);
  }
  if (judged.problems.length > 0) {
    const shown = judged.problems.slice(0, MAX_LISTED);
    const violations: Violation[] = shown.map((p) => ({ rule: p.kind, message: `${p.pointer} ${p.detail}` }));
    if (judged.problems.length > MAX_LISTED)
      violations.push({
        rule: 'document',
        message: `… and ${judged.problems.length - MAX_LISTED} more problems`,
      });
    const errors = shown.map((p) => ({
      status: '422',
      title: 'invalid attribute',
      detail: p.detail,
      source: { pointer: p.pointer },
    }));
    return { answer: { http: 422, document: { errors } }, violations, read };
  }
  const violations: Violation[] = [];
  if (judged.outcomes > 0 && !task.issued.outcomesOffered) {
    violations.push({
      rule: 'outcomes-not-offered',
      message: `sent ${judged.outcomes} outcome(s) although the request did not offer them (capabilities.outcomes is false)`,
    });
  }
  if (judged.outcomesInAttributes)
    warn(
      task,
      'outcomes inside data.attributes are not read: put them under data.relationships.outcomes.data',
    );
  if (task.now() - task.issuedAt > TOKEN_LIFETIME_MS)
    warn(
      task,
      "this callback came more than 10 minutes after the token was issued: the real platform's run task tokens live 10 minutes, and whether updates extend that is undocumented",
    );
  task.update(judged.status as 'running' | 'passed' | 'failed', judged.message, judged.url);
  // A platform that offered outcomes shows them (a valid document: the judge found no problem above).
  const outcomes = task.issued.outcomesOffered ? resultFromCallbackDocument(doc).result?.outcomes : undefined;
  if (outcomes !== undefined && outcomes.length > 0) task.outcomes = outcomes;
  return { answer: { http: 200, document: task.document() }, violations, read };
}

function warn(task: PlatformTaskResult, message: string): void {
  task.events.add({ kind: 'warning', at: task.now(), message });
}

/** What a refused callback tried to say, read without judging, for the record only. */
function peek(body: Buffer): Read {
  try {
    const judged = judgeCallbackDocument(JSON.parse(body.toString('utf8')));
    return { status: judged.status, message: judged.message, url: judged.url, outcomes: judged.outcomes };
  } catch {
    return {};
  }
}

/** Judges one callback, records it as an event, and returns the platform's answer. */
export function receiveCallback(task: PlatformTaskResult, request: CallbackRequest): CallbackAnswer {
  const verdict = judge(task, request);
  const { answer, violations } = verdict;
  const read = verdict.read ?? peek(request.body);
  task.events.add({
    kind: 'callback',
    at: task.now(),
    method: request.method,
    http: answer.http,
    status: read.status,
    message: read.message,
    url: read.url,
    outcomes: read.outcomes ?? 0,
    violations,
    taskStatus: task.status,
  });
  return answer;
}
