/**
 * The checks of a SARIF 2.1.0 report before it is read (issue 44): every field the reading uses is checked for the
 * type the SARIF specification gives it, and a wrong one is refused naming where it stands in the report; the fields
 * the reading does not use are not looked at, whatever they hold; the counts are capped before anything is
 * checked; and a report of 40 000 rules is read letting the event loop turn.
 */
import { describe, expect, it } from 'vitest';
import { reportResult } from '../../../src/runtask/formats/report.js';
import { SARIF_LIMITS, SarifError, readSarif } from '../../../src/runtask/formats/sarif.js';
import type { HandlerExit } from '../../../src/runtask/server/handler/handler.js';
import { interpretHandlerExit } from '../../../src/runtask/server/handler/handlerResult.js';

type Json = Record<string, unknown>;

/** A document holding every field the reading uses, each of the right type. */
function fullDocument(): Json {
  return {
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'checkov',
            rules: [
              {
                id: 'CKV_AWS_20',
                helpUri: 'https://docs.example.com/CKV_AWS_20',
                properties: { 'security-severity': '9.1' },
                help: { text: 'Remove public ACLs', markdown: 'Set `acl`' },
                fullDescription: { text: 'full', markdown: 'full' },
                shortDescription: { text: 'short' },
                defaultConfiguration: { level: 'error' },
                messageStrings: { m: { text: 'Bucket {0}', markdown: 'Bucket `{0}`' } },
              },
            ],
          },
        },
        results: [
          {
            ruleId: 'CKV_AWS_20',
            ruleIndex: 0,
            rule: { id: 'CKV_AWS_20', index: 0 },
            kind: 'fail',
            level: 'error',
            properties: { 'security-severity': '9.8' },
            message: { id: 'm', arguments: ['logs', 'more'] },
            locations: [
              {
                physicalLocation: {
                  artifactLocation: { uri: 'main.tf' },
                  region: { startLine: 12 },
                },
              },
            ],
            suppressions: [{ kind: 'external', status: 'underReview' }],
            fixes: [{ description: { text: 'private ACL' } }],
          },
        ],
      },
    ],
  };
}

/** Sets the value at a path (`runs.0.results.0.level`) of a document; `undefined` removes it. */
function withValue(path: string, value: unknown): Json {
  const doc = fullDocument();
  const keys = path.split('.');
  let at: Record<string, unknown> = doc;
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
  const last = keys.at(-1)!;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return doc;
}

const RULE = 'runs.0.tool.driver.rules.0';
const RESULT = 'runs.0.results.0';
const LOCATION = `${RESULT}.locations.0.physicalLocation`;

