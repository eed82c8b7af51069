/**
 * The platform's judge on its own: the documented callback documents are accepted, every rule of
 * run-tasks.md §4.2–§4.4 is enforced with a JSON pointer, the platform's answers come in the platform's order
 * (401, 415, 400, 409, 422), and the limits agree with the integrator's independent copy.
 */
import { describe, expect, it } from 'vitest';
import { receiveCallback, type CallbackRequest } from '../../../src/emulator/runtask/callback.js';
import { PlatformEvents, type CallbackEvent } from '../../../src/emulator/runtask/events.js';
import { issueTask } from '../../../src/emulator/runtask/issue.js';
import { CALLBACK_LIMITS, judgeCallbackDocument } from '../../../src/emulator/runtask/judge.js';
import { PlatformTaskResult } from '../../../src/emulator/runtask/taskResult.js';
import { RESULT_LIMITS, callbackDocument } from '../../../src/terraform/runtask/payload.js';
import { COMPLETE_CALLBACK, MINIMAL_CALLBACK } from '../../runtask/documented-payloads.js';

const pointers = (value: unknown): string[] =>
  judgeCallbackDocument(value).problems.map((p) => `${p.kind} ${p.pointer} ${p.detail}`);
const withOutcome = (attributes: Record<string, unknown>): unknown => ({
  data: {
    type: 'task-results',
    attributes: { status: 'failed' },
    relationships: {
      outcomes: {
        data: [
          {
            type: 'task-result-outcomes',
            attributes: { 'outcome-id': 'X', description: 'd', ...attributes },
          },
        ],
      },
    },
  },
});
const O = '/data/relationships/outcomes/data/0/attributes';

describe('judgeCallbackDocument', () => {
  it('accepts the documented callbacks and what runtask serve builds', () => {
    expect(pointers(MINIMAL_CALLBACK)).toEqual([]);
    expect(pointers(COMPLETE_CALLBACK)).toEqual([]);
    expect(judgeCallbackDocument(COMPLETE_CALLBACK)).toMatchObject({ status: 'failed', outcomes: 1 });
    const built = callbackDocument({
      status: 'passed',
      message: 'ok',
      outcomes: [{ id: 'A', description: 'a', tags: { Severity: [{ label: 'Low' }] } }],
    });
    expect(pointers(JSON.parse(JSON.stringify(built)))).toEqual([]);
  });

  it('has the same limits as the integrator side (both from the result schema)', () => {
    expect(CALLBACK_LIMITS).toEqual(RESULT_LIMITS);
  });

  it.each([
    [[], 'document /data is required: the body must be a JSON:API document {"data": {...}}'],
    [
      { data: { type: 'task_results', attributes: { status: 'passed' } } },
      'document /data/type must be "task-results"',
    ],
    [{ data: { type: 'task-results' } }, 'document /data/attributes is required (with at least "status")'],
    [
      { data: { type: 'task-results', attributes: {} } },
      'status /data/attributes/status must be passed, failed or running, not null',
    ],
    [
      { data: { type: 'task-results', attributes: { status: 'errored' } } },
      'status /data/attributes/status must be passed, failed or running, not "errored"',
    ],
    [
      { data: { type: 'task-results', attributes: { status: 'passed', message: 'é'.repeat(1001) } } },
      'limits /data/attributes/message is 1001 characters long (limit 1000)',
    ],
    [
      { data: { type: 'task-results', attributes: { status: 'passed', url: 'ftp://x' } } },
      'document /data/attributes/url must be an http:// or https:// URL',
    ],
    [
      {
        data: { type: 'task-results', attributes: { status: 'passed', url: `https://x/${'a'.repeat(491)}` } },
      },
      'limits /data/attributes/url is 501 characters long (limit 500)',
    ],
    [
      { data: { type: 'task-results', attributes: { status: 'passed' }, relationships: { outcomes: {} } } },
      'document /data/relationships/outcomes/data must be an array of outcomes',
    ],
    [withOutcome({ 'outcome-id': undefined }), `document ${O}/outcome-id is required`],
    [
      withOutcome({ 'outcome-id': 'x'.repeat(65) }),
      `limits ${O}/outcome-id is 65 characters long (limit 64)`,
    ],
    [withOutcome({ description: '' }), `document ${O}/description must not be empty`],
    [withOutcome({ body: 42 }), `document ${O}/body must be a string, not number`],
    [
      withOutcome({ tags: { Severity: [{ label: 'High', level: 'critical' }] } }),
      `document ${O}/tags/Severity/0/level must be one of none, info, warning, error`,
    ],
    [
      withOutcome({ tags: { Severity: [{ label: 'x'.repeat(33) }] } }),
      `limits ${O}/tags/Severity/0/label is 33 characters long (limit 32)`,
    ],
    [
      withOutcome({ tags: { Severity: Array.from({ length: 33 }, () => ({ label: 'l' })) } }),
      `limits ${O}/tags/Severity has 33 labels (limit 32)`,
    ],
    [
      withOutcome({ tags: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, []])) }),
      `limits ${O}/tags has 11 tags (limit 10)`,
    ],
  ])('%j → %s', (value, problem) => {
    expect(pointers(value)).toEqual([problem]);
  });

  it('counts code points, as the schema does: 1000 emoji are a valid message', () => {
    expect(
      pointers({
        data: { type: 'task-results', attributes: { status: 'running', message: '😀'.repeat(1000) } },
      }),
    ).toEqual([]);
  });

  it("notices outcomes put inside attributes (GUIDE's example), which are not read", () => {
    const judged = judgeCallbackDocument({
      data: { type: 'task-results', attributes: { status: 'passed', outcomes: [] } },
    });
    expect(judged).toMatchObject({ problems: [], outcomesInAttributes: true, outcomes: 0 });
  });
});

