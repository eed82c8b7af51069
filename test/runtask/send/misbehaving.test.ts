/**
 * Test-only integrators that break the contract, each caught with exit 3 and the rule it broke: 202, a wrong
 * or missing token, a status outside passed/failed/running, outcomes not offered, an update after the final
 * status, outcomes over the limits, a non-JSON:API content type, a body that is not JSON, a POST instead of a
 * PATCH, and the verification request answered 202 or followed by a callback.
 */
import { describe, expect, it } from 'vitest';
import { sendCli } from './helpers.js';
import { doc, outcome, fakeIntegrators, type FakeIntegrator } from './integrators.js';
import { aStringContaining, anyNumber } from '../../helpers/matchers.js';

const integrator = fakeIntegrators();

type Report = {
  result: string;
  exitCode: number;
  violations: Array<{ rule: string; message: string }>;
  callbacks: Array<{ http: number; status: string | null }>;
  timeout: { window: string } | null;
  notAccepted: { reason: string } | null;
  error?: { code: string; message: string };
};

/** Runs the CLI with --json against the integrator; returns the exit code and the report. */
async function judge(
  fake: FakeIntegrator,
  args: string[] = [],
): Promise<{ exitCode: number; report: Report; stderr: string }> {
  const result = await sendCli(fake.url, 0, ['--json', ...args]);
  return { exitCode: result.exitCode, report: JSON.parse(result.stdout) as Report, stderr: result.stderr };
}

describe.concurrent('contract violations → exit 3', () => {
  it('answering 202 instead of 200', async () => {
    const fake = await integrator((_r, tools) => void tools.patch(doc('passed')), 202);
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.violations[0]).toMatchObject({
      rule: 'request-answer',
      message: aStringContaining('answered 202'),
    });
    expect(report.result).toBe('passed');
  });

  it('a wrong token (401 from the platform)', async () => {
    const fake = await integrator((_r, tools) => void tools.patch(doc('passed'), { token: 'not-the-token' }));
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.callbacks).toEqual([expect.objectContaining({ http: 401, status: 'passed' })]);
    expect(report.violations).toEqual([expect.objectContaining({ rule: 'token' })]);
    expect(report.result).toBe('pending');
  });

  it('no token at all', async () => {
    const fake = await integrator((_r, tools) => void tools.patch(doc('passed'), { token: null }));
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.violations[0]!.message).toContain('no Authorization header');
  });

  it('a status outside passed, failed, running (422)', async () => {
    const fake = await integrator((_r, tools) => void tools.patch(doc('completed')));
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.callbacks).toEqual([expect.objectContaining({ http: 422, status: 'completed' })]);
    expect(report.violations).toEqual([
      {
        at: anyNumber(),
        rule: 'status',
        message: '/data/attributes/status must be passed, failed or running, not "completed"',
      },
    ]);
  });

  it('outcomes when they were not offered (--no-outcomes): 200, ignored, a violation', async () => {
    const fake = await integrator(
      (_r, tools) => void tools.patch(doc('passed', { outcomes: [outcome('A-1')] })),
    );
    const { exitCode, report } = await judge(fake, ['--no-outcomes']);
    expect(exitCode).toBe(3);
    expect(report.callbacks).toEqual([expect.objectContaining({ http: 200, status: 'passed' })]);
    expect(report.violations).toEqual([expect.objectContaining({ rule: 'outcomes-not-offered' })]);
    expect(report.result).toBe('passed');
  });

  it('an update after a final status (409)', async () => {
    const fake = await integrator(async (_r, tools) => {
      await tools.patch(doc('passed'));
      await tools.patch(doc('failed'));
    });
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.callbacks.map((c) => [c.http, c.status])).toEqual([
      [200, 'passed'],
      [409, 'failed'],
    ]);
    expect(report.violations).toEqual([expect.objectContaining({ rule: 'after-final' })]);
    expect(report.result).toBe('passed');
  });

  it('an outcome over the documented limits (422 with a pointer)', async () => {
    const big = outcome('A-1', { body: 'x'.repeat(10_001) });
    const fake = await integrator((_r, tools) => void tools.patch(doc('failed', { outcomes: [big] })));
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.callbacks[0]!.http).toBe(422);
    expect(report.violations).toEqual([
      expect.objectContaining({
        rule: 'limits',
        message: '/data/relationships/outcomes/data/0/attributes/body is 10001 characters long (limit 10000)',
      }),
    ]);
  });

  it('more than 250 outcomes', async () => {
    const many = Array.from({ length: 251 }, (_, i) => outcome(`A-${i}`));
    const fake = await integrator((_r, tools) => void tools.patch(doc('failed', { outcomes: many })));
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.violations[0]!.message).toBe(
      '/data/relationships/outcomes/data has 251 outcomes (limit 250)',
    );
  });

  it("a non-JSON:API content type (415, in the platform's words)", async () => {
    const fake = await integrator(
      (_r, tools) => void tools.patch(doc('passed'), { contentType: 'application/json' }),
    );
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.callbacks[0]!.http).toBe(415);
    expect(report.violations).toEqual([expect.objectContaining({ rule: 'content-type' })]);
  });

  it('a body that is not JSON (400), and a POST instead of a PATCH (405)', async () => {
    const fake = await integrator(async (_r, tools) => {
      await tools.patch(undefined, { body: 'status=passed' });
      await tools.patch(doc('passed'), { method: 'POST' });
    });
    const { exitCode, report } = await judge(fake);
    expect(exitCode).toBe(3);
    expect(report.callbacks.map((c) => c.http)).toEqual([400, 405]);
    expect(report.violations.map((v) => v.rule)).toEqual(['not-json', 'callback-method']);
  });

  it('the verification request answered 202', async () => {
    const fake = await integrator(() => undefined, 202);
    const { exitCode, report } = await judge(fake, ['--verification']);
    expect(exitCode).toBe(3);
    expect(report.result).toBe('refused');
    expect(report.violations[0]!.message).toContain('the platform creates the run task only after a 200');
    // Not accepted either, but the violation decides the exit code.
    expect(report.notAccepted).toMatchObject({ reason: 'wrong-answer' });
    expect(fake.received).toHaveLength(1);
  });

  it('a callback after the verification request', async () => {
    const fake = await integrator((_r, tools) => void tools.patch(doc('passed')));
    const { exitCode, report } = await judge(fake, ['--verification']);
    expect(exitCode).toBe(3);
    expect(report.callbacks).toEqual([expect.objectContaining({ http: 401 })]);
    expect(report.violations).toEqual([expect.objectContaining({ rule: 'verification-callback' })]);
  });
});