/** Where a wrong value is put, the value, and the message that refuses it. */
const WRONG: [string, unknown, string][] = [
  ['version', 2.1, 'version must be "2.1.0" (found 2.1)'],
  ['runs', {}, 'runs must be an array (found an object)'],
  ['runs.0', 'run', 'runs[0] must be an object (found "run")'],
  ['runs.0.tool', [], 'runs[0].tool must be an object (found an array)'],
  ['runs.0.tool.driver', 'checkov', 'runs[0].tool.driver must be an object (found "checkov")'],
  [
    'runs.0.tool.driver.name',
    '',
    `runs[0].tool.driver.name must be the tool's name, a non-empty string (found "")`,
  ],
  ['runs.0.tool.driver.rules', {}, 'runs[0].tool.driver.rules must be an array (found an object)'],
  [RULE, null, 'runs[0].tool.driver.rules[0] must be an object (found null)'],
  [`${RULE}.id`, 20, 'runs[0].tool.driver.rules[0].id must be a string (found 20)'],
  [`${RULE}.helpUri`, true, 'runs[0].tool.driver.rules[0].helpUri must be a string (found true)'],
  [`${RULE}.properties`, 'x', 'runs[0].tool.driver.rules[0].properties must be an object (found "x")'],
  [`${RULE}.help`, 'help', 'runs[0].tool.driver.rules[0].help must be an object (found "help")'],
  [`${RULE}.help.markdown`, 1, 'runs[0].tool.driver.rules[0].help.markdown must be a string (found 1)'],
  [
    `${RULE}.fullDescription.text`,
    {},
    'runs[0].tool.driver.rules[0].fullDescription.text must be a string (found an object)',
  ],
  [
    `${RULE}.shortDescription`,
    3,
    'runs[0].tool.driver.rules[0].shortDescription must be an object (found 3)',
  ],
  [
    `${RULE}.defaultConfiguration`,
    'error',
    'runs[0].tool.driver.rules[0].defaultConfiguration must be an object (found "error")',
  ],
  [
    `${RULE}.defaultConfiguration.level`,
    'high',
    'runs[0].tool.driver.rules[0].defaultConfiguration.level must be one of none, note, warning, error (found "high")',
  ],
  [
    `${RULE}.messageStrings`,
    [],
    'runs[0].tool.driver.rules[0].messageStrings must be an object (found an array)',
  ],
  [
    `${RULE}.messageStrings.m`,
    'x',
    'runs[0].tool.driver.rules[0].messageStrings.m must be an object (found "x")',
  ],
  [
    `${RULE}.messageStrings.m.text`,
    null,
    'runs[0].tool.driver.rules[0].messageStrings.m.text must be a string (found null)',
  ],
  ['runs.0.results', 'none', 'runs[0].results must be an array (found "none")'],
  [RESULT, 7, 'runs[0].results[0] must be an object (found 7)'],
  [`${RESULT}.ruleId`, 20, 'runs[0].results[0].ruleId must be a string (found 20)'],
  [`${RESULT}.ruleIndex`, 1.5, 'runs[0].results[0].ruleIndex must be an integer of at least -1 (found 1.5)'],
  [`${RESULT}.ruleIndex`, -2, 'runs[0].results[0].ruleIndex must be an integer of at least -1 (found -2)'],
  [`${RESULT}.ruleIndex`, '0', 'runs[0].results[0].ruleIndex must be an integer of at least -1 (found "0")'],
  [`${RESULT}.rule`, 'CKV_AWS_20', 'runs[0].results[0].rule must be an object (found "CKV_AWS_20")'],
  [`${RESULT}.rule.id`, 1, 'runs[0].results[0].rule.id must be a string (found 1)'],
  [
    `${RESULT}.rule.index`,
    'first',
    'runs[0].results[0].rule.index must be an integer of at least -1 (found "first")',
  ],
  [
    `${RESULT}.kind`,
    'failed',
    'runs[0].results[0].kind must be one of notApplicable, pass, fail, review, open, informational (found "failed")',
  ],
  [
    `${RESULT}.level`,
    'fatal',
    'runs[0].results[0].level must be one of none, note, warning, error (found "fatal")',
  ],
  [`${RESULT}.properties`, [], 'runs[0].results[0].properties must be an object (found an array)'],
  [`${RESULT}.message`, undefined, 'runs[0].results[0].message is missing (every result has a message)'],
  [
    `${RESULT}.message`,
    'x'.repeat(100),
    `runs[0].results[0].message must be an object (found "${'x'.repeat(40)}"…)`,
  ],
  [`${RESULT}.message.text`, 5, 'runs[0].results[0].message.text must be a string (found 5)'],
  [`${RESULT}.message.markdown`, [], 'runs[0].results[0].message.markdown must be a string (found an array)'],
  [`${RESULT}.message.id`, 0, 'runs[0].results[0].message.id must be a string (found 0)'],
  [
    `${RESULT}.message.arguments`,
    'logs',
    'runs[0].results[0].message.arguments must be an array (found "logs")',
  ],
  [`${RESULT}.message.arguments.1`, 2, 'runs[0].results[0].message.arguments[1] must be a string (found 2)'],
  [`${RESULT}.locations`, {}, 'runs[0].results[0].locations must be an array (found an object)'],
  [
    `${RESULT}.locations.0`,
    'main.tf:12',
    'runs[0].results[0].locations[0] must be an object (found "main.tf:12")',
  ],
  [LOCATION, [], 'runs[0].results[0].locations[0].physicalLocation must be an object (found an array)'],
  [
    `${LOCATION}.artifactLocation`,
    'main.tf',
    'runs[0].results[0].locations[0].physicalLocation.artifactLocation must be an object (found "main.tf")',
  ],
  [
    `${LOCATION}.artifactLocation.uri`,
    {},
    'runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri must be a string (found an object)',
  ],
  [
    `${LOCATION}.region`,
    12,
    'runs[0].results[0].locations[0].physicalLocation.region must be an object (found 12)',
  ],
  [
    `${LOCATION}.region.startLine`,
    0,
    'runs[0].results[0].locations[0].physicalLocation.region.startLine must be an integer of at least 1 (found 0)',
  ],
  [
    `${LOCATION}.region.startLine`,
    '12',
    'runs[0].results[0].locations[0].physicalLocation.region.startLine must be an integer of at least 1 (found "12")',
  ],
  [`${RESULT}.suppressions`, true, 'runs[0].results[0].suppressions must be an array (found true)'],
  [
    `${RESULT}.suppressions.0`,
    'inSource',
    'runs[0].results[0].suppressions[0] must be an object (found "inSource")',
  ],
  [
    `${RESULT}.suppressions.0.status`,
    'ignored',
    'runs[0].results[0].suppressions[0].status must be one of accepted, underReview, rejected (found "ignored")',
  ],
  [`${RESULT}.fixes`, 'none', 'runs[0].results[0].fixes must be an array (found "none")'],
  [`${RESULT}.fixes.0`, null, 'runs[0].results[0].fixes[0] must be an object (found null)'],
  [
    `${RESULT}.fixes.0.description`,
    'x',
    'runs[0].results[0].fixes[0].description must be an object (found "x")',
  ],
  [
    `${RESULT}.fixes.0.description.text`,
    1,
    'runs[0].results[0].fixes[0].description.text must be a string (found 1)',
  ],
];

