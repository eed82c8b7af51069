/**
 * Scanner and test-runner reports as run task results (issue 18, the reading and mapping; `runtask serve` and
 * `runtask callback` use them in a later step). The SARIF documents are written here in the shape of the SARIF
 * 2.1.0 specification (OASIS, sections cited in src/runtask/formats/sarif.ts) and of what the tools print: two
 * runs (Checkov-like and Trivy-like), rules with help and `security-severity`, default levels, placeholders,
 * locations, suppressions and fixes. The JUnit documents have failures, errors, skipped cases and nested suites.
 */
import { describe, expect, it } from 'vitest';
import { findingsResult, outcomeId, type Finding } from '../../../src/runtask/formats/findings.js';
import { JunitError, readJunit } from '../../../src/runtask/formats/junit.js';
import { ReportError, detectReportFormat, reportResult } from '../../../src/runtask/formats/report.js';
import { SarifError, readSarif } from '../../../src/runtask/formats/sarif.js';
import { RESULT_LIMITS, checkTaskResult } from '../../../src/terraform/runtask/result.js';

const SARIF = {
  version: '2.1.0',
  $schema: 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json',
  runs: [
    {
      tool: {
        driver: {
          name: 'checkov',
          rules: [
            {
              id: 'CKV_AWS_20',
              shortDescription: { text: 'S3 Bucket has an ACL defined which allows public READ access.' },
              help: { text: 'Remove public ACLs', markdown: 'Set `acl = "private"` on the bucket.' },
              helpUri: 'https://docs.prismacloud.io/en/policy-reference/CKV_AWS_20',
              defaultConfiguration: { level: 'error' },
            },
            { id: 'CKV_AWS_18', defaultConfiguration: { level: 'note' } },
          ],
        },
      },
      results: [
        {
          ruleId: 'CKV_AWS_20',
          ruleIndex: 0,
          message: { text: 'Bucket {0} allows public READ', arguments: ['aws_s3_bucket.logs'] },
          locations: [
            { physicalLocation: { artifactLocation: { uri: 'main.tf' }, region: { startLine: 12 } } },
          ],
          fixes: [
            {
              description: { text: 'Use a private ACL' },
              artifactChanges: [
                {
                  artifactLocation: { uri: 'main.tf' },
                  replacements: [
                    { deletedRegion: { startLine: 12 }, insertedContent: { text: 'acl = "private"' } },
                  ],
                },
              ],
            },
          ],
        },
        {
          ruleId: 'CKV_AWS_18',
          message: { text: 'Access logging is not enabled' },
          locations: [{ physicalLocation: { artifactLocation: { uri: 'main.tf' } } }],
        },
        {
          ruleId: 'CKV_AWS_18',
          message: { text: 'Suppressed in code' },
          suppressions: [{ kind: 'inSource' }],
        },
        {
          ruleId: 'CKV_AWS_18',
          message: { text: 'Suppression under review still counts' },
          suppressions: [{ kind: 'external', status: 'underReview' }],
        },
      ],
    },
    {
      tool: {
        driver: {
          name: 'Trivy',
          rules: [
            {
              id: 'AVD-AWS-0086',
              properties: { 'security-severity': '9.8', tags: ['security'] },
              helpUri: 'https://avd.aquasec.com/misconfig/avd-aws-0086',
            },
          ],
        },
      },
      results: [
        {
          ruleId: 'AVD-AWS-0086',
          level: 'warning',
          message: { text: 'No public access block so not blocking public acls' },
          locations: [
            {
              physicalLocation: { artifactLocation: { uri: 'modules/s3/main.tf' }, region: { startLine: 3 } },
            },
          ],
        },
        { ruleId: 'AVD-AWS-0090', kind: 'pass', message: { text: 'Versioning enabled' } },
      ],
    },
  ],
};

