/**
 * `runtask serve` against the test platform with the documented requests of all four stages and the
 * verification request, signed as the platform signs: 200 at once while the handler still runs, a first
 * `running` callback, heartbeats, then the final result; outcomes only when offered, trimmed to the limits.
 */
import { describe, expect, it } from 'vitest';
import { RESULT_LIMITS } from '../../../src/terraform/runtask/payload.js';
import {
  COMPLETE_CALLBACK,
  POST_APPLY_REQUEST,
  POST_PLAN_REQUEST,
  PRE_APPLY_REQUEST,
  PRE_PLAN_REQUEST,
  VERIFICATION_REQUEST,
  VERIFICATION_REQUEST_MINIMAL,
} from '../documented-payloads.js';
import { KEY, bytesOf, journaledIds, post, requestFor, integratorsPerTest } from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';

const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);

/** The handler's JSON for the documented "Complete Callback Payload Example". */
const DOCUMENTED_RESULT = (() => {
  const { attributes, relationships } = COMPLETE_CALLBACK.data;
  const o = relationships.outcomes.data[0].attributes;
  return {
    ...attributes,
    outcomes: [{ id: o['outcome-id'], description: o.description, tags: o.tags, body: o.body, url: o.url }],
  };
})();

const STAGES = [
  { stage: 'pre_plan', sample: PRE_PLAN_REQUEST, plan: false, outcomes: false },
  { stage: 'post_plan', sample: POST_PLAN_REQUEST, plan: true, outcomes: true },
  { stage: 'pre_apply', sample: PRE_APPLY_REQUEST, plan: true, outcomes: true },
  { stage: 'post_apply', sample: POST_APPLY_REQUEST, plan: true, outcomes: true },
] as const;

describe('a documented request of each stage', () => {
  it.each(STAGES)(
    '$stage: 200 at once, running first, the handler contract, then the final result',
    async (c) => {
      const t = await startIntegrator();
      const request = requestFor(c.sample, platform);
      const token = request.access_token as string;
      platform.plans.set('plan-6AFmRJW1PFJ7qbAh', {
        format_version: '1.2',
        resource_changes: [{ address: 'x.y' }],
      });

      const answer = await post(t.integrator.url, bytesOf(request));
      expect(answer.status).toBe(200);
      const report = await platform.waitForHandler(request.run_id);
      // The handler is still waiting for its orders: nothing final can have been sent.
      expect(platform.callbacks(request.task_result_id).map(statusOf)).not.toContain('failed');
      await platform.waitForCallbacks(request.task_result_id, 'running');

      // Handler contract: payload file without the token, RUNTASK_* facts, no secret in the environment.
      const { access_token: _t, ...withoutToken } = request;
      expect(report.payload).toEqual(withoutToken);
      expect(report.env).toMatchObject({
        RUNTASK_STAGE: c.stage,
        RUNTASK_RUN_ID: request.run_id,
        RUNTASK_WORKSPACE_NAME: request.workspace_name,
        RUNTASK_ORGANIZATION: request.organization_name,
      });
      expect(report.env.TEST_PLATFORM_URL).toBe(platform.url);
      expect(report.env).not.toHaveProperty('RUNTASK_HMAC_KEY');
      expect(report.env).not.toHaveProperty('SOME_OTHER_VARIABLE_WITH_THE_KEY');
      for (const [name, value] of Object.entries(report.env)) {
        expect(value, name).not.toContain(token);
        expect(value, name).not.toContain(KEY);
      }
      expect(report.cwd.startsWith(t.workRoot)).toBe(true);
      if (c.plan) {
        expect(report.plan).toEqual({ format_version: '1.2', resource_changes: [{ address: 'x.y' }] });
        const planCall = platform.requests.filter((r) => r.path.endsWith('/json-output')).at(-1)!;
        expect(planCall.headers.authorization).toBe(`Bearer ${token}`);
        const blob = platform.requests.filter((r) => r.path.startsWith('/_archivist/')).at(-1)!;
        expect(blob.headers.authorization).toBeUndefined();
      } else {
        expect(report.plan).toBeNull();
        expect(report.env.RUNTASK_PLAN_JSON).toBeUndefined();
      }

      platform.release(request.run_id, { stdout: JSON.stringify(DOCUMENTED_RESULT) + '\n' });
      const [final] = await platform.waitForCallbacks(request.task_result_id, 'failed');
      const callbacks = platform.callbacks(request.task_result_id);
      expect(callbacks.map(statusOf)).toEqual(['running', 'failed']);
      for (const callback of callbacks) {
        expect(callback.headers.authorization).toBe(`Bearer ${token}`);
        expect(callback.headers['content-type']).toBe('application/vnd.api+json');
      }
      if (c.outcomes) expect(final!.json).toEqual(COMPLETE_CALLBACK);
      else
        expect(final!.json).toEqual({
          data: { type: 'task-results', attributes: COMPLETE_CALLBACK.data.attributes },
        });

      await t.integrator.jobs.idle();
      expect(t.leftovers()).toEqual([]);
      expect(journaledIds(t.stateDir)).toEqual([]);
    },
  );
});