describe('the fields the reading uses', () => {
  it('the full document is read: every field of the right type', async () => {
    const report = await readSarif(fullDocument());
    expect(report.findings).toEqual([
      {
        tool: 'checkov',
        ruleId: 'CKV_AWS_20',
        level: 'error',
        securitySeverity: 9.8,
        message: 'Bucket logs',
        help: 'Set `acl`',
        helpUri: 'https://docs.example.com/CKV_AWS_20',
        locations: ['main.tf:12'],
        fixes: ['private ACL'],
      },
    ]);
  });

  for (const [path, value, message] of WRONG) {
    it(`${path} = ${JSON.stringify(value)?.slice(0, 30) ?? 'nothing'}: refused naming where`, async () => {
      const doc = withValue(path, value);
      await expect(readSarif(doc)).rejects.toThrow(SarifError);
      await expect(readSarif(doc)).rejects.toThrow(message);
    });
  }

  it('a wrong field of a suppressed result or of a rule no result uses is refused too', async () => {
    const suppressed = withValue(`${RESULT}.suppressions.0.status`, 'accepted');
    (suppressed.runs as Json[])[0]!.results = [
      ...((suppressed.runs as Json[])[0]!.results as Json[]),
      { ruleId: 'CKV_AWS_20', message: { text: 'x' }, suppressions: [{}], level: 'critical' },
    ];
    await expect(readSarif(suppressed)).rejects.toThrow(
      'runs[0].results[1].level must be one of none, note, warning, error (found "critical")',
    );
    const unused = fullDocument();
    const driver = ((unused.runs as Json[])[0]!.tool as Json).driver as Json;
    driver.rules = [...(driver.rules as Json[]), { id: 'UNUSED', defaultConfiguration: { level: 'fatal' } }];
    await expect(readSarif(unused)).rejects.toThrow(
      'runs[0].tool.driver.rules[1].defaultConfiguration.level must be one of none, note, warning, error (found "fatal")',
    );
  });
});

