/**
 * A task result and its outcomes (run-tasks.md §4.2/§4.3), and the one check that reads an untrusted value
 * (a handler's JSON, an `--outcomes` file, a callback document) into a TaskResult. Problems are either
 * `invalid` (wrong shape or value: nothing sensible can be sent) or `limit` (over the documented limits of
 * §4.4: `runtask callback` refuses, `runtask serve` trims).
 */

/** Statuses an integrator may report; `passed` and `failed` are final (run-tasks.md §4.2). */
export const TASK_RESULT_STATUSES = ['running', 'passed', 'failed'] as const;
export type TaskResultStatus = (typeof TASK_RESULT_STATUSES)[number];
export type FinalTaskResultStatus = Exclude<TaskResultStatus, 'running'>;

/** Tag levels; `none` is the default and renders without colour (run-tasks.md §4.3). */
export const TAG_LEVELS = ['none', 'info', 'warning', 'error'] as const;
export type TagLevel = (typeof TAG_LEVELS)[number];

/** One label under a tag header, e.g. `{label: "High", level: "error"}` under `Severity`. */
export interface OutcomeTag {
  label: string;
  level?: TagLevel;
}

/** One detailed outcome; on the wire a `task-result-outcomes` object with `outcome-id`. */
export interface Outcome {
  id: string;
  description: string;
  body?: string;
  url?: string;
  tags?: Record<string, OutcomeTag[]>;
}

/** What an integrator reports in one callback. */
export interface TaskResult {
  status: TaskResultStatus;
  message?: string;
  url?: string;
  outcomes?: Outcome[];
}

/**
 * The limits of the result JSON Schema (run-tasks.md §4.4, SCHEMA, current version). Lengths count Unicode
 * code points, as JSON Schema does. The prose's "5MB" for a body is looser; the schema's 10,000 is what the UI
 * is built for, so it is the one enforced here. The emulator's judge keeps its own copy on purpose
 * (CALLBACK_LIMITS, src/emulator/runtask/judge.ts), so that the two sides are checked against each other.
 */
