/**
 * `provider runtask send` against `provider runtask serve` (in-process, with an --exec handler): every stage
 * and the verification request pass, with and without an HMAC key; the timeline reads well, `--json` prints one
 * report, and the handler got the plan JSON the platform served through its 307.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KEY, freePort, normaliseTimeline, sendCli, startServe } from './helpers.js';
import { tempDir } from '../../helpers/tmp.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const STAGES = ['pre_plan', 'post_plan', 'pre_apply', 'post_apply'] as const;

describe.concurrent('send → serve, every stage', () => {
  it.each(
    STAGES.flatMap((stage) => [
      { stage, key: true },
      { stage, key: false },
    ]),
  )('$stage (HMAC key: $key) passes with a readable timeline', async ({ stage, key }) => {
    const port = await freePort();
    const out = tempDir('out', { parent: dir });
    const serve = await startServe(port, { ...(key ? { key: KEY } : {}), env: { SEND_TEST_OUT: out } });
    try {
      const env: Record<string, string> = key ? { RUNTASK_HMAC_KEY: KEY } : {};
      const result = await sendCli(serve.url, port, ['--stage', stage, '--expect', 'passed'], env);
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(0);
      const lines = normaliseTimeline(result.stdout).split('\n');
      expect(lines[0]).toMatch(
        new RegExp(
          `^\\+T  platform +listening on http://127\\.0\\.0\\.1:<port>; task result taskrs-<id> \\(${stage}, mandatory, outcomes offered\\)$`,
        ),
      );
      expect(lines[1]).toBe(
        `+T  request    POST ${normaliseTimeline(serve.url)}: N bytes, ${key ? 'signed' : 'unsigned (empty X-TFC-Task-Signature)'}`,
      );
      // The first callback may be printed before the answer: serve calls back right after answering.
      expect(lines.slice(2, 4)).toContain('+T  answer     200 after <duration>');
      expect(result.stdout).toMatch(/callback {3}PATCH → 200 {2}running {2}"Running the check\."/);
      expect(result.stdout).toMatch(
        new RegExp(`callback   PATCH → 200  passed  "checked the ${stage} request: passed"  \\(1 outcome\\)`),
      );
      expect(result.stdout).not.toContain('VIOLATION');
      expect(result.stdout).toMatch(
        /result {5}passed\nPASS {2}the integrator kept the contract: result passed, as expected\n$/,
      );
      const seen = JSON.parse(readFileSync(join(out, `${stage}.json`), 'utf8')) as { plan: string | null };
      if (stage === 'pre_plan') {
        expect(seen.plan).toBeNull();
        expect(result.stdout).not.toContain('plan JSON');
      } else {
        expect(JSON.parse(seen.plan ?? '')).toMatchObject({ format_version: '1.2' });
        expect(result.stdout).toContain('download   GET plan JSON → 307');
        expect(result.stdout).toMatch(/download {3}GET blob \(plan JSON\) → 200, \d+ bytes/);
      }
    } finally {
      await serve.stop();
    }
  });

  it.each([{ key: true }, { key: false }])(
    '--verification (HMAC key: $key): 200 and no callback',
    async ({ key }) => {
      const port = await freePort();
      const serve = await startServe(port, key ? { key: KEY } : {});
      try {
        const env: Record<string, string> = key ? { RUNTASK_HMAC_KEY: KEY } : {};
        const result = await sendCli(serve.url, port, ['--verification'], env);
        expect(result.exitCode).toBe(0);
        expect(normaliseTimeline(result.stdout)).toBe(
          [
            '+T  platform   listening on http://127.0.0.1:<port>; sending the verification request',
            `+T  request    POST ${normaliseTimeline(serve.url)}: N bytes, ${key ? 'signed' : 'unsigned (empty X-TFC-Task-Signature)'}`,
            '+T  answer     200 after <duration>',
            '+T  result     verified',
            'PASS  the integrator answered the verification request with 200 and did not call back',
            '',
          ].join('\n'),
        );
        expect(serve.events.map((e) => e.event)).toContain('request.verification');
        expect(serve.events.map((e) => e.event)).not.toContain('job.accepted');
      } finally {
        await serve.stop();
      }
    },
  );
});

describe('send → serve, results and reports', () => {
  it('--json prints one report: result, each callback, no violation', async () => {
    const port = await freePort();
    const serve = await startServe(port, { key: KEY });
    try {
      const result = await sendCli(serve.url, port, ['--json', '--hmac-key-env', 'MY_KEY'], { MY_KEY: KEY });
      expect(result.exitCode).toBe(0);
      expect(result.stdout.trim().split('\n')).toHaveLength(1);
      const report = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(report).toMatchObject({
        ok: true,
        result: 'passed',
        exitCode: 0,
        stage: 'post_plan',
        enforcement: 'mandatory',
        outcomesOffered: true,
        verification: false,
        request: { signed: true, attempts: [{ http: 200, error: null }] },
        violations: [],
        timeout: null,
      });
      const callbacks = report.callbacks as Array<Record<string, unknown>>;
      expect(callbacks.map((c) => [c.http, c.status])).toEqual([
        [200, 'running'],
        [200, 'passed'],
      ]);
      expect(callbacks[1]).toMatchObject({
        outcomes: 1,
        message: 'checked the post_plan request: passed',
        violations: [],
      });
      expect(report.downloads).toEqual([
        expect.objectContaining({ what: 'plan-json', http: 307 }),
        expect.objectContaining({ what: 'blob', http: 200, detail: 'plan-json' }),
      ]);
      expect(result.stdout).not.toContain(KEY);
    } finally {
      await serve.stop();
    }
  });

  it('a result other than --expect exits 1 and says "result failed, expected passed"', async () => {
    const port = await freePort();
    const serve = await startServe(port, { env: { SEND_TEST_STATUS: 'failed' } });
    try {
      const result = await sendCli(serve.url, port, ['--expect', 'passed', '--enforcement', 'advisory']);
      expect(result.exitCode).toBe(1);
      expect(result.stdout).toMatch(/UNEXPECTED {2}result failed, expected passed\n$/);
      expect(result.stderr).toMatch(/^error: result failed, expected passed\n/);
      expect(result.stderr).not.toMatch(/bug/i);
      const json = await sendCli(serve.url, port, ['--expect', 'failed', '--json']);
      expect(json.exitCode).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, result: 'failed', expected: 'failed' });
    } finally {
      await serve.stop();
    }
  });

  it('serves --plan-json as given, and the handler gets exactly those bytes', async () => {
    const port = await freePort();
    const out = tempDir('out', { parent: dir });
    const planFile = join(dir, 'plan.json');
    const plan = {
      format_version: '1.2',
      resource_changes: [{ address: 'aws_s3_bucket.logs', change: { actions: ['delete'] } }],
    };
    writeFileSync(planFile, JSON.stringify(plan));
    const serve = await startServe(port, { env: { SEND_TEST_OUT: out } });
    try {
      const result = await sendCli(serve.url, port, ['--plan-json', planFile, '--stage', 'pre_apply']);
      expect(result.exitCode).toBe(0);
      const seen = JSON.parse(readFileSync(join(out, 'pre_apply.json'), 'utf8')) as { plan: string };
      expect(seen.plan).toBe(readFileSync(planFile, 'utf8'));
    } finally {
      await serve.stop();
    }
  });
});