describe('progress and results', () => {
  it('sends running heartbeats at the configured interval until the final status', async () => {
    const t = await startIntegrator({ heartbeatMs: 100 });
    const request = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(t.integrator.url, bytesOf(request))).status).toBe(200);
    await platform.waitForHandler(request.run_id);
    const running = await platform.waitForCallbacks(request.task_result_id, 'running', 6);
    platform.release(request.run_id, { stdout: 'looked at 3 resources\nall fine\n', exitCode: 0 });
    const [final] = await platform.waitForCallbacks(request.task_result_id, 'passed');
    await t.integrator.jobs.idle();

    const statuses = platform.callbacks(request.task_result_id).map(statusOf);
    expect(statuses.at(-1)).toBe('passed');
    expect(statuses.slice(0, -1).every((s) => s === 'running')).toBe(true);
    // Paced, not a burst: the median gap at the receiver (one callback delayed in transit on a loaded machine
    // shortens the gap after it, so no single gap is judged).
    const gaps = running
      .slice(1)
      .map((r, i) => r.at - running[i]!.at)
      .sort((a, b) => a - b);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeGreaterThanOrEqual(60);
    expect(final!.json).toEqual({
      data: { type: 'task-results', attributes: { status: 'passed', message: 'all fine' } },
    });
  });

  it('leaves outcomes out when capabilities.outcomes is false', async () => {
    const t = await startIntegrator();
    const request = requestFor(POST_PLAN_REQUEST, platform, { capabilities: { outcomes: false } });
    expect((await post(t.integrator.url, bytesOf(request))).status).toBe(200);
    platform.release(request.run_id, { stdout: JSON.stringify({ ...DOCUMENTED_RESULT, status: 'passed' }) });
    const [final] = await platform.waitForCallbacks(request.task_result_id, 'passed');
    expect(final!.json).toEqual({
      data: { type: 'task-results', attributes: { ...COMPLETE_CALLBACK.data.attributes, status: 'passed' } },
    });
    expect(t.events.some((e) => e.event === 'outcomes.dropped')).toBe(true);
  });

  it('trims outcomes to the documented limits and says so in the message', async () => {
    const t = await startIntegrator();
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const outcomes = Array.from({ length: 260 }, (_, i) => ({
      id: `CHECK-${i}`,
      description: i === 0 ? 'd'.repeat(1200) : `finding ${i}`,
      body: i === 1 ? '# long\n' + 'b'.repeat(12_000) : `body ${i}`,
      tags: { Severity: [{ label: i === 2 ? 'L'.repeat(40) : 'High', level: 'error' }] },
    }));
    expect((await post(t.integrator.url, bytesOf(request))).status).toBe(200);
    platform.release(request.run_id, {
      stdout: JSON.stringify({ status: 'failed', message: '260 findings', outcomes }),
    });
    const [final] = await platform.waitForCallbacks(request.task_result_id, 'failed');
    type Doc = typeof COMPLETE_CALLBACK;
    const doc = final!.json as {
      data: { attributes: { message: string }; relationships: Doc['data']['relationships'] };
    };
    const sent = doc.data.relationships.outcomes.data as unknown as Array<{
      attributes: { description: string; body: string; tags: { Severity: Array<{ label: string }> } };
    }>;
    expect(sent).toHaveLength(RESULT_LIMITS.outcomes);
    expect(sent[0]!.attributes.description).toHaveLength(RESULT_LIMITS.description);
    expect([...sent[1]!.attributes.body].length).toBeLessThanOrEqual(RESULT_LIMITS.body);
    expect(sent[1]!.attributes.body).toContain('truncated');
    expect(sent[2]!.attributes.tags.Severity[0]!.label).toHaveLength(RESULT_LIMITS.label);
    const message = doc.data.attributes.message;
    expect(message.startsWith('260 findings [trimmed to the run task limits: ')).toBe(true);
    expect(message).toContain('10 outcomes beyond the first 250 dropped');
    expect(message).toContain('outcome bodies cut to 10000 characters');
    expect([...message].length).toBeLessThanOrEqual(RESULT_LIMITS.message);
  });
});

