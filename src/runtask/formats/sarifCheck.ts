/**
 * The checks of a SARIF 2.1.0 document before ./sarif.ts reads it: its counts against SARIF_LIMITS, then the type
 * of every field the reading uses, and only those. A report's other fields (graphs, taxonomies, code flows,
 * artifacts, invocations…) are not looked at: nothing of them reaches a finding, so nothing of them can make a
 * report unreadable. Each check looks at a value once, in time linear in the report's size; the first field that is
 * wrong is refused naming where it stands in the report and what it must be
 * (`runs[0].results[3].level must be one of none, note, warning, error (found "fatal")`).
 *
 * A field the reading uses may be absent unless the reading cannot go without it (`version`, `runs`, a run's
 * `tool.driver.name`, a result's `message`); when present it must have the type of the SARIF 2.1.0 specification.
 * One exception: `security-severity` in `properties` is a convention of GitHub code scanning, not of SARIF, and is
 * taken when it is a score and ignored otherwise, as GitHub does.
 */

/** A SARIF document that cannot be read, with the path of what is wrong (`runs[0].results[2].message`). */
export class SarifError extends Error {}

export type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as a message shows it: its type for an object or array, else its JSON (a long string cut). */
function shown(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string' && value.length > 40) return `${JSON.stringify(value.slice(0, 40))}…`;
  return JSON.stringify(value);
}

function wrong(path: string, expected: string, value: unknown): SarifError {
  return new SarifError(`${path} must be ${expected} (found ${shown(value)})`);
}

/** `parent[key]` when it is absent or an object; `at` is the parent's path in the report. */
function optionalObject(parent: Obj, key: string, at: string): Obj | undefined {
  const value = parent[key];
  if (value !== undefined && !isObj(value)) throw wrong(`${at}.${key}`, 'an object', value);
  return value;
}

function optionalArray(parent: Obj, key: string, at: string): unknown[] | undefined {
  const value = parent[key];
  if (value !== undefined && !Array.isArray(value)) throw wrong(`${at}.${key}`, 'an array', value);
  return value as unknown[] | undefined;
}

function optionalString(parent: Obj, key: string, at: string): void {
  const value = parent[key];
  if (value !== undefined && typeof value !== 'string') throw wrong(`${at}.${key}`, 'a string', value);
}

function optionalInteger(parent: Obj, key: string, at: string, min: number): void {
  const value = parent[key];
  if (value !== undefined && !(Number.isInteger(value) && (value as number) >= min)) {
    throw wrong(`${at}.${key}`, `an integer of at least ${min}`, value);
  }
}

function optionalOneOf(parent: Obj, key: string, at: string, allowed: readonly string[]): void {
  const value = parent[key];
  if (value !== undefined && !(typeof value === 'string' && allowed.includes(value))) {
    throw wrong(`${at}.${key}`, `one of ${allowed.join(', ')}`, value);
  }
}

/** Each item of `parent[key]`, when it is an array, as an object with its path; `check` is given each. */
function eachObject(parent: Obj, key: string, at: string, check: (item: Obj, path: string) => void): void {
  const items = optionalArray(parent, key, at);
  if (items === undefined) return;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const path = `${at}.${key}[${i}]`;
    if (!isObj(item)) throw wrong(path, 'an object', item);
    check(item, path);
  }
}

/** The levels of a result or a rule's default configuration (§3.27.10). */
const LEVELS = ['none', 'note', 'warning', 'error'] as const;
const KINDS = ['notApplicable', 'pass', 'fail', 'review', 'open', 'informational'];
const SUPPRESSION_STATUSES = ['accepted', 'underReview', 'rejected'];

/** A multiformat message string (§3.12): the rule's help and descriptions, its message strings. */
function checkText(parent: Obj, key: string, at: string): void {
  const text = optionalObject(parent, key, at);
  if (text === undefined) return;
  optionalString(text, 'text', `${at}.${key}`);
  optionalString(text, 'markdown', `${at}.${key}`);
}

/** A rule (reportingDescriptor, §3.49): what the reading takes of it. */
export function checkRule(rule: unknown, at: string): Obj {
  if (!isObj(rule)) throw wrong(at, 'an object', rule);
  optionalString(rule, 'id', at);
  optionalString(rule, 'helpUri', at);
  optionalObject(rule, 'properties', at);
  for (const key of ['help', 'fullDescription', 'shortDescription']) checkText(rule, key, at);
  const configuration = optionalObject(rule, 'defaultConfiguration', at);
  if (configuration !== undefined)
    optionalOneOf(configuration, 'level', `${at}.defaultConfiguration`, LEVELS);
  const strings = optionalObject(rule, 'messageStrings', at);
  for (const id of Object.keys(strings ?? {})) checkText(strings!, id, `${at}.messageStrings`);
  return rule;
}

