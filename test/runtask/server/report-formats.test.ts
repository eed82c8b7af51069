/**
 * Scanners' reports through a real `runtask serve` (issue 18): handlers that print SARIF 2.1.0 (several runs, rules
 * with help, levels, `security-severity`, locations, suppressions) or JUnit XML (failures, errors, skipped, nested
 * suites) are read into outcomes, and the platform receives them with the pass/fail decision of `--fail-on`, the
 * counting message and, past 250 findings, the summary outcome; an invalid report is a failed result that says
 * why, and the integrator keeps serving. The documents are written here, shaped as the specification and the
 * tools' documentation describe.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ResultReading } from '../../../src/runtask/server/handler/handlerResult.js';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { bytesOf, integratorsPerTest, post, requestFor, type TestIntegrator } from '../helpers.js';
import { TestPlatform } from '../platform.js';
import { tempDir } from '../../helpers/tmp.js';

const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);
/** The integrator of the last `judge`. */
let t: TestIntegrator | undefined;
let dir: string;
beforeAll(() => {
  dir = tempDir('reports');
});

let handlers = 0;
/** A handler printing `output` (written to a file, printed with cat). */
function printing(output: string): string {
  const file = join(dir, `output-${++handlers}`);
  writeFileSync(file, output);
  return `cat '${file}'`;
}

interface Received {
  data: {
    attributes: { status: string; message: string };
    relationships?: {
      outcomes: {
        data: {
          attributes: {
            'outcome-id': string;
            description: string;
            body?: string;
            url?: string;
            tags: Record<string, { label: string; level?: string }[]>;
          };
        }[];
      };
    };
  };
}

/** Runs one request through an integrator whose handler prints `output`; resolves with the final callback. */
async function judge(output: string, reading?: ResultReading): Promise<Received> {
  t = await startIntegrator({
    exec: printing(output),
    ...(reading === undefined ? {} : { reading }),
  });
  const request = requestFor(POST_PLAN_REQUEST, platform);
  const answer = await post(t.integrator.url, bytesOf(request));
  expect(answer.status).toBe(200);
  const [final] = await Promise.race([
    platform.waitForCallbacks(request.task_result_id, 'passed'),
    platform.waitForCallbacks(request.task_result_id, 'failed'),
  ]);
  return final!.json as Received;
}

const rule = (id: string, extra: Record<string, unknown> = {}) => ({ id, ...extra });
const SARIF = {
  version: '2.1.0',
  runs: [
    {
      tool: {
        driver: {
          name: 'checkov',
          rules: [
            rule('CKV_AWS_20', {
              help: { text: 'Block public ACLs.', markdown: 'Set `acl = "private"`.' },
              helpUri: 'https://docs.example.com/CKV_AWS_20',
              defaultConfiguration: { level: 'error' },
            }),
            rule('CKV_AWS_18', { defaultConfiguration: { level: 'note' } }),
          ],
        },
      },
      results: [
        {
          ruleId: 'CKV_AWS_20',
          message: { text: 'aws_s3_bucket.logs allows public READ' },
          locations: [
            { physicalLocation: { artifactLocation: { uri: 'main.tf' }, region: { startLine: 12 } } },
          ],
        },
        { ruleId: 'CKV_AWS_18', message: { text: 'logging disabled' } },
        {
          ruleId: 'CKV_AWS_18',
          message: { text: 'waived' },
          suppressions: [{ kind: 'external', status: 'accepted' }],
        },
      ],
    },
    {
      tool: {
        driver: {
          name: 'Trivy',
          rules: [rule('AVD-AWS-0086', { properties: { 'security-severity': '8.1' } })],
        },
      },
      results: [{ ruleId: 'AVD-AWS-0086', level: 'warning', message: { text: 'no public access block' } }],
    },
  ],
};

