/**
 * The platform's reading of a callback document (run-tasks.md §4.2–§4.4), written from the reference and not
 * shared with the integrator's code, so that a bug on one side cannot hide the same bug on the other. Problems
 * carry a JSON pointer, as the platform's 422 errors do.
 */

/**
 * The limits of the current result schema (run-tasks.md §4.4, SCHEMA); lengths count code points. A deliberate
 * mirror of RESULT_LIMITS (src/terraform/runtask/result.ts), not an import of it: the platform's side judges by the
 * documented limits on its own, so a wrong limit in the product's code cannot pass against its own copy. The
 * duplicates scan lists this pair, and should: keep both, each written from the reference.
 */
export const CALLBACK_LIMITS = {
  message: 1000,
  url: 500,
  outcomes: 250,
  outcomeId: 64,
  description: 1000,
  body: 10_000,
  tagKeys: 10,
  labelsPerTag: 32,
  label: 32,
} as const;

/** Statuses an integrator may send; anything else "returns an error" (API-REF). */
export const REPORTABLE_STATUSES = ['running', 'passed', 'failed'] as const;
const TAG_LEVELS = ['none', 'info', 'warning', 'error'];

/** One problem: where (JSON pointer) and what, and whether it is a limit, the status, or the shape. */
export interface DocumentProblem {
  kind: 'document' | 'status' | 'limits';
  pointer: string;
  detail: string;
}

/** What the platform read from a callback document. */
export interface JudgedDocument {
  problems: DocumentProblem[];
  status?: string | undefined;
  message?: string | undefined;
  url?: string | undefined;
  /** Outcomes under `data.relationships.outcomes.data`. */
  outcomes: number;
  /** GUIDE's example puts outcomes inside `attributes`, where they are not read. */
  outcomesInAttributes: boolean;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function length(text: string): number {
  return [...text].length;
}

/** Collects problems while reading. */
class Reader {
  readonly problems: DocumentProblem[] = [];

  problem(kind: DocumentProblem['kind'], pointer: string, detail: string): void {
    this.problems.push({ kind, pointer, detail });
  }

  /** An optional (or required) string of at most `max` code points. */
  text(value: unknown, pointer: string, max: number, required: boolean): string | undefined {
    if (value === undefined || value === null) {
      if (required) this.problem('document', pointer, 'is required');
      return undefined;
    }
    if (typeof value !== 'string') {
      this.problem(
        'document',
        pointer,
        `must be a string, not ${Array.isArray(value) ? 'an array' : typeof value}`,
      );
      return undefined;
    }
    if (required && value === '') this.problem('document', pointer, 'must not be empty');
    if (length(value) > max)
      this.problem('limits', pointer, `is ${length(value)} characters long (limit ${max})`);
    return value;
  }

  /** An optional http(s) URL of at most 500 code points. */
  link(value: unknown, pointer: string): string | undefined {
    const url = this.text(value, pointer, CALLBACK_LIMITS.url, false);
    if (url === undefined || url === '') return url;
    let ok = false;
    try {
      const parsed = new URL(url);
      ok = parsed.protocol === 'http:' || parsed.protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) this.problem('document', pointer, 'must be an http:// or https:// URL');
    return url;
  }

  tags(value: unknown, pointer: string): void {
    if (!isObject(value))
      return this.problem('document', pointer, 'must be an object of name → [{label, level}]');
    const keys = Object.keys(value);
    if (keys.length > CALLBACK_LIMITS.tagKeys)
      this.problem('limits', pointer, `has ${keys.length} tags (limit ${CALLBACK_LIMITS.tagKeys})`);
    for (const key of keys) {
      const labels = value[key];
      const where = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!Array.isArray(labels)) {
        this.problem('document', where, 'must be an array of {label, level}');
        continue;
      }
      if (labels.length > CALLBACK_LIMITS.labelsPerTag)
        this.problem('limits', where, `has ${labels.length} labels (limit ${CALLBACK_LIMITS.labelsPerTag})`);
      labels.forEach((tag: unknown, i) => {
        if (!isObject(tag))
          return this.problem('document', `${where}/${i}`, 'must be an object {label, level}');
        this.text(tag.label, `${where}/${i}/label`, CALLBACK_LIMITS.label, true);
        if (tag.level !== undefined && !TAG_LEVELS.includes(tag.level as string))
          this.problem('document', `${where}/${i}/level`, `must be one of ${TAG_LEVELS.join(', ')}`);
      });
    }
  }

  outcome(value: unknown, pointer: string): void {
    if (!isObject(value)) return this.problem('document', pointer, 'must be a task-result-outcomes object');
    if (value.type !== 'task-result-outcomes')
      this.problem('document', `${pointer}/type`, 'must be "task-result-outcomes"');
    const a = value.attributes;
    if (!isObject(a)) return this.problem('document', `${pointer}/attributes`, 'is required');
    const at = `${pointer}/attributes`;
    this.text(a['outcome-id'], `${at}/outcome-id`, CALLBACK_LIMITS.outcomeId, true);
    this.text(a.description, `${at}/description`, CALLBACK_LIMITS.description, true);
    this.text(a.body, `${at}/body`, CALLBACK_LIMITS.body, false);
    this.link(a.url, `${at}/url`);
    if (a.tags !== undefined && a.tags !== null) this.tags(a.tags, `${at}/tags`);
  }
}

/** Reads a callback document as the platform does; every problem found is listed. */
export function judgeCallbackDocument(doc: unknown): JudgedDocument {
  const reader = new Reader();
  const judged: JudgedDocument = { problems: reader.problems, outcomes: 0, outcomesInAttributes: false };
  const data = isObject(doc) ? doc.data : undefined;
  if (!isObject(data)) {
    reader.problem('document', '/data', 'is required: the body must be a JSON:API document {"data": {...}}');
    return judged;
  }
  if (data.type !== 'task-results') reader.problem('document', '/data/type', 'must be "task-results"');
  const attributes = data.attributes;
  if (!isObject(attributes)) {
    reader.problem('document', '/data/attributes', 'is required (with at least "status")');
    return judged;
  }
  const status = attributes.status;
  judged.status = typeof status === 'string' ? status : undefined;
  if (!(REPORTABLE_STATUSES as readonly unknown[]).includes(status)) {
    reader.problem(
      'status',
      '/data/attributes/status',
      `must be passed, failed or running, not ${JSON.stringify(status ?? null)}`,
    );
  }
  judged.message = reader.text(
    attributes.message,
    '/data/attributes/message',
    CALLBACK_LIMITS.message,
    false,
  );
  judged.url = reader.link(attributes.url, '/data/attributes/url');
  judged.outcomesInAttributes = attributes.outcomes !== undefined;
  const relationships = data.relationships;
  if (relationships === undefined || relationships === null) return judged;
  if (!isObject(relationships)) {
    reader.problem('document', '/data/relationships', 'must be an object');
    return judged;
  }
  const outcomes = relationships.outcomes;
  if (outcomes === undefined || outcomes === null) return judged;
  const list = isObject(outcomes) ? outcomes.data : undefined;
  if (!Array.isArray(list)) {
    reader.problem('document', '/data/relationships/outcomes/data', 'must be an array of outcomes');
    return judged;
  }
  judged.outcomes = list.length;
  if (list.length > CALLBACK_LIMITS.outcomes)
    reader.problem(
      'limits',
      '/data/relationships/outcomes/data',
      `has ${list.length} outcomes (limit ${CALLBACK_LIMITS.outcomes})`,
    );
  list.forEach((o: unknown, i) => reader.outcome(o, `/data/relationships/outcomes/data/${i}`));
  return judged;
}