/** A message (§3.11): its texts, its rule message id, and arguments that are strings. */
function checkMessage(result: Obj, at: string): void {
  const path = `${at}.message`;
  if (result.message === undefined) throw new SarifError(`${path} is missing (every result has a message)`);
  const message = optionalObject(result, 'message', at)!;
  for (const key of ['text', 'markdown', 'id']) optionalString(message, key, path);
  const args = optionalArray(message, 'arguments', path) ?? [];
  for (let i = 0; i < args.length; i++) {
    if (typeof args[i] !== 'string') throw wrong(`${path}.arguments[${i}]`, 'a string', args[i]);
  }
}

/** A location (§3.28): the file and line the reading shows. */
function checkLocation(location: Obj, at: string): void {
  const physical = optionalObject(location, 'physicalLocation', at);
  if (physical === undefined) return;
  const physicalAt = `${at}.physicalLocation`;
  const artifact = optionalObject(physical, 'artifactLocation', physicalAt);
  if (artifact !== undefined) optionalString(artifact, 'uri', `${physicalAt}.artifactLocation`);
  const region = optionalObject(physical, 'region', physicalAt);
  if (region !== undefined) optionalInteger(region, 'startLine', `${physicalAt}.region`, 1);
}

/** A result (§3.27): what the reading takes of it. */
export function checkResult(result: unknown, at: string): Obj {
  if (!isObj(result)) throw wrong(at, 'an object', result);
  optionalString(result, 'ruleId', at);
  optionalInteger(result, 'ruleIndex', at, -1);
  const reference = optionalObject(result, 'rule', at);
  if (reference !== undefined) {
    optionalString(reference, 'id', `${at}.rule`);
    optionalInteger(reference, 'index', `${at}.rule`, -1);
  }
  optionalOneOf(result, 'kind', at, KINDS);
  optionalOneOf(result, 'level', at, LEVELS);
  optionalObject(result, 'properties', at);
  checkMessage(result, at);
  eachObject(result, 'locations', at, checkLocation);
  eachObject(result, 'suppressions', at, (suppression, path) =>
    optionalOneOf(suppression, 'status', path, SUPPRESSION_STATUSES),
  );
  eachObject(result, 'fixes', at, (fix, path) => {
    const description = optionalObject(fix, 'description', path);
    if (description !== undefined) optionalString(description, 'text', `${path}.description`);
  });
  return result;
}

/** A run's tool name, its rules and its results (null read as none), the fields around them checked. */
export function checkRun(run: unknown, at: string): { tool: string; rules: unknown[]; results: unknown[] } {
  if (!isObj(run)) throw wrong(at, 'an object', run);
  const tool = optionalObject(run, 'tool', at);
  const driver = tool === undefined ? undefined : optionalObject(tool, 'driver', `${at}.tool`);
  const name = driver?.name;
  if (typeof name !== 'string' || name === '') {
    throw wrong(`${at}.tool.driver.name`, "the tool's name, a non-empty string", name);
  }
  const rules = optionalArray(driver!, 'rules', `${at}.tool.driver`) ?? [];
  const results = run.results === null ? [] : (optionalArray(run, 'results', at) ?? []);
  return { tool: name, rules, results };
}

/** The runs of a document whose version is 2.1.0. */
export function checkDocument(doc: unknown): unknown[] {
  if (!isObj(doc)) throw new SarifError('the SARIF document must be a JSON object');
  if (doc.version !== '2.1.0') throw wrong('version', '"2.1.0"', doc.version);
  if (!Array.isArray(doc.runs)) throw wrong('runs', 'an array', doc.runs);
  return doc.runs;
}

/**
 * The most a report may hold, over all its runs, checked before anything else: far above what a scan of a large
 * repository prints (a finding per file of 20 000 files, the rules of every scanner), and what an 8 MiB output
 * can hold of small items. Past them a report is refused, saying which count is over.
 */
export const SARIF_LIMITS = { rules: 100_000, results: 100_000, artifacts: 100_000 } as const;

function arrayLength(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}

/** Refuses a document with more rules, results or artifacts than SARIF_LIMITS, before it is checked. */
export function checkSarifCounts(doc: Obj): void {
  const counts = { rules: 0, results: 0, artifacts: 0 };
  for (const run of Array.isArray(doc.runs) ? (doc.runs as unknown[]) : []) {
    if (!isObj(run)) continue;
    counts.results += arrayLength(run.results);
    counts.artifacts += arrayLength(run.artifacts);
    const tool = isObj(run.tool) ? run.tool : {};
    const extensions: unknown[] = Array.isArray(tool.extensions) ? tool.extensions : [];
    const components = [tool.driver, ...extensions];
    for (const component of components) if (isObj(component)) counts.rules += arrayLength(component.rules);
  }
  const where = {
    rules: 'tool.driver.rules and tool.extensions[].rules',
    results: 'runs[].results',
    artifacts: 'runs[].artifacts',
  };
  for (const what of ['rules', 'results', 'artifacts'] as const) {
    if (counts[what] > SARIF_LIMITS[what]) {
      throw new SarifError(
        `too many ${what}: ${counts[what]} (${where[what]}, all runs), more than the ${SARIF_LIMITS[what]} a report may hold; scan less at once (by folder, or with fewer rules) or filter the report`,
      );
    }
  }
}