describe('SARIF 2.1.0', () => {
  it('reads every run as its tool, levels from results or rule defaults, placeholders, locations, suppressions', async () => {
    const report = await readSarif(SARIF);
    expect(report.tools).toEqual(['checkov', 'Trivy']);
    expect(report.suppressed).toBe(1);
    expect(report.findings.map((f) => [f.tool, f.ruleId, f.level, f.message, f.locations])).toEqual([
      ['checkov', 'CKV_AWS_20', 'error', 'Bucket aws_s3_bucket.logs allows public READ', ['main.tf:12']],
      ['checkov', 'CKV_AWS_18', 'note', 'Access logging is not enabled', ['main.tf']],
      ['checkov', 'CKV_AWS_18', 'note', 'Suppression under review still counts', []],
      [
        'Trivy',
        'AVD-AWS-0086',
        'warning',
        'No public access block so not blocking public acls',
        ['modules/s3/main.tf:3'],
      ],
      ['Trivy', 'AVD-AWS-0090', 'none', 'Versioning enabled', []],
    ]);
    const [first, , , trivy] = report.findings;
    expect(first!.help).toBe('Set `acl = "private"` on the bucket.');
    expect(first!.helpUri).toBe('https://docs.prismacloud.io/en/policy-reference/CKV_AWS_20');
    expect(first!.fixes).toEqual(['Use a private ACL']);
    expect(trivy!.securitySeverity).toBe(9.8);
  });

  it('as a task result: one outcome per finding, most severe first, tags, body, url; the message counts', async () => {
    const { findings, tools } = await readSarif(SARIF);
    const { result, counts } = findingsResult(findings, { failOn: 'error', tools });
    expect(counts).toEqual({ error: 1, warning: 1, note: 2, none: 1 });
    expect(result.status).toBe('failed');
    expect(result.message).toBe('1 error, 1 warning, 2 notes, 1 other finding in 2 tools (fails on error)');
    const outcomes = result.outcomes!;
    expect(outcomes.map((o) => o.tags?.Severity?.[0])).toEqual([
      { label: 'High', level: 'error' },
      { label: 'Critical', level: 'error' }, // warning level, but security-severity 9.8
      { label: 'Low', level: 'info' },
      { label: 'Low', level: 'info' },
      { label: 'Info', level: 'none' },
    ]);
    const [bucket] = outcomes;
    expect(bucket!.id).toMatch(/^CKV_AWS_20-[0-9a-f]{8}$/);
    expect(bucket!.description).toBe('Bucket aws_s3_bucket.logs allows public READ');
    expect(bucket!.url).toBe('https://docs.prismacloud.io/en/policy-reference/CKV_AWS_20');
    expect(bucket!.body).toContain('**CKV_AWS_20** (checkov)');
    expect(bucket!.body).toContain('- `main.tf:12`');
    expect(bucket!.body).toContain('Set `acl = "private"` on the bucket.');
    expect(bucket!.body).toContain('- Use a private ACL');
    expect(bucket!.tags?.Status).toEqual([{ label: 'Failed', level: 'error' }]);
    // What is sent passes the wire check of the documented schema.
    expect(checkTaskResult(result, ['passed', 'failed']).problems).toEqual([]);
  });

  it('--fail-on decides: warning fails on the Trivy warning, note on notes, never passes', async () => {
    const only = (await readSarif(SARIF)).findings.filter((f) => f.level !== 'error');
    expect(findingsResult(only, { failOn: 'error' }).result.status).toBe('passed');
    expect(findingsResult(only, { failOn: 'warning' }).result.status).toBe('failed');
    const notes = only.filter((f) => f.level === 'note');
    expect(findingsResult(notes, { failOn: 'warning' }).result.status).toBe('passed');
    expect(findingsResult(notes, { failOn: 'note' }).result.status).toBe('failed');
    expect(findingsResult((await readSarif(SARIF)).findings, { failOn: 'never' }).result.status).toBe(
      'passed',
    );
    expect(findingsResult([], { failOn: 'error', tools: ['checkov'] }).result).toEqual({
      status: 'passed',
      message: 'No findings in checkov',
    });
  });

  it('outcome ids are stable for the same finding and differ for another location', async () => {
    const [a] = (await readSarif(SARIF)).findings;
    expect(outcomeId(a!)).toBe(outcomeId({ ...a! }));
    expect(outcomeId({ ...a!, locations: ['other.tf:1'] })).not.toBe(outcomeId(a!));
    const long: Finding = { ...a!, ruleId: 'R'.repeat(200) };
    expect([...outcomeId(long)].length).toBeLessThanOrEqual(RESULT_LIMITS.outcomeId);
  });

  it('a document the reading cannot use is refused naming where (every field: ./sarif-check.test.ts)', async () => {
    const driver = { name: 't' };
    const cases: [unknown, string][] = [
      [[], 'the SARIF document must be a JSON object'],
      [{ version: '2.0.0', runs: [] }, 'version must be "2.1.0" (found "2.0.0")'],
      [{ version: '2.1.0' }, 'runs must be an array (found nothing)'],
      [
        { version: '2.1.0', runs: [{ tool: {} }] },
        "runs[0].tool.driver.name must be the tool's name, a non-empty string (found nothing)",
      ],
      [
        { version: '2.1.0', runs: [{ tool: { driver }, results: [{ message: 'x' }] }] },
        'runs[0].results[0].message must be an object (found "x")',
      ],
      [
        {
          version: '2.1.0',
          runs: [{ tool: { driver }, results: [{ level: 'fatal', message: { text: 'x' } }] }],
        },
        'runs[0].results[0].level must be one of none, note, warning, error (found "fatal")',
      ],
      [
        { version: '2.1.0', runs: [{ tool: { driver }, results: [{ message: { id: 'nowhere' } }] }] },
        'runs[0].results[0].message has neither "text" nor a rule message "id"',
      ],
    ];
    for (const [doc, message] of cases) {
      await expect(readSarif(doc)).rejects.toThrow(SarifError);
      await expect(readSarif(doc)).rejects.toThrow(message);
    }
  });
});

