/**
 * `provider runtask callback --outcomes <report>` with a scanner's SARIF 2.1.0 or a test runner's JUnit XML: the
 * report is read into outcomes (src/runtask/formats/), and without --status the report decides the status
 * (`--fail-on`, default error) and the message; an unreadable report is exit 2 saying why, and nothing is sent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { POST_PLAN_REQUEST } from '../../runtask/documented-payloads.js';
import { requestFor } from '../../runtask/helpers.js';
import { TestPlatform } from '../../runtask/platform.js';
import { tempDir } from '../../helpers/tmp.js';

let platform: TestPlatform;
let dir: string;
beforeAll(async () => {
  platform = await TestPlatform.start();
  dir = tempDir();
});
afterAll(async () => {
  await platform.close();
});

let files = 0;
function file(content: string): string {
  const path = join(dir, `report-${++files}`);
  writeFileSync(path, content);
  return path;
}

function cli(args: string[]): ReturnType<typeof runCli> {
  return runCli(['runtask', 'callback', '--platform-host', platform.url, ...args], { env: {}, cwd: dir });
}

const SARIF = JSON.stringify({
  version: '2.1.0',
  runs: [
    {
      tool: {
        driver: {
          name: 'tfsec',
          rules: [{ id: 'aws-s3-enable-versioning', defaultConfiguration: { level: 'warning' } }],
        },
      },
      results: [
        { ruleId: 'aws-s3-enable-versioning', message: { text: 'Bucket does not have versioning enabled' } },
        { ruleId: 'aws-s3-block-public-acls', level: 'error', message: { text: 'No public access block' } },
      ],
    },
  ],
});

interface Sent {
  data: {
    attributes: { status: string; message: string };
    relationships?: {
      outcomes: { data: { attributes: { 'outcome-id': string; tags: Record<string, unknown> } }[] };
    };
  };
}

describe('runtask callback --outcomes <report>', () => {
  it('a SARIF report without --status: failed on its error, the counting message, one outcome per result', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const result = await cli(['--payload', file(JSON.stringify(request)), '--outcomes', file(SARIF)]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [sent] = platform.callbacks(request.task_result_id);
    const doc = sent!.json as Sent;
    expect(doc.data.attributes).toMatchObject({
      status: 'failed',
      message: '1 error, 1 warning in tfsec (fails on error)',
    });
    const outcomes = doc.data.relationships!.outcomes.data;
    expect(outcomes.map((o) => o.attributes['outcome-id'].replace(/-[0-9a-f]{8}$/, ''))).toEqual([
      'aws-s3-block-public-acls',
      'aws-s3-enable-versioning',
    ]);
    expect(outcomes[0]!.attributes.tags).toEqual({
      Severity: [{ label: 'High', level: 'error' }],
      Status: [{ label: 'Failed', level: 'error' }],
    });
  });

  it('--fail-on never passes; --status and --message given win over the report', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const never = await cli([
      '--payload',
      file(JSON.stringify(request)),
      '--outcomes',
      file(SARIF),
      '--fail-on',
      'never',
    ]);
    expect(never.exitCode, never.stderr).toBe(0);
    expect((platform.callbacks(request.task_result_id)[0]!.json as Sent).data.attributes.status).toBe(
      'passed',
    );
    const again = requestFor(POST_PLAN_REQUEST, platform);
    const given = await cli([
      ...['--payload', file(JSON.stringify(again)), '--outcomes', file(SARIF)],
      ...['--status', 'running', '--message', 'Scanning'],
    ]);
    expect(given.exitCode, given.stderr).toBe(0);
    expect((platform.callbacks(again.task_result_id)[0]!.json as Sent).data.attributes).toMatchObject({
      status: 'running',
      message: 'Scanning',
    });
  });

  it('a JUnit report: a failed case fails the task', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const junit =
      '<testsuites><testsuite name="conftest"><testcase classname="main" name="deny_public"><failure message="public bucket"/></testcase><testcase name="ok"/></testsuite></testsuites>';
    const result = await cli(['--payload', file(JSON.stringify(request)), '--outcomes', file(junit)]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect((platform.callbacks(request.task_result_id)[0]!.json as Sent).data.attributes).toMatchObject({
      status: 'failed',
      message: '1 error in conftest (fails on error)',
    });
  });

  it('an unreadable report or a bad --fail-on is exit 2 saying why, and nothing is sent', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform);
    const payload = file(JSON.stringify(request));
    const badSarif = await cli([
      '--payload',
      payload,
      '--outcomes',
      file('{"version":"2.1.0","runs":[{"tool":{}}]}'),
    ]);
    expect(badSarif.exitCode).toBe(2);
    expect(badSarif.stderr).toContain(
      "runs[0].tool.driver.name must be the tool's name, a non-empty string (found nothing)",
    );
    const badXml = await cli([
      '--payload',
      payload,
      '--outcomes',
      file('<testsuites>\n<testsuite>\n</testsuites>'),
    ]);
    expect(badXml.exitCode).toBe(2);
    expect(badXml.stderr).toMatch(/the JUnit report is not well-formed XML: .*\(line 3\)/);
    const badFailOn = await cli(['--payload', payload, '--outcomes', file(SARIF), '--fail-on', 'critical']);
    expect(badFailOn.exitCode).toBe(2);
    expect(badFailOn.stderr).toContain(
      '--fail-on must be one of error, warning, note, never, got "critical"',
    );
    expect(platform.callbacks(request.task_result_id)).toEqual([]);
  });
});
