/**
 * Reading a successful answer: the body must be JSON and of the shape the request's schema describes, or the
 * request fails with UnexpectedAnswerError (exit 4), naming the request and what was wrong, by position and
 * kind only: values are never quoted, since a document may carry signed links.
 */
import type { z } from 'zod';
import type { ApiHost } from '../config/index.js';
import { UnexpectedAnswerError } from '../errors.js';

/** A successful answer as the HTTP layer received it. */
export interface Answer {
  method: string;
  /** The URL path, without the query string. */
  path: string;
  status: number;
  contentType: string | undefined;
  body: string;
}

// The message names a few problems; the details keep more, but not a whole broken document's worth.
const PROBLEMS_IN_MESSAGE = 3;
const PROBLEMS_IN_DETAILS = 20;

/** The answer's document parsed with `schema`; an empty body is allowed only when `schema` is undefined. */
export function parseAnswer<S extends z.ZodType>(apiHost: ApiHost, answer: Answer, schema: S): z.output<S>;
export function parseAnswer(apiHost: ApiHost, answer: Answer, schema: undefined): unknown;
export function parseAnswer(apiHost: ApiHost, answer: Answer, schema: z.ZodType | undefined): unknown {
  if (answer.body.trim() === '') {
    if (schema === undefined) return undefined;
    throw unexpectedAnswer(apiHost, answer, ['an empty body where a document was expected']);
  }
  let document: unknown;
  try {
    document = JSON.parse(answer.body);
  } catch {
    const type = answer.contentType?.split(';')[0]?.trim();
    throw unexpectedAnswer(apiHost, answer, [`a body that is not JSON (${type || 'no content type'})`]);
  }
  if (schema === undefined) return document;
  const result = schema.safeParse(document);
  if (result.success) return result.data;
  throw unexpectedAnswer(
    apiHost,
    answer,
    result.error.issues.map((issue) => describeIssue(issue, document)),
  );
}

function unexpectedAnswer(apiHost: ApiHost, answer: Answer, problems: string[]): UnexpectedAnswerError {
  const { method, path, status } = answer;
  const shown = problems.slice(0, PROBLEMS_IN_MESSAGE);
  const more = problems.length - shown.length;
  const text = shown.join('; ') + (more > 0 ? `; and ${more} more problem${more === 1 ? '' : 's'}` : '');
  return new UnexpectedAnswerError(
    `unexpected answer from the registry: ${method} ${path} (${status}): ${text}`,
    {
      status,
      hint: `Something other than the registry API may have answered (a proxy, a login page, another service): check --hostname (${apiHost.host}) and any proxy settings; run with --verbose to see the exchange. Nothing was changed after this answer.`,
      details: { method, path, status, problems: problems.slice(0, PROBLEMS_IN_DETAILS) },
    },
  );
}

/** `data[0].attributes.version: expected a string, got null`. */
function describeIssue(issue: z.core.$ZodIssue, document: unknown): string {
  const where = issue.path.length === 0 ? 'the document' : formatPath(issue.path);
  const got = kindOf(valueAt(document, issue.path));
  switch (issue.code) {
    case 'invalid_union': {
      // An item that may take several documented shapes: the problems of the shape it came closest to.
      const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0];
      if (closest === undefined || closest.length === 0) return `${where}: ${issue.message}`;
      return closest
        .map((inner) => describeIssue({ ...inner, path: [...issue.path, ...inner.path] }, document))
        .join('; ');
    }
    case 'invalid_type':
      return `${where}: expected ${withArticle(issue.expected)}, got ${got}`;
    case 'invalid_value':
      return `${where}: expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}, got ${got === 'a string' ? 'another string' : got}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

function formatPath(path: PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

function valueAt(document: unknown, path: PropertyKey[]): unknown {
  let value = document;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** What a value is, without saying what it holds. */
function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return withArticle(typeof value);
}

function withArticle(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}