// Found by test/reliability (integrator abuse): copies of one request arriving together each passed the
// "already running" check while the first was still being journaled, so the handler ran (and reported) 5 times.
describe('the same request sent several times at once', () => {
  it('is one job: one handler, one running and one final callback, 200 to every copy', async () => {
    const t = await startIntegrator();
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const body = bytesOf(request);
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(t.integrator.url, body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    platform.release(request.run_id, { exitCode: 0 });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
    await t.integrator.jobs.idle();
    expect(platform.callbacks(request.task_result_id).map(statusOf)).toEqual(['running', 'passed']);
    expect(
      platform.requests.filter(
        (r) => r.path === '/handler/start' && (r.json as { key: string }).key === request.run_id,
      ),
    ).toHaveLength(1);
    expect(t.events.filter((e) => e.event === 'job.accepted')).toHaveLength(1);
    expect(t.events.filter((e) => e.event === 'request.duplicate')).toHaveLength(4);
  });
});

describe('the verification request sent when a run task is created', () => {
  it.each([
    ['the documented body (test-token, enforcement test)', bytesOf(VERIFICATION_REQUEST)],
    ['the minimal body (token and stage only)', JSON.stringify(VERIFICATION_REQUEST_MINIMAL)],
    ['an empty body', ''],
  ])('%s → 200 and nothing else: no job, no callback, no handler', async (_name, body) => {
    const t = await startIntegrator();
    const before = platform.requests.length;
    const answer = await post(t.integrator.url, body);
    expect(answer.status).toBe(200);
    expect(t.integrator.jobs.counts()).toEqual({ queued: 0, running: 0, reporting: 0 });
    expect(t.events.filter((e) => e.event === 'job.accepted')).toEqual([]);
    expect(t.events.filter((e) => e.event === 'request.verification')).toHaveLength(1);
    // A real request afterwards runs through to its final callback; by then nothing else arrived.
    const request = requestFor(POST_PLAN_REQUEST, platform);
    await post(t.integrator.url, bytesOf(request));
    platform.release(request.run_id, { exitCode: 0 });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
    const others = platform.requests
      .slice(before)
      .filter((r) => !r.path.includes(request.task_result_id) && r.path.startsWith('/api/v2/task-results/'));
    expect(others).toEqual([]);
    expect(platform.requests.slice(before).filter((r) => r.path === '/handler/start')).toHaveLength(1);
  });
});
