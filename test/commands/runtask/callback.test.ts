/**
 * `provider runtask callback` run as a CI job would, against the test platform: local validation first (exit 2,
 * nothing sent), then one PATCH with the token and the documented body: exit 0 on 200, 4 with the server's
 * detail on 401/422, transient failures retried; outcomes dropped with a warning when the platform did not
 * offer them; the token never sent outside `--platform-host`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import {
  COMPLETE_CALLBACK,
  MINIMAL_CALLBACK,
  POST_PLAN_REQUEST,
  PRE_PLAN_REQUEST,
} from '../../runtask/documented-payloads.js';
import { requestFor } from '../../runtask/helpers.js';
import { TestPlatform } from '../../runtask/platform.js';
import { tempDir } from '../../helpers/tmp.js';
import { aStringContaining } from '../../helpers/matchers.js';

let platform: TestPlatform;
let elsewhere: TestPlatform;
let dir: string;

beforeAll(async () => {
  platform = await TestPlatform.start();
  elsewhere = await TestPlatform.start();
  dir = tempDir();
});
afterAll(async () => {
  await platform.close();
  await elsewhere.close();
});

let files = 0;
function file(content: unknown): string {
  const path = join(dir, `file-${++files}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** The documented complete example's outcome, in the `--outcomes` file format. */
const DOCUMENTED_OUTCOMES = COMPLETE_CALLBACK.data.relationships.outcomes.data.map(({ attributes: a }) => ({
  id: a['outcome-id'],
  description: a.description,
  tags: a.tags,
  body: a.body,
  url: a.url,
}));

function cli(args: string[], env: Record<string, string> = {}): ReturnType<typeof runCli> {
  return runCli(['runtask', 'callback', '--platform-host', platform.url, ...args], { env, cwd: dir });
}

describe('sending', () => {
  it('sends the documented complete example from a saved request and exits 0', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const { status, message, url } = COMPLETE_CALLBACK.data.attributes;
    const result = await cli([
      '--payload',
      file(request),
      '--status',
      status,
      '--message',
      message,
      '--result-url',
      url,
      '--outcomes',
      file(DOCUMENTED_OUTCOMES),
    ]);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'sent the failed callback (200)\n' });
    const [sent] = platform.callbacks(request.task_result_id);
    expect(sent!.json).toEqual(COMPLETE_CALLBACK);
    expect(sent!.headers.authorization).toBe(`Bearer ${request.access_token as string}`);
    expect(sent!.headers['content-type']).toBe('application/vnd.api+json');
    expect(result.stderr).not.toContain(request.access_token as string);
  });

  it('takes --url and RUNTASK_ACCESS_TOKEN instead of a saved request; --json prints one document', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const { status, message, url } = MINIMAL_CALLBACK.data.attributes;
    const result = await cli(
      [
        '--url',
        request.task_result_callback_url as string,
        '--status',
        status,
        '--message',
        message,
        '--result-url',
        url,
        '--json',
      ],
      { RUNTASK_ACCESS_TOKEN: 'ci-token-123456' },
    );
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      status: 'passed',
      http: 200,
      outcomes: 0,
      attempts: 1,
    });
    const [sent] = platform.callbacks(request.task_result_id);
    expect(sent!.json).toEqual(MINIMAL_CALLBACK);
    expect(sent!.headers.authorization).toBe('Bearer ci-token-123456');
  });

  it('drops outcomes with a warning when the saved request did not offer them', async () => {
    const request = requestFor(PRE_PLAN_REQUEST, platform);
    const result = await cli([
      '--payload',
      file(request),
      '--status',
      'passed',
      '--outcomes',
      file(DOCUMENTED_OUTCOMES),
    ]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('the platform did not offer outcomes');
    expect(platform.callbacks(request.task_result_id)[0]!.json).toEqual({
      data: { type: 'task-results', attributes: { status: 'passed' } },
    });
  });

  it('reads --outcomes - from the standard input the run was given, and refuses when it was given none', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const { status, message, url } = COMPLETE_CALLBACK.data.attributes;
    const args = ['--payload', file(request), '--status', status, '--message', message, '--result-url', url];
    const result = await runCli(
      ['runtask', 'callback', '--platform-host', platform.url, ...args, '--outcomes', '-'],
      {
        cwd: dir,
        stdin: JSON.stringify(DOCUMENTED_OUTCOMES),
      },
    );
    expect(result).toMatchObject({ exitCode: 0, stdout: 'sent the failed callback (200)\n' });
    const [sent] = platform.callbacks(request.task_result_id);
    expect(sent!.json).toEqual(COMPLETE_CALLBACK);

    const other = requestFor(POST_PLAN_REQUEST, platform);
    const without = await cli(['--payload', file(other), '--status', 'passed', '--outcomes', '-']);
    expect(without.exitCode).toBe(2);
    expect(without.stderr).toContain('no standard input');
    expect(platform.callbacks(other.task_result_id)).toEqual([]);
  });

  it('retries a 503 and a reset, then exits 0', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    platform.script(request.task_result_id, [{ status: 503 }, { reset: true }]);
    const result = await cli(['--payload', file(request), '--status', 'running', '--message', 'scanning']);
    expect(result.exitCode).toBe(0);
    expect(platform.callbacks(request.task_result_id)).toHaveLength(3);
  });

  it.each([
    [
      401,
      { errors: [{ status: '401', title: 'unauthorized', detail: 'token expired' }] },
      'unauthorized: token expired',
    ],
    [
      422,
      {
        errors: [{ status: '422', title: 'invalid attribute', detail: 'Status is not included in the list' }],
      },
      'invalid attribute: Status is not included in the list',
    ],
  ])('exits 4 on %i with the server detail, without retrying', async (status, body, detail) => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    platform.script(request.task_result_id, [{ status, body: JSON.stringify(body) }]);
    const result = await cli(['--payload', file(request), '--status', 'passed', '--json']);
    expect(result.exitCode).toBe(4);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: false,
      error: { code: 'api', message: aStringContaining(detail) },
    });
    expect(platform.callbacks(request.task_result_id)).toHaveLength(1);
  });
});

