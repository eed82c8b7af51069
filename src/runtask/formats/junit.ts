/**
 * JUnit XML (what most test runners and policy tools print: `<testsuites>` of `<testsuite>`, possibly nested, of
 * `<testcase>` with `<failure>`, `<error>` or `<skipped>`) as findings: one per failed or errored test case.
 * Skipped and passing cases are counted, not reported. Parsed with fast-xml-parser after its validator has
 * checked the document is well-formed (so a broken report names its line). A document type declaration is
 * refused wherever it stands (JUnit reports have none, and entity declarations are how XML documents explode),
 * and the parser's entity processing is off all the same (`processEntities: false`, its documented switch), so
 * that no declared entity is ever expanded: the five predefined XML entities and character references, the only
 * ones a JUnit report uses, are decoded here.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Finding } from './findings.js';
import { RESULT_LIMITS } from '../../terraform/runtask/result.js';
import { cutText } from '../../terraform/runtask/trim.js';

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

/** Where the parser puts CDATA sections (no element name starts with #). */
const CDATA = '#cdata';

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the predefined entities and character references (`&lt;`, `&#60;`, `&#x3C;`); others stay as written. */
function decode(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(
    /&(?:#(\d{1,7})|#x([\dA-Fa-f]{1,6})|(lt|gt|amp|quot|apos));/g,
    (whole, dec, hex, name) => {
      if (typeof name === 'string') return PREDEFINED[name] ?? whole;
      const code = Number.parseInt((dec ?? hex) as string, dec === undefined ? 16 : 10);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    },
  );
}

/** A value as the parser left it (entities not decoded). */
function raw(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'object' && value !== null && '#text' in value) return raw((value as Node)['#text']);
  return '';
}

/** A text or attribute value, decoded once; CDATA sections, literal by definition, are not (after the text). */
function text(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return decode(raw(value));
  const node = value as Node;
  const cdata = node[CDATA];
  const sections = Array.isArray(cdata) ? cdata.map(raw) : cdata === undefined ? [] : [raw(cdata)];
  return decode(raw(node['#text'])) + sections.join('');
}

function children(node: Node, name: string): Node[] {
  const value = node[name];
  if (!Array.isArray(value)) return [];
  return value.map((v) => (typeof v === 'object' && v !== null ? (v as Node) : { '#text': raw(v) }));
}

/** The sections whose content is text, not markup: a `<!DOCTYPE` inside them is quoted, not declared. */
const TEXT_SECTIONS: ReadonlyArray<readonly [string, string]> = [
  ['<!--', '-->'],
  ['<![CDATA[', ']]>'],
  ['<?', '?>'],
];

/**
 * Where a well-formed document declares a document type or an entity (an index), outside comments, CDATA sections
 * and processing instructions, anywhere (before the root element, after a comment, inside an element); -1 when
 * it does not. One pass: each section is skipped to its end.
 */
function declarationAt(xml: string): number {
  for (let i = xml.indexOf('<'); i !== -1; i = xml.indexOf('<', i + 1)) {
    const section = TEXT_SECTIONS.find(([open]) => xml.startsWith(open, i));
    if (section !== undefined) {
      const end = xml.indexOf(section[1], i + section[0].length);
      if (end === -1) return -1;
      i = end;
      continue;
    }
    if (/^<!(DOCTYPE|ENTITY)/i.test(xml.slice(i, i + 9))) return i;
  }
  return -1;
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
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw new JunitError(
      `the JUnit report is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`,
    );
  }
  // After the validator: every comment, CDATA section and processing instruction is then closed (a failure's
  // text may well quote an HTML page's doctype in CDATA).
  const declared = declarationAt(xml);
  if (declared !== -1) {
    const line = xml.slice(0, declared).split('\n').length;
    throw new JunitError(
      `the JUnit report has a document type declaration (<!DOCTYPE or <!ENTITY, line ${line}), which a JUnit report never needs: remove it`,
    );
  }
  const parser = new XMLParser({
    processEntities: false,
    cdataPropName: CDATA,
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
