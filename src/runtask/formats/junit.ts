/**
 * JUnit XML (what most test runners and policy tools print: `<testsuites>` of `<testsuite>`, possibly nested, of
 * `<testcase>` with `<failure>`, `<error>` or `<skipped>`) as findings: one per failed or errored test case.
 * Skipped and passing cases are counted, not reported. Parsed with fast-xml-parser after its validator has
 * checked the document is well-formed (so a broken report names its line); a document type declaration is
 * refused outright (JUnit reports have none, and entity declarations are how XML documents explode).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Finding } from './findings.js';
import { RESULT_LIMITS } from '../wire/result.js';
import { cutText } from '../wire/trim.js';

/** A JUnit document that cannot be read, with where. */
export class JunitError extends Error {}

/** What a JUnit document holds: the findings, and the test counts for the message. */
export interface JunitReport {
  findings: Finding[];
  tests: number;
  skipped: number;
  /** The top-level suite names (the "tools" of the message). */
  suites: string[];
}

type Node = Record<string, unknown>;

/** Suites within suites, at most (runners nest a few levels; a report nesting thousands is hostile). */
const MAX_SUITE_DEPTH = 50;

const ARRAYS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped', 'property']);

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'object' && value !== null && '#text' in value) return text((value as Node)['#text']);
  return '';
}

function children(node: Node, name: string): Node[] {
  const value = node[name];
  if (!Array.isArray(value)) return [];
  return value.map((v) => (typeof v === 'object' && v !== null ? (v as Node) : { '#text': text(v) }));
}

/** The first line of a text, trimmed. */
function firstLine(value: string): string {
  return value.trim().split(/\r?\n/)[0]?.trim() ?? '';
}

/** A Markdown code block around a text, fenced by more backticks than it holds in a row. */
function codeBlock(value: string): string {
  const longest = Math.max(0, ...[...value.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}\n${value}\n${fence}`;
}

/** Reads a JUnit XML document; throws JunitError saying what is wrong and where. */
export function readJunit(xml: string): JunitReport {
  // Before the first element only: a failure's text (CDATA) may well quote an HTML page's doctype.
  const prolog = xml.slice(0, xml.search(/<[A-Za-z]/) === -1 ? xml.length : xml.search(/<[A-Za-z]/));
  if (/<!DOCTYPE|<!ENTITY/i.test(prolog)) {
    throw new JunitError(
      'the JUnit report has a document type declaration, which a JUnit report never needs',
    );
  }
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw new JunitError(
      `the JUnit report is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`,
    );
  }
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    isArray: (name) => ARRAYS.has(name),
  });
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch (error) {
    // fast-xml-parser refuses what its validator let through in a few cases (tags nested past its limit).
    throw new JunitError(`the JUnit report cannot be read: ${(error as Error).message}`);
  }
  const root = (doc.testsuites ?? undefined) as Node | undefined;
  const topSuites = root !== undefined ? children(root, 'testsuite') : children(doc, 'testsuite');
  if (root === undefined && topSuites.length === 0) {
    throw new JunitError('the JUnit report has no <testsuites> or <testsuite> element');
  }
  const report: JunitReport = { findings: [], tests: 0, skipped: 0, suites: [] };
  for (const suite of topSuites) {
    const name = text(suite.name) || 'tests';
    report.suites.push(name);
    walk(suite, name, report, 1);
  }
  return report;
}

/** Collects a suite's cases and its nested suites' (nested suites keep the top suite as their tool). */
function walk(suite: Node, tool: string, report: JunitReport, depth: number): void {
  if (depth > MAX_SUITE_DEPTH) {
    throw new JunitError(`the JUnit report nests suites more than ${MAX_SUITE_DEPTH} deep`);
  }
  const suiteFile = text(suite.file);
  for (const testcase of children(suite, 'testcase')) {
    report.tests++;
    const name = text(testcase.name) || 'test';
    const classname = text(testcase.classname);
    const ruleId = classname === '' ? name : `${classname}.${name}`;
    const file = text(testcase.file) || suiteFile;
    const line = text(testcase.line);
    const locations = file === '' ? [] : [line === '' ? file : `${file}:${line}`];
    const problems = [
      ...children(testcase, 'failure').map((p) => ({ kind: 'failed', node: p })),
      ...children(testcase, 'error').map((p) => ({ kind: 'errored', node: p })),
    ];
    if (problems.length === 0) {
      if (children(testcase, 'skipped').length > 0) report.skipped++;
      continue;
    }
    for (const { kind, node } of problems) {
      const detail = text(node).trim();
      const message = cutText(
        text(node.message) || firstLine(detail) || `${name} ${kind}`,
        RESULT_LIMITS.description,
      );
      report.findings.push({
        tool,
        ruleId,
        level: 'error',
        message: `${name} ${kind}: ${message}`,
        help: detail === '' ? undefined : codeBlock(detail.slice(0, 8000)),
        locations,
        fixes: [],
      });
    }
  }
  for (const nested of children(suite, 'testsuite')) walk(nested, tool, report, depth + 1);
}