describe('the fields the reading does not use', () => {
  it('are not looked at: unknown properties, other shapes, repeats, what the schema would refuse', async () => {
    const doc = fullDocument();
    const run = (doc.runs as Json[])[0]!;
    const tool = run.tool as Json;
    const driver = tool.driver as Json;
    const result = (run.results as Json[])[0]!;
    Object.assign(doc, { extra: 1, $schema: 42, inlineExternalProperties: 'x' });
    Object.assign(run, {
      artifacts: [1, 'two', null],
      graphs: 'none',
      taxonomies: [{ taxa: [{ id: 1 }] }],
      invocations: {},
      originalUriBaseIds: [],
    });
    tool.extensions = [{ rules: [{ id: 5, defaultConfiguration: { level: 'fatal' } }] }, 'plugin'];
    // The same rule twice, a version that is a number, a rule's own name of any type.
    driver.rules = [...(driver.rules as Json[]), structuredClone((driver.rules as Json[])[0]!)];
    Object.assign(driver, { version: 3, informationUri: 'not a uri' });
    Object.assign((driver.rules as Json[])[0]!, { name: ['x'], relationships: 'none', deprecatedIds: 'OLD' });
    Object.assign(result, {
      codeFlows: 'none',
      partialFingerprints: [1],
      taxa: {},
      workItemUris: 'x',
      bogus: { nested: [1, 1] },
    });
    Object.assign(((result.locations as Json[])[0]!.physicalLocation as Json).region as Json, {
      startColumn: 'first',
      endLine: -3,
    });
    (result.fixes as Json[])[0]!.artifactChanges = 'none';
    ((result.suppressions as Json[])[0] as Json).kind = 7;
    (result.properties as Json)['security-severity'] = 'critical';
    const report = await readSarif(doc);
    expect(
      report.findings.map((f) => [f.ruleId, f.level, f.message, f.locations, f.securitySeverity]),
    ).toEqual([
      // "critical" is no score: the rule's 9.1 is taken.
      ['CKV_AWS_20', 'error', 'Bucket logs', ['main.tf:12'], 9.1],
    ]);
  });

  it('null results are no results; a result whose rule index is past the rules is matched by its id', async () => {
    const empty = withValue('runs.0.results', null);
    expect(await readSarif(empty)).toEqual({ findings: [], tools: ['checkov'], suppressed: 0 });
    const past = withValue(`${RESULT}.ruleIndex`, 7);
    expect((await readSarif(past)).findings[0]!.help).toBe('Set `acl`');
  });
});

describe('the counts', () => {
  it('more rules, results or artifacts than the limits: refused before anything is checked, saying which and what to do', async () => {
    // The rules are of no type the reading takes: the count is what refuses them.
    const rules = Array.from({ length: SARIF_LIMITS.rules + 1 }, () => 'rule');
    const doc = { version: '2.1.0', runs: [{ tool: { driver: { name: 't', rules } } }] };
    await expect(readSarif(doc)).rejects.toThrow(SarifError);
    await expect(readSarif(doc)).rejects.toThrow(
      `too many rules: ${SARIF_LIMITS.rules + 1} (tool.driver.rules and tool.extensions[].rules, all runs), more than the ${SARIF_LIMITS.rules} a report may hold; scan less at once (by folder, or with fewer rules) or filter the report`,
    );
    const extensions = {
      version: '2.1.0',
      runs: [{ tool: { driver: { name: 't' }, extensions: [{ rules }] } }],
    };
    await expect(readSarif(extensions)).rejects.toThrow(/^too many rules: 100001 /);
    const results = Array.from({ length: SARIF_LIMITS.results / 2 + 1 }, () => 0);
    const twoRuns = { version: '2.1.0', runs: [{ results }, { results }] };
    await expect(readSarif(twoRuns)).rejects.toThrow(
      /^too many results: 100002 \(runs\[\]\.results, all runs\)/,
    );
    const artifacts = Array.from({ length: SARIF_LIMITS.artifacts / 2 + 1 }, () => 1);
    const split = { version: '2.1.0', runs: [{ artifacts }, { artifacts }] };
    await expect(readSarif(split)).rejects.toThrow(
      /^too many artifacts: 100002 \(runs\[\]\.artifacts, all runs\)/,
    );
    // At the limit, the rules are checked and read.
    const atLimit = Array.from({ length: SARIF_LIMITS.rules }, (_, i) => ({ id: `R${i}` }));
    const full = { version: '2.1.0', runs: [{ tool: { driver: { name: 't', rules: atLimit } } }] };
    expect((await readSarif(full)).tools).toEqual(['t']);
    // As the integrator words it in the failed result.
    const exit: HandlerExit = {
      exitCode: 0,
      signal: null,
      stdout: JSON.stringify(doc),
      stderrTail: '',
      stdoutTruncated: false,
      timedOut: false,
      aborted: false,
      durationMs: 1,
    };
    expect((await interpretHandlerExit(exit, '1m')).result).toEqual({
      status: 'failed',
      message: `The check's SARIF 2.1.0 report cannot be used: too many rules: ${SARIF_LIMITS.rules + 1} (tool.driver.rules and tool.extensions[].rules, all runs), more than the ${SARIF_LIMITS.rules} a report may hold; scan less at once (by folder, or with fewer rules) or filter the report`,
    });
  });
});