describe('findings beyond the platform limit', () => {
  it(`keeps ${RESULT_LIMITS.outcomes - 1} outcomes and counts the rest by level in a last one`, () => {
    const findings: Finding[] = Array.from({ length: 400 }, (_, i) => ({
      tool: 'kics',
      ruleId: `rule-${i % 7}`,
      level: i < 100 ? 'error' : i < 300 ? 'warning' : 'note',
      message: `finding ${i}`,
      locations: [`main.tf:${i}`],
      fixes: [],
    }));
    const { result, summarised } = findingsResult(findings, { failOn: 'error' });
    expect(result.outcomes).toHaveLength(RESULT_LIMITS.outcomes);
    expect(summarised).toBe(400 - (RESULT_LIMITS.outcomes - 1));
    const last = result.outcomes!.at(-1)!;
    expect(last.id).toBe('more-findings');
    expect(last.description).toBe(
      '151 more findings (51 warnings, 100 notes) not listed: the platform shows at most 250 outcomes',
    );
    expect(last.body).toContain('| warning | 51 |');
    expect(last.body).toContain('| note | 100 |');
    expect(result.message).toBe('100 errors, 200 warnings, 100 notes in kics (fails on error)');
    expect(checkTaskResult(result, ['passed', 'failed']).problems).toEqual([]);
  });
});

const JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="policies" tests="6" failures="2" errors="1" skipped="1">
  <testsuite name="conftest" tests="4" failures="1" errors="1" skipped="1" file="policy/s3.rego">
    <testcase classname="data.s3" name="deny_public_acl" time="0.01" line="12">
      <failure message="bucket logs has a public ACL" type="deny">bucket logs has a public ACL
resource: aws_s3_bucket.logs</failure>
    </testcase>
    <testcase classname="data.s3" name="deny_unencrypted" time="0.01">
      <error message="undefined function crypto.x509" type="error"/>
    </testcase>
    <testcase classname="data.s3" name="warn_versioning"><skipped message="not applicable"/></testcase>
    <testcase classname="data.s3" name="allow_private"/>
    <testsuite name="nested" tests="2" failures="1">
      <testcase classname="data.iam" name="deny_star" file="policy/iam.rego" line="4">
        <failure>action "*" is not allowed &amp; must be narrowed ${'```'}inline fence${'```'}</failure>
      </testcase>
      <testcase classname="data.iam" name="ok"/>
    </testsuite>
  </testsuite>