describe('local validation (exit 2, nothing sent)', () => {
  const longMessage = 'm'.repeat(1001);
  it.each([
    ['an invalid status', ['--status', 'errored'], /--status must be one of running, passed, failed/],
    ['no status', [], /--status must be one of/],
    [
      'a message over 1000 characters',
      ['--status', 'passed', '--message', longMessage],
      /message is 1001 characters long \(limit 1000\)/,
    ],
    [
      'a result URL that is not http(s)',
      ['--status', 'passed', '--result-url', 'ftp://x/y'],
      /result-url must be an http/,
    ],
    [
      'an outcome without a description',
      ['--status', 'failed', '--outcomes', 'NO_DESCRIPTION'],
      /outcomes\[0\]\.description is missing/,
    ],
    [
      'an outcome with an unknown tag level',
      ['--status', 'failed', '--outcomes', 'BAD_LEVEL'],
      /level must be one of none, info, warning, error/,
    ],
    [
      'an outcome body over 10000 characters',
      ['--status', 'failed', '--outcomes', 'LONG_BODY'],
      /outcomes\[0\]\.body is 10001 characters long/,
    ],
    ['outcomes that are not JSON', ['--status', 'failed', '--outcomes', 'NOT_JSON'], /is not JSON/],
  ])('%s', async (_name, args, expected) => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const outcomes: Record<string, string> = {
      NO_DESCRIPTION: file([{ id: 'A-1' }]),
      BAD_LEVEL: file({
        outcomes: [{ id: 'A-1', description: 'd', tags: { Severity: [{ label: 'High', level: 'fatal' }] } }],
      }),
      LONG_BODY: file([{ id: 'A-1', description: 'd', body: 'b'.repeat(10_001) }]),
      NOT_JSON: file('[{'),
    };
    const argv = args.map((a) => outcomes[a] ?? a);
    const result = await cli(['--payload', file(request), ...argv]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(expected);
    expect(platform.callbacks(request.task_result_id)).toEqual([]);
  });

  it('needs a URL and a token', async () => {
    const noUrl = await cli(['--status', 'passed'], { RUNTASK_ACCESS_TOKEN: 'ci-token-123456' });
    expect(noUrl.exitCode).toBe(2);
    expect(noUrl.stderr).toContain('no callback URL');
    const noToken = await cli([
      '--status',
      'passed',
      '--url',
      `${platform.url}/api/v2/task-results/x/callback`,
    ]);
    expect(noToken.exitCode).toBe(2);
    expect(noToken.stderr).toContain('RUNTASK_ACCESS_TOKEN');
  });

  it('never sends the token to a host outside --platform-host', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform, {
      task_result_callback_url: `${elsewhere.url}/api/v2/task-results/taskrs-x/callback`,
    });
    const result = await cli(['--payload', file(request), '--status', 'passed']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`--platform-host ${elsewhere.url}`);
    expect(elsewhere.requests).toEqual([]);
    const byDefault = await runCli(
      ['runtask', 'callback', '--payload', file(request), '--status', 'passed'],
      { cwd: dir },
    );
    expect(byDefault.exitCode).toBe(2);
    expect(byDefault.stderr).toContain('app.terraform.io');
    expect(elsewhere.requests).toEqual([]);
  });
});