describe('a large report', () => {
  it('lets the event loop turn while it reads a report of 40 000 rules, then reads it right', async () => {
    const rules = Array.from({ length: 40_000 }, (_, i) => ({
      id: `R${i}`,
      defaultConfiguration: { level: 'note' },
    }));
    const results = [{ ruleId: 'R39999', message: { text: 'last rule' } }];
    const text = JSON.stringify({
      version: '2.1.0',
      runs: [{ tool: { driver: { name: 'big', rules } }, results }],
    });
    const order: string[] = [];
    const reading = reportResult(text, 'sarif', 'note').then((read) => {
      order.push('read');
      return read;
    });
    setImmediate(() => order.push('turn'));
    const read = await reading;
    expect(order).toEqual(['turn', 'read']);
    expect(read.result.status).toBe('failed');
    expect(read.result.message).toBe('1 note in big (fails on note)');
  });

  it('a wrong field far into a large report is found, naming it', async () => {
    const rules = Array.from({ length: 40_000 }, (_, i) => ({ id: `R${i}` }));
    const results = Array.from({ length: 20_000 }, (_, i) => ({
      ruleId: `R${i}`,
      message: { text: `${i}` },
    }));
    results[19_999]!.message = { text: 19_999 } as unknown as { text: string };
    const doc = { version: '2.1.0', runs: [{ tool: { driver: { name: 'big', rules } }, results }] };
    await expect(readSarif(doc)).rejects.toThrow(
      'runs[0].results[19999].message.text must be a string (found 19999)',
    );
  });
});

describe('what a rule shares with its results', () => {
  const run = (rules: unknown[], results: unknown[]) => ({
    version: '2.1.0',
    runs: [{ tool: { driver: { name: 'scanner', rules } }, results }],
  });

  it('a rule without an id is found by its index only, never by a result that names no rule', async () => {
    const doc = run(
      [{ defaultConfiguration: { level: 'error' }, help: { text: 'the id-less rule' } }],
      [{ message: { text: 'names no rule' } }, { ruleIndex: 0, message: { text: 'names it by index' } }],
    );
    const [unnamed, indexed] = (await readSarif(doc)).findings;
    expect(unnamed).toMatchObject({ ruleId: 'result', level: 'warning', help: undefined });
    expect(indexed).toMatchObject({ level: 'error', help: 'the id-less rule' });
  });

  it('a long help and a long message string, named by 100 000 short results, are read once, not per result', async () => {
    const help = 'h'.repeat(10_001);
    const template = `${'m'.repeat(4_000_000)}{0}`;
    const results = Array.from({ length: 100_000 }, (_, i) => ({
      ruleId: 'R1',
      message: { id: 'long', arguments: [String(i)] },
    }));
    const doc = run(
      [{ id: 'R1', help: { text: help }, messageStrings: { long: { text: template } } }],
      results,
    );
    const before = process.memoryUsage().heapUsed;
    const { findings } = await readSarif(doc);
    // A string of the help or the message per finding would be gigabytes: 100 000 × (10 000 + 1 000) characters.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(300 * 2 ** 20);
    expect(findings).toHaveLength(100_000);
    expect(findings[7]!.help).toBe('h'.repeat(10_000));
    expect(findings[7]!.message).toBe('m'.repeat(1000));
  });
});
