/**
 * JUnit XML (what most test runners and policy tools print: `<testsuites>` of `<testsuite>`, possibly nested, of
 * `<testcase>` with `<failure>`, `<error>` or `<skipped>`) as findings: one per failed or errored test case.
 * Skipped and passing cases are counted, not reported. Parsed with fast-xml-parser after its validator has
 * checked the document is well-formed (so a broken report names its line); a document type declaration is
 * refused outright (JUnit reports have none, and entity declarations are how XML documents explode).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Finding } from './findings.js';

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
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) {
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
  const doc = parser.parse(xml) as Node;
  const root = (doc.testsuites ?? undefined) as Node | undefined;
  const topSuites = root !== undefined ? children(root, 'testsuite') : children(doc, 'testsuite');
  if (root === undefined && topSuites.length === 0) {
    throw new JunitError('the JUnit report has no <testsuites> or <testsuite> element');
  }
  const report: JunitReport = { findings: [], tests: 0, skipped: 0, suites: [] };
  for (const suite of topSuites) {
    const name = text(suite.name) || 'tests';
    report.suites.push(name);
    walk(suite, name, report);
  }
  return report;
}

/** Collects a suite's cases and its nested suites' (nested suites keep the top suite as their tool). */
function walk(suite: Node, tool: string, report: JunitReport): void {
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
      const message = text(node.message) || firstLine(detail) || `${name} ${kind}`;
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
  for (const nested of children(suite, 'testsuite')) walk(nested, tool, report);
}
