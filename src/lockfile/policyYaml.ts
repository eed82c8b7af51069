/**
 * The policy file's YAML, read so that every complaint can name its line: the data, and the line of any path in
 * it (`providers` → `"app.terraform.io/acme/*"` → `approvals` → 0 → `sha256sums`). A syntax error, and a warning (an
 * unknown tag, which would otherwise be read as a plain string), name their line; aliases that stand for more than
 * the yaml package's `maxAliasCount` (100) allows, a billion strings from a few lines, are refused before they are
 * expanded.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import type { UsageError } from '../errors.js';

/** The document's data, and where each part of it stands. */
export interface PolicyYaml {
  data: unknown;
  /**
   * The line of the value at `path`, or of the key `key` in the map at `path` when given (an unknown field); the
   * nearest line known when the path goes beyond the document.
   */
  lineOf(path: readonly PropertyKey[], key?: string): number;
}

/** Reads the YAML text; `fail` makes the error for a reason (the caller names the file). */
export function readPolicyYaml(text: string, fail: (why: string) => UsageError): PolicyYaml {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, keepSourceTokens: false });
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem !== undefined) {
    const line = lines.linePos(problem.pos[0]).line;
    const message = problem.message.split('\n')[0];
    throw fail(
      problem.name === 'YAMLParseError'
        ? `it is not YAML (line ${line}: ${message})`
        : `line ${line}: ${message}`,
    );
  }
  refuseIndirection(document, lines, fail);
  let data: unknown;
  try {
    data = document.toJS();
  } catch (error) {
    const message = (error as Error).message.split('\n')[0];
    throw fail(
      /^Excessive alias count/.test(message ?? '')
        ? `its aliases stand for more than the YAML reader allows (an alias bomb?): ${message}`
        : `it is not YAML (${message})`,
    );
  }
  return { data, lineOf: (path, key) => lineOf(document, lines, path, key) };
}

/**
 * Refuses what makes a policy mean other than it reads: an anchor or alias (one entry's records would count for
 * another, and an edit of one would change both), a merge key, and a `%YAML` directive other than 1.2 (1.1 reads
 * `yes` as true, merges `<<`, and takes numbers and dates another way). Fail closed: exit 2 naming the line.
 */
function refuseIndirection(document: Document, lines: LineCounter, fail: (why: string) => UsageError): void {
  const { yaml } = document.directives ?? {};
  if (yaml?.explicit === true && yaml.version !== '1.2')
    throw fail(`line 1: a %YAML ${yaml.version} directive: a policy is read as YAML 1.2 only`);
  let found: { line: number; what: string } | undefined;
  const at = (node: Node): number => (node.range ? lines.linePos(node.range[0]).line : 1);
  visit(document, {
    Alias(_, node) {
      found ??= { line: at(node), what: `the alias *${node.source}` };
      return visit.BREAK;
    },
    Node(_, node) {
      if (node.anchor !== undefined) {
        found ??= { line: at(node), what: `the anchor &${node.anchor}` };
        return visit.BREAK;
      }
      return undefined;
    },
    Pair(_, pair) {
      if (isScalar(pair.key) && pair.key.value === '<<') {
        found ??= { line: at(pair.key), what: 'a merge key <<' };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (found !== undefined)
    throw fail(
      `line ${found.line}: ${found.what}: write each entry out in full (an anchor, an alias or a merge makes one entry's rules and records another's)`,
    );
}

/** See `PolicyYaml.lineOf`. */
function lineOf(
  document: Document,
  lines: LineCounter,
  path: readonly PropertyKey[],
  key: string | undefined,
): number {
  let node: unknown = document.contents;
  let line = 1;
  const at = (n: unknown): void => {
    const range = (n as Node | null)?.range;
    if (range) line = lines.linePos(range[0]).line;
  };
  at(node);
  const steps = [...path, ...(key === undefined ? [] : [key])];
  for (const [index, step] of steps.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === step);
      if (pair === undefined) break;
      // An unknown field: the line of its key (its value may be a block below it).
      const isKey = key !== undefined && index === steps.length - 1;
      at(isKey && pair.key !== null ? pair.key : pair.value);
      node = pair.value;
    } else if (isSeq(node) && typeof step === 'number') {
      node = node.items[step];
      at(node);
    } else break;
  }
  return line;
}
