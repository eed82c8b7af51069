/**
 * The SARIF 2.1.0 schema check a piece at a time (issue 33): it refuses and accepts exactly what a validator of the
 * whole published schema does (compared on hundreds of seeded mutations of a rich document), finds repeated items
 * by value whatever their key order, counts rules, results and artifacts before validating, and lets the event
 * loop turn while it reads a large report.
 */
import { readFileSync } from 'node:fs';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { reportResult } from '../../../src/runtask/formats/report.js';
import { SARIF_LIMITS, SarifError, readSarif } from '../../../src/runtask/formats/sarif.js';
import { SarifSchemaError, validateSarifSchema } from '../../../src/runtask/formats/sarifValidate.js';
import type { HandlerExit } from '../../../src/runtask/server/handler/handler.js';
import { interpretHandlerExit } from '../../../src/runtask/server/handler/handlerResult.js';
import { REPO_ROOT } from '../../helpers/paths.js';

/** The whole schema in one ajv validator, as the integrator checked reports before. */
function wholeSchemaValidator(): (doc: unknown) => boolean {
  const ajv = new ajvDraft04.default({ allErrors: false, strict: false, unicodeRegExp: false });
  ajvFormats.default(ajv);
  const schema = JSON.parse(readFileSync(`${REPO_ROOT}/assets/sarif-schema-2.1.0.json`, 'utf8')) as object;
  const validate = ajv.compile(schema);
  return (doc) => validate(doc);
}

/** A document touching many definitions: rules with relationships, taxonomies, artifacts, graphs, fixes… */
function richDocument(): Record<string, unknown> {
  return {
    version: '2.1.0',
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    properties: { tags: ['a', 'b'], anything: { nested: [1, 2, 2] } },
    runs: [
      {
        tool: {
          driver: {
            name: 'checkov',
            version: '3.2.0',
            informationUri: 'https://www.checkov.io/',
            rules: [
              {
                id: 'CKV_AWS_20',
                name: 'S3PublicRead',
                shortDescription: { text: 'public read' },
                help: { text: 'Remove public ACLs', markdown: 'Set `acl`' },
                helpUri: 'https://docs.example.com/CKV_AWS_20',
                defaultConfiguration: { level: 'error', rank: 90 },
                messageStrings: { m: { text: 'Bucket {0}' } },
                relationships: [
                  { target: { id: 'CWE-284', toolComponent: { name: 'CWE' } }, kinds: ['superset'] },
                ],
                properties: { 'security-severity': '9.1', tags: ['security'] },
              },
              { id: 'CKV_AWS_18', deprecatedIds: ['OLD_18'], defaultConfiguration: { level: 'note' } },
            ],
            notifications: [{ id: 'N1', shortDescription: { text: 'note' } }],
          },
          extensions: [{ name: 'custom-policies', rules: [{ id: 'CUSTOM_1' }] }],
        },
        taxonomies: [{ name: 'CWE', taxa: [{ id: 'CWE-284' }, { id: 'CWE-285' }] }],
        originalUriBaseIds: { SRCROOT: { uri: 'file:///repo/' } },
        artifacts: [
          { location: { uri: 'main.tf', uriBaseId: 'SRCROOT' }, roles: ['analysisTarget'], length: 120 },
          { location: { uri: 'modules/s3/main.tf' }, hashes: { 'sha-256': 'ab' } },
        ],
        invocations: [{ executionSuccessful: true, arguments: ['-d', '.'], exitCode: 0 }],
        graphs: [
          {
            nodes: [{ id: 'n1', children: [{ id: 'n2' }, { id: 'n3' }] }, { id: 'n4' }],
            edges: [{ id: 'e1', sourceNodeId: 'n1', targetNodeId: 'n4' }],
          },
        ],
        results: [
          {
            ruleId: 'CKV_AWS_20',
            ruleIndex: 0,
            level: 'error',
            message: { id: 'm', arguments: ['logs'] },
            locations: [
              {
                physicalLocation: {
                  artifactLocation: { uri: 'main.tf', index: 0 },
                  region: { startLine: 12 },
                },
                logicalLocations: [{ name: 'aws_s3_bucket.logs', kind: 'resource' }],
              },
            ],
            partialFingerprints: { primary: 'abc' },
            fixes: [
              {
                description: { text: 'private ACL' },
                artifactChanges: [
                  {
                    artifactLocation: { uri: 'main.tf' },
                    replacements: [{ deletedRegion: { startLine: 12 }, insertedContent: { text: 'acl' } }],
                  },
                ],
              },
            ],
            suppressions: [{ kind: 'external', status: 'underReview' }],
            codeFlows: [
              {
                threadFlows: [{ locations: [{ location: { message: { text: 'here' } }, kinds: ['call'] }] }],
              },
            ],
            taxa: [{ id: 'CWE-284', index: 0 }],
          },
          {
            ruleId: 'CKV_AWS_18',
            kind: 'pass',
            message: { text: 'ok' },
            workItemUris: ['https://x.example/1'],
          },
        ],
      },
    ],
  };
}