export const RESULT_LIMITS = {
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

/** One thing wrong with a result; `path` is where, in the handler/`--outcomes` format (`outcomes[2].body`). */
export interface ResultProblem {
  kind: 'invalid' | 'limit';
  path: string;
  message: string;
}

/** The checked value: `result` is set unless a problem is `invalid`. */
export interface CheckedTaskResult {
  result?: TaskResult;
  problems: ResultProblem[];
}

/** Length in code points (what JSON Schema's maxLength counts). */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isWebUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Collects problems while reading an untrusted value. */
class Checker {
  readonly problems: ResultProblem[] = [];

  invalid(path: string, message: string): void {
    this.problems.push({ kind: 'invalid', path, message });
  }

  limit(path: string, count: number, max: number, what: string): void {
    if (count > max)
      this.problems.push({ kind: 'limit', path, message: `has ${count} ${what} (limit ${max})` });
  }

  /** A string of at most `max` code points; absent, null and "" count as missing. */
  text(value: unknown, path: string, max: number, required: boolean): string | undefined {
    if (value === undefined || value === null || value === '') {
      if (required) this.invalid(path, 'is missing or empty');
      return undefined;
    }
    if (typeof value !== 'string') {
      this.invalid(path, `must be a string, not ${Array.isArray(value) ? 'an array' : typeof value}`);
      return undefined;
    }
    const length = codePoints(value);
    if (length > max) {
      this.problems.push({ kind: 'limit', path, message: `is ${length} characters long (limit ${max})` });
    }
    return value;
  }

  /** An http(s) URL of at most 500 code points. */
  link(value: unknown, path: string): string | undefined {
    const url = this.text(value, path, RESULT_LIMITS.url, false);
    if (url !== undefined && !isWebUrl(url)) this.invalid(path, 'must be an http:// or https:// URL');
    return url;
  }

  outcome(value: unknown, path: string): Outcome {
    if (!isRecord(value)) {
      this.invalid(path, 'must be an object {id, description, body, url, tags}');
      return { id: '', description: '' };
    }
    const outcome: Outcome = {
      id: this.text(value.id, `${path}.id`, RESULT_LIMITS.outcomeId, true) ?? '',
      description: this.text(value.description, `${path}.description`, RESULT_LIMITS.description, true) ?? '',
    };
    const body = this.text(value.body, `${path}.body`, RESULT_LIMITS.body, false);
    if (body !== undefined) outcome.body = body;
    const url = this.link(value.url, `${path}.url`);
    if (url !== undefined) outcome.url = url;
    if (value.tags !== undefined && value.tags !== null) {
      const tags = this.tags(value.tags, `${path}.tags`);
      if (tags !== undefined) outcome.tags = tags;
    }
    return outcome;
  }

  tags(value: unknown, path: string): Record<string, OutcomeTag[]> | undefined {
    if (!isRecord(value)) {
      this.invalid(path, 'must be an object of tag name → [{label, level}]');
      return undefined;
    }
    const keys = Object.keys(value);
    this.limit(path, keys.length, RESULT_LIMITS.tagKeys, 'tags');
    const tags: Record<string, OutcomeTag[]> = {};
    for (const key of keys) {
      const labels = value[key];
      const where = `${path}[${JSON.stringify(key)}]`;
      if (!Array.isArray(labels)) {
        this.invalid(where, 'must be an array of {label, level}');
        continue;
      }
      this.limit(where, labels.length, RESULT_LIMITS.labelsPerTag, 'labels');
      tags[key] = labels.map((tag: unknown, j) => this.tag(tag, `${where}[${j}]`));
    }
    return tags;
  }

  tag(value: unknown, path: string): OutcomeTag {
    if (!isRecord(value)) {
      this.invalid(path, 'must be an object {label, level}');
      return { label: '' };
    }
    const tag: OutcomeTag = {
      label: this.text(value.label, `${path}.label`, RESULT_LIMITS.label, true) ?? '',
    };
    if (value.level !== undefined && value.level !== null) {
      if ((TAG_LEVELS as readonly unknown[]).includes(value.level)) tag.level = value.level as TagLevel;
      else this.invalid(`${path}.level`, `must be one of ${TAG_LEVELS.join(', ')}`);
    }
    return tag;
  }
}

/** Reads an untrusted value into a TaskResult, listing every problem; `statuses` limits the allowed statuses. */
export function checkTaskResult(
  value: unknown,
  statuses: readonly TaskResultStatus[] = TASK_RESULT_STATUSES,
): CheckedTaskResult {
  const check = new Checker();
  if (!isRecord(value))
    return { problems: [{ kind: 'invalid', path: '', message: 'must be a JSON object' }] };
  const result: TaskResult = { status: 'failed' };
  if (typeof value.status === 'string' && (statuses as readonly string[]).includes(value.status)) {
    result.status = value.status as TaskResultStatus;
  } else {
    check.invalid(
      'status',
      `must be one of ${statuses.join(', ')}, not ${JSON.stringify(value.status ?? null)}`,
    );
  }
  const message = check.text(value.message, 'message', RESULT_LIMITS.message, false);
  if (message !== undefined) result.message = message;
  const url = check.link(value.url, 'url');
  if (url !== undefined) result.url = url;
  if (value.outcomes !== undefined && value.outcomes !== null) {
    if (!Array.isArray(value.outcomes)) check.invalid('outcomes', 'must be an array');
    else {
      check.limit('outcomes', value.outcomes.length, RESULT_LIMITS.outcomes, 'outcomes');
      result.outcomes = value.outcomes.map((o: unknown, i) => check.outcome(o, `outcomes[${i}]`));
    }
  }
  const { problems } = check;
  return problems.some((p) => p.kind === 'invalid') ? { problems } : { result, problems };
}

/** Reads a JSON:API callback document (as the platform receives it) into the handler format and checks it. */
export function resultFromCallbackDocument(doc: unknown): CheckedTaskResult {
  const data = isRecord(doc) && isRecord(doc.data) ? doc.data : undefined;
  if (data === undefined) return { problems: [{ kind: 'invalid', path: 'data', message: 'is missing' }] };
  if (data.type !== 'task-results')
    return { problems: [{ kind: 'invalid', path: 'data.type', message: 'must be "task-results"' }] };
  const attributes = isRecord(data.attributes) ? data.attributes : {};
  const relationships = isRecord(data.relationships) ? data.relationships : {};
  const outcomes = isRecord(relationships.outcomes) ? relationships.outcomes.data : undefined;
  const flat: Record<string, unknown> = { ...attributes };
  if (Array.isArray(outcomes)) {
    flat.outcomes = outcomes.map((o: unknown) => {
      const a = isRecord(o) && isRecord(o.attributes) ? o.attributes : {};
      const { 'outcome-id': id, ...rest } = a;
      return { id, ...rest };
    });
  }
  return checkTaskResult(flat);
}