</testsuites>`;

describe('JUnit XML', () => {
  it('one finding per failed or errored case, nested suites included; skipped and passing ones counted', () => {
    const report = readJunit(JUNIT);
    expect(report.suites).toEqual(['conftest']);
    expect(report.tests).toBe(6);
    expect(report.skipped).toBe(1);
    expect(report.findings.map((f) => [f.tool, f.ruleId, f.level, f.message, f.locations])).toEqual([
      [
        'conftest',
        'data.s3.deny_public_acl',
        'error',
        'deny_public_acl failed: bucket logs has a public ACL',
        ['policy/s3.rego:12'],
      ],
      [
        'conftest',
        'data.s3.deny_unencrypted',
        'error',
        'deny_unencrypted errored: undefined function crypto.x509',
        ['policy/s3.rego'],
      ],
      [
        'conftest',
        'data.iam.deny_star',
        'error',
        'deny_star failed: action "*" is not allowed & must be narrowed ```inline fence```',
        ['policy/iam.rego:4'],
      ],
    ]);
    // The failure text goes into a code block fenced longer than any backticks it holds.
    expect(report.findings[2]!.help).toBe(
      '````\naction "*" is not allowed & must be narrowed ```inline fence```\n````',
    );
    const { result } = findingsResult(report.findings, { failOn: 'error', tools: report.suites });
    expect(result.status).toBe('failed');
    expect(result.message).toBe('3 errors in conftest (fails on error)');
    expect(checkTaskResult(result, ['passed', 'failed']).problems).toEqual([]);
  });

  it('a single <testsuite> root is read too; all passing is passed', () => {
    const report = readJunit(
      '<testsuite name="pytest" tests="2"><testcase name="a"/><testcase name="b"/></testsuite>',
    );
    expect(report).toMatchObject({ suites: ['pytest'], tests: 2, findings: [] });
    expect(findingsResult(report.findings, { failOn: 'error', tools: report.suites }).result.status).toBe(
      'passed',
    );
  });

  it('broken, foreign or entity-declaring documents are refused saying why, with the line', () => {
    expect(() => readJunit('<testsuites>\n<testsuite name="x">\n</testsuites>')).toThrow(JunitError);
    expect(() => readJunit('<testsuites>\n<testsuite name="x">\n</testsuites>')).toThrow(
      /not well-formed XML: .*\(line 3\)/,
    );
    expect(() => readJunit('<report><item/></report>')).toThrow('has no <testsuites> or <testsuite> element');
    const bomb =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><testsuites/>';
    expect(() => readJunit(bomb)).toThrow('document type declaration');
  });
});

describe('JUnit XML: document type declarations anywhere (issue 33)', () => {
  const ENTITY = '<!DOCTYPE x [<!ENTITY e "EXPANDED">]>';
  const failing = (message: string): string =>
    `<testsuite name="s"><testcase name="t"><failure message="${message}">&e;</failure></testcase></testsuite>`;

  it('a DOCTYPE after a comment that holds "<a" is refused, naming its line', () => {
    const xml = `<?xml version="1.0"?>\n<!-- <a -->\n${ENTITY}\n${failing('&e;')}`;
    expect(() => readJunit(xml)).toThrow(JunitError);
    expect(() => readJunit(xml)).toThrow(/document type declaration \(<!DOCTYPE or <!ENTITY, line 3\)/);
  });

  it('a DOCTYPE inside the root element is refused', async () => {
    const xml = `<testsuites>\n${ENTITY}\n${failing('&e;')}</testsuites>`;
    expect(() => readJunit(xml)).toThrow(/document type declaration \(<!DOCTYPE or <!ENTITY, line 2\)/);
    await expect(reportResult(xml, 'junit', 'error')).rejects.toThrow(ReportError);
  });

  it('entities are never expanded; the predefined ones and character references are decoded once', () => {
    const xml =
      '<testsuite name="a &amp;amp; b"><testcase name="t"><failure message="&lt;1&gt; &#x41;&#66; &quot;q&apos; &e;">&amp;lt;x&gt;</failure></testcase></testsuite>';
    const [finding] = readJunit(xml).findings;
    expect(readJunit(xml).suites).toEqual(['a &amp; b']);
    expect(finding!.message).toBe('t failed: <1> AB "q\' &e;');
    expect(finding!.help).toBe('```\n&lt;x>\n```');
    // A CDATA section is literal: its "&lt;" stays as written, the text around it is decoded.
    const cdata =
      '<testsuite name="s"><testcase name="t"><failure>a &amp; <![CDATA[b &lt; c]]></failure></testcase></testsuite>';
    expect(readJunit(cdata).findings[0]!.help).toBe('```\na & b &lt; c\n```');
  });
});

describe('hostile reports (a handler output is untrusted)', () => {
  it('a message template of many placeholders and long arguments is cut while it is filled', async () => {
    const doc = {
      version: '2.1.0',
      runs: [
        {
          tool: {
            driver: {
              name: 't',
              rules: [{ id: 'r', messageStrings: { m: { text: '{0}'.repeat(200_000) } } }],
            },
          },
          results: Array.from({ length: 20 }, () => ({
            ruleId: 'r',
            message: { id: 'm', arguments: ['x'.repeat(500)] },
          })),
        },
      ],
    };
    const { findings } = await readSarif(doc);
    expect(findings).toHaveLength(20);
    for (const f of findings) expect([...f.message].length).toBe(RESULT_LIMITS.description);
  });

  it('an empty rule id and message still make a valid outcome; an empty security-severity is no score', async () => {
    const doc = {
      version: '2.1.0',
      runs: [
        {
          tool: { driver: { name: 't', rules: [{ id: 'r', properties: { 'security-severity': '7.5' } }] } },
          results: [
            { ruleId: '', message: { text: '' } },
            {
              rule: { index: 0 },
              level: 'warning',
              message: { text: 'x' },
              properties: { 'security-severity': '' },
            },
          ],
        },
      ],
    };
    const report = await readSarif(doc);
    expect(report.findings[1]!.ruleId).toBe('r'); // found through rule.index
    expect(report.findings[1]!.securitySeverity).toBe(7.5); // the result's "" leaves the rule's score
    const { result } = findingsResult(report.findings, { failOn: 'error', tools: report.tools });
    expect(result.outcomes!.map((o) => o.description)).toEqual(['x', 'finding']);
    expect(checkTaskResult(result, ['passed', 'failed']).problems).toEqual([]);
  });

  it('deep nesting is an unreadable report where it is read, and never a crash', async () => {
    const suites = '<testsuite name="s">'.repeat(60) + '</testsuite>'.repeat(60);
    await expect(reportResult(`<testsuites>${suites}</testsuites>`, 'junit', 'error')).rejects.toThrow(
      ReportError,
    );
    // Written as text: a value this deep is past JSON.stringify's own stack. In a part of the report that is not
    // read (a graph) it is not looked at; where an argument must be a string it is refused, naming where.
    const deep = '{"id":"n","children":['.repeat(20_000) + '{"id":"leaf"}' + ']}'.repeat(20_000);
    const graph = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"graphs":[{"nodes":[${deep}]}]}]}`;
    expect((await reportResult(graph, 'sarif', 'error')).result).toEqual({
      status: 'passed',
      message: 'No findings in t',
    });
    const nested = '['.repeat(20_000) + ']'.repeat(20_000);
    const argument = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[{"message":{"text":"{0}","arguments":[${nested}]}}]}]}`;
    await expect(reportResult(argument, 'sarif', 'error')).rejects.toThrow(ReportError);
    await expect(reportResult(argument, 'sarif', 'error')).rejects.toThrow(
      'runs[0].results[0].message.arguments[0] must be a string (found an array)',
    );
  });

  it('detection: SARIF cut off or followed by a banner is SARIF (and fails as such); other output is not a report', async () => {
    const sarif = JSON.stringify({ version: '2.1.0', runs: [] });
    expect(detectReportFormat(sarif)).toBe('sarif');
    expect(detectReportFormat(sarif.slice(0, -3))).toBe('sarif');
    expect(detectReportFormat(`${sarif}\nA new version of the scanner is available`)).toBe('sarif');
    await expect(reportResult(`${sarif}\nbanner`, 'sarif', 'error')).rejects.toThrow(/not JSON/);
    expect(detectReportFormat('{"status":"passed","runs":3}')).toBeUndefined();
    expect(detectReportFormat('<ok> all 12 policies passed')).toBeUndefined();
    expect(detectReportFormat('\uFEFF<?xml version="1.0"?><testsuites/>')).toBe('junit');
    expect(detectReportFormat('<testsuite name="x"/>')).toBe('junit');
  });

  it('a doctype quoted in a failure text (CDATA) is no document type declaration', () => {
    const xml =
      '<testsuites><testsuite name="web"><testcase name="page"><failure><![CDATA[<!DOCTYPE html><p>500</p>]]></failure></testcase></testsuite></testsuites>';
    expect(readJunit(xml).findings).toHaveLength(1);
  });
});