/** A small seeded generator (mulberry32): the same mutations on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Container = Record<string, unknown> | unknown[];

/** Every place in a document: its container and key. */
function places(value: unknown, out: [Container, string | number][] = []): [Container, string | number][] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push([value, i]);
      places(item, out);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, key]);
      places(item, out);
    }
  }
  return out;
}

const REPLACEMENTS: unknown[] = [5, -1, 'x', 'not a uri', '', null, true, [], {}, [{}], { text: 'x' }, 1.5];

/** One seeded change somewhere in the document: another value, a removal, an extra property, a repeat. */
function mutate(doc: Record<string, unknown>, next: () => number): void {
  const all = places(doc);
  const [container, key] = all[Math.floor(next() * all.length)]!;
  const pick = next();
  const holder = container as Record<string | number, unknown>;
  if (pick < 0.45) holder[key] = REPLACEMENTS[Math.floor(next() * REPLACEMENTS.length)];
  else if (pick < 0.6 && !Array.isArray(container)) delete holder[key];
  else if (pick < 0.75 && !Array.isArray(container)) holder.bogus = 1;
  else if (Array.isArray(container)) container.push(structuredClone(container[key as number]));
  else {
    const value = holder[key];
    if (Array.isArray(value) && value.length > 0) value.push(structuredClone(value[0]));
    else holder[key] = [];
  }
}

async function verdict(doc: unknown): Promise<boolean> {
  try {
    await validateSarifSchema(doc);
    return true;
  } catch (error) {
    if (error instanceof SarifSchemaError) return false;
    throw error;
  }
}

describe('the schema check, a piece at a time', () => {
  it('accepts and refuses exactly what a validator of the whole schema does (400 seeded mutations)', async () => {
    const whole = wholeSchemaValidator();
    expect(whole(richDocument())).toBe(true);
    expect(await verdict(richDocument())).toBe(true);
    const next = random(33);
    let refused = 0;
    for (let i = 0; i < 400; i++) {
      const doc = richDocument();
      const changes = 1 + Math.floor(next() * 2);
      for (let c = 0; c < changes; c++) mutate(doc, next);
      const expected = whole(doc);
      expect(await verdict(doc), `mutation ${i}: ${JSON.stringify(doc).slice(0, 200)}`).toBe(expected);
      if (!expected) refused++;
    }
    // The mutations exercise both sides.
    expect(refused).toBeGreaterThan(100);
    expect(refused).toBeLessThan(400);
  });

  it('a repeated rule is found by value, whatever its key order, naming both items and the rule', async () => {
    const rules = Array.from({ length: 5000 }, (_, i) => ({ id: `R${i}`, name: `n${i}` }));
    rules.push({ name: 'n17', id: 'R17' });
    const doc = { version: '2.1.0', runs: [{ tool: { driver: { name: 't', rules } } }] };
    await expect(validateSarifSchema(doc)).rejects.toThrow(
      'runs[0].tool.driver.rules must NOT have duplicate items (items ## 17 and 5000 are identical) ' +
        '(SARIF 2.1.0 schema rule #/definitions/toolComponent/properties/rules/uniqueItems)',
    );
    const tags = {
      version: '2.1.0',
      runs: [{ tool: { driver: { name: 't', properties: { tags: ['a', 'a'] } } } }],
    };
    await expect(validateSarifSchema(tags)).rejects.toThrow(
      'runs[0].tool.driver.properties.tags must NOT have duplicate items (items ## 0 and 1 are identical) ' +
        '(SARIF 2.1.0 schema rule #/definitions/propertyBag/properties/tags/uniqueItems)',
    );
    // Equal text, other types: not repeats.
    const mixed = {
      version: '2.1.0',
      runs: [{ tool: { driver: { name: 't', rules: [{ id: '1' }, { id: '1', name: '1' }] } } }],
    };
    await expect(validateSarifSchema(mixed)).resolves.toBeUndefined();
  });

  it('more rules, results or artifacts than the limits: refused before validating, saying which and what to do', async () => {
    const rules = Array.from({ length: SARIF_LIMITS.rules + 1 }, (_, i) => ({ id: `R${i}` }));
    const doc = { version: '2.1.0', runs: [{ tool: { driver: { name: 't', rules } } }] };
    await expect(readSarif(doc)).rejects.toThrow(SarifError);
    await expect(readSarif(doc)).rejects.toThrow(
      `too many rules: ${SARIF_LIMITS.rules + 1} (tool.driver.rules and tool.extensions[].rules, all runs), more than the ${SARIF_LIMITS.rules} a report may hold; scan less at once (by folder, or with fewer rules) or filter the report`,
    );
    const artifacts = Array.from({ length: SARIF_LIMITS.artifacts / 2 + 1 }, () => 1);
    const split = { version: '2.1.0', runs: [{ artifacts }, { artifacts }] };
    await expect(readSarif(split)).rejects.toThrow(
      /^too many artifacts: 100002 \(runs\[\]\.artifacts, all runs\)/,
    );
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
});