describe('runtask serve reading scanners reports', () => {
  it('SARIF (auto-detected): outcomes with tags, failed on the error, the message counting both tools', async () => {
    const doc = await judge(JSON.stringify(SARIF));
    expect(doc.data.attributes).toEqual({
      status: 'failed',
      message: '1 error, 1 warning, 1 note in 2 tools (fails on error)',
    });
    const outcomes = doc.data.relationships!.outcomes.data.map((o) => o.attributes);
    expect(outcomes.map((o) => [o['outcome-id'].replace(/-[0-9a-f]{8}$/, ''), o.tags.Severity?.[0]])).toEqual(
      [
        ['CKV_AWS_20', { label: 'High', level: 'error' }],
        ['AVD-AWS-0086', { label: 'High', level: 'error' }], // a warning scored 8.1
        ['CKV_AWS_18', { label: 'Low', level: 'info' }],
      ],
    );
    expect(outcomes[0]!.url).toBe('https://docs.example.com/CKV_AWS_20');
    expect(outcomes[0]!.body).toContain('- `main.tf:12`');
    expect(outcomes[0]!.body).toContain('Set `acl = "private"`.');
  });

  it('--fail-on warning fails on a warning alone; never passes an error', async () => {
    const warnings = { ...SARIF, runs: [SARIF.runs[1]] };
    expect(
      (await judge(JSON.stringify(warnings), { format: 'auto', failOn: 'error' })).data.attributes.status,
    ).toBe('passed');
    await t!.cleanup();
    expect(
      (await judge(JSON.stringify(warnings), { format: 'sarif', failOn: 'warning' })).data.attributes,
    ).toEqual({
      status: 'failed',
      message: '1 warning in Trivy (fails on warning)',
    });
    await t!.cleanup();
    expect(
      (await judge(JSON.stringify(SARIF), { format: 'auto', failOn: 'never' })).data.attributes.status,
    ).toBe('passed');
  });

  it('past 250 findings, 249 outcomes and one that counts the rest', async () => {
    const many = {
      version: '2.1.0',
      runs: [
        {
          tool: { driver: { name: 'kics' } },
          results: Array.from({ length: 300 }, (_, i) => ({
            ruleId: `rule-${i % 5}`,
            level: i < 10 ? 'error' : 'warning',
            message: { text: `finding ${i}` },
          })),
        },
      ],
    };
    const doc = await judge(JSON.stringify(many));
    const outcomes = doc.data.relationships!.outcomes.data;
    expect(outcomes).toHaveLength(250);
    expect(outcomes.at(-1)!.attributes.description).toBe(
      '51 more findings (51 warnings) not listed: the platform shows at most 250 outcomes',
    );
    expect(doc.data.attributes.message).toBe('10 errors, 290 warnings in kics (fails on error)');
  });

  it('JUnit (auto-detected): failures and errors of nested suites as outcomes, skipped ones not', async () => {
    const junit = `<?xml version="1.0"?>
<testsuites>
  <testsuite name="conftest">
    <testcase classname="s3" name="deny_public"><failure message="bucket logs is public"/></testcase>
    <testcase classname="s3" name="warn_tags"><skipped/></testcase>
    <testsuite name="iam">
      <testcase classname="iam" name="deny_star"><error message="undefined ref"/></testcase>
      <testcase classname="iam" name="ok"/>
    </testsuite>
  </testsuite>
</testsuites>`;
    const doc = await judge(junit);
    expect(doc.data.attributes).toEqual({
      status: 'failed',
      message: '2 errors in conftest (fails on error)',
    });
    expect(doc.data.relationships!.outcomes.data.map((o) => o.attributes.description)).toEqual([
      'deny_public failed: bucket logs is public',
      'deny_star errored: undefined ref',
    ]);
  });

  it('an invalid report is a failed result saying why; the integrator keeps serving', async () => {
    const broken = {
      version: '2.1.0',
      runs: [{ tool: { driver: { name: 't' } }, results: [{ level: 'fatal', message: { text: 'x' } }] }],
    };
    const doc = await judge(JSON.stringify(broken));
    expect(doc.data.attributes.status).toBe('failed');
    expect(doc.data.attributes.message).toBe(
      'The check\'s SARIF 2.1.0 report cannot be used: runs[0].results[0].level must be one of none, note, warning, error (found "fatal")',
    );
    const health = await fetch(new URL('/healthz', t!.integrator.url));
    expect(health.status).toBe(200);
    await t!.cleanup();
    const junitDoc = await judge('<testsuites>\n<testsuite name="x">\n</testsuites>', {
      format: 'junit',
      failOn: 'error',
    });
    expect(junitDoc.data.attributes.message).toMatch(
      /^The check's JUnit XML report cannot be used: .*not well-formed XML.*\(line 3\)/,
    );
  });

  it('output cut at the 8 MiB limit, or SARIF followed by a banner, fails even when the scanner exits 0', async () => {
    const findings = Array.from({ length: 40_000 }, (_, i) => ({
      ruleId: 'r',
      level: 'error',
      message: { text: `finding ${i} ${'x'.repeat(200)}` },
    }));
    const huge = JSON.stringify({
      version: '2.1.0',
      runs: [{ tool: { driver: { name: 't' } }, results: findings }],
    });
    expect(huge.length).toBeGreaterThan(8 * 1024 * 1024);
    const cut = await judge(huge);
    expect(cut.data.attributes).toEqual({
      status: 'failed',
      message:
        'The check printed more than the integrator reads (8 MiB), so its result cannot be used (exit code 0).',
    });
    await t!.cleanup();
    const banner = await judge(`${JSON.stringify(SARIF)}\nA new version of the scanner is available.\n`);
    expect(banner.data.attributes.status).toBe('failed');
    expect(banner.data.attributes.message).toMatch(
      /^The check's SARIF 2\.1\.0 report cannot be used: .*not JSON/,
    );
  });

  it('--result-format exit-code ignores a report on stdout; json needs a JSON result', async () => {
    const passed = await judge(JSON.stringify(SARIF), { format: 'exit-code', failOn: 'error' });
    expect(passed.data.attributes.status).toBe('passed');
    await t!.cleanup();
    const noJson = await judge('all good', { format: 'json', failOn: 'error' });
    expect(noJson.data.attributes).toEqual({
      status: 'failed',
      message: 'The check printed no JSON result (exit code 0).',
    });
  });
});