describe('receiveCallback', () => {
  function task(outcomesOffered = true): { task: PlatformTaskResult; events: PlatformEvents } {
    const events = new PlatformEvents();
    const setup = {
      stage: 'post_plan',
      enforcement: 'mandatory',
      outcomesOffered,
      organization: 'o',
      workspace: 'w',
    } as const;
    const issued = issueTask('http://platform.test', setup, 'run', Date.now());
    return {
      task: new PlatformTaskResult(
        issued,
        { progressWindowMs: 60_000, maxDurationMs: 60_000 },
        events,
        Date.now,
      ),
      events,
    };
  }
  const patch = (t: PlatformTaskResult, body: unknown, overrides: Partial<CallbackRequest> = {}) =>
    receiveCallback(t, {
      method: 'PATCH',
      authorization: `Bearer ${t.issued.accessToken}`,
      contentType: 'application/vnd.api+json',
      body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      ...overrides,
    });

  it("checks in the platform's order: token, content type, JSON, final state, document", () => {
    const { task: t } = task();
    const bad = { data: { type: 'task-results', attributes: { status: 'nope' } } };
    expect(patch(t, bad, { authorization: 'Bearer nope', contentType: 'text/plain' }).http).toBe(401);
    expect(patch(t, 'not json', { contentType: 'text/plain' }).http).toBe(415);
    expect(patch(t, 'not json').http).toBe(400);
    expect(patch(t, bad).http).toBe(422);
    expect(patch(t, MINIMAL_CALLBACK).http).toBe(200);
    expect(patch(t, bad).http).toBe(409);
    expect(patch(t, MINIMAL_CALLBACK, { contentType: 'application/vnd.api+json; charset=utf-8' }).http).toBe(
      409,
    );
  });

  it('answers the task result document, with status timestamps, and records each callback', () => {
    const { task: t, events } = task();
    t.requestSent();
    expect(
      patch(t, { data: { type: 'task-results', attributes: { status: 'running', message: 'working' } } }),
    ).toMatchObject({
      http: 200,
      document: {
        data: {
          id: t.issued.taskResultId,
          type: 'task-results',
          attributes: { status: 'running', message: 'working' },
        },
      },
    });
    const answer = patch(t, COMPLETE_CALLBACK);
    const attributes = (answer.document as { data: { attributes: Record<string, unknown> } }).data.attributes;
    expect(attributes).toMatchObject({ status: 'failed', message: '0 passed, 0 skipped, 1 failed' });
    expect(Object.keys(attributes['status-timestamps'] as object)).toEqual(['running-at', 'failed-at']);
    const callbacks = events.list.filter((e): e is CallbackEvent => e.kind === 'callback');
    expect(callbacks.map((c) => [c.http, c.status, c.outcomes, c.taskStatus])).toEqual([
      [200, 'running', 0, 'running'],
      [200, 'failed', 1, 'failed'],
    ]);
    expect(t.final).toBe(true);
  });

  it('outcomes not offered: answered 200 and recorded as a violation', () => {
    const { task: t, events } = task(false);
    expect(patch(t, COMPLETE_CALLBACK).http).toBe(200);
    const [callback] = events.list as CallbackEvent[];
    expect(callback!.violations).toEqual([expect.objectContaining({ rule: 'outcomes-not-offered' })]);
  });
});
