/**
 * SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format; what Checkov, Trivy, tfsec, KICS, Terrascan,
 * Semgrep and Snyk IaC print) as findings: one per result, from every run (one run per tool) of the document.
 * What is read, by the sections of the SARIF 2.1.0 specification:
 * - the tool: `run.tool.driver.name` (§3.19); its rules `run.tool.driver.rules` (§3.49), found by `ruleIndex`
 *   or by `ruleId` (§3.27.5–6);
 * - the level (§3.27.10): `result.level`, else the rule's `defaultConfiguration.level`, else `warning`; a result
 *   whose `kind` is not `fail` (pass, notApplicable, informational, review, open) has level `none`;
 * - the message (§3.11): `text` with its `{0}` placeholders filled from `arguments`, or the rule's
 *   `messageStrings[id]`;
 * - `security-severity` in the result's or the rule's `properties` (a 0.0–10.0 score as a string, GitHub code
 *   scanning's convention that Trivy, Checkov and Snyk follow);
 * - locations (§3.28): `physicalLocation.artifactLocation.uri` and `region.startLine`;
 * - suppressions (§3.35): a result with a suppression whose status is absent or `accepted` is left out (and
 *   counted); `underReview` and `rejected` ones still count;
 * - fixes (§3.55): their `description.text`; the rule's help (§3.49.15, `markdown` preferred) and `helpUri`.
 * A document is first counted (at most SARIF_LIMITS rules, results and artifacts), then validated against the
 * published SARIF 2.1.0 JSON schema (./sarifValidate.ts: linear time, a piece at a time); one that breaks it is
 * refused naming where and which rule. Reading is asynchronous and yields to the event loop as it goes: an
 * integrator reading a large report keeps serving its other requests.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Finding, FindingLevel } from './findings.js';
import { RESULT_LIMITS } from '../../terraform/runtask/result.js';
import { cutText } from '../../terraform/runtask/trim.js';
import { SarifSchemaError, validateSarifSchema } from './sarifValidate.js';

/** A SARIF document that cannot be read, with the path of what is wrong (`runs[0].results[2].message`). */
export class SarifError extends Error {}

/** The findings of a SARIF document, the tools that ran, and how many results were suppressed. */
export interface SarifReport {
  findings: Finding[];
  tools: string[];
  suppressed: number;
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

const LEVELS = new Set(['none', 'note', 'warning', 'error']);

/** What a finding keeps of the report's texts: no more than an outcome can show (RESULT_LIMITS). */
const MESSAGE_MAX = RESULT_LIMITS.description;
const HELP_MAX = RESULT_LIMITS.body;
const KEPT_LOCATIONS = 21;
const KEPT_FIXES = 10;

function level(value: unknown, path: string): FindingLevel | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !LEVELS.has(value)) {
    throw new SarifError(
      `${path} must be one of none, note, warning, error (found ${JSON.stringify(value)})`,
    );
  }
  return value as FindingLevel;
}

/** A `security-severity` property as a number, when it is one. */
function securitySeverity(properties: unknown): number | undefined {
  if (!isObj(properties)) return undefined;
  const value = properties['security-severity'];
  const score =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : NaN;
  return Number.isFinite(score) && score >= 0 && score <= 10 ? score : undefined;
}

/** A message object's text (§3.11): `text` with `{n}` filled from `arguments`, else the rule's string `id`. */
function messageText(message: unknown, rule: Obj | undefined, path: string): string {
  if (!isObj(message)) throw new SarifError(`${path} must be an object (a message with "text")`);
  const args = Array.isArray(message.arguments) ? message.arguments.map((a) => String(a)) : [];
  let template = str(message.text) ?? str(message.markdown);
  const id = str(message.id);
  if (template === undefined && id !== undefined && rule !== undefined && isObj(rule.messageStrings)) {
    const strings = rule.messageStrings;
    const entry = strings[id];
    if (isObj(entry)) template = str(entry.text) ?? str(entry.markdown);
  }
  if (template === undefined) throw new SarifError(`${path} has neither "text" nor a rule message "id"`);
  // Filled piece by piece and stopped past the description's limit: a template of many placeholders with long
  // arguments must not build a string of gigabytes (a handler's output is untrusted).
  let out = '';
  let last = 0;
  for (const match of template.matchAll(/\{(\d+)\}/g)) {
    out += template.slice(last, match.index) + (args[Number(match[1])] ?? match[0]).slice(0, MESSAGE_MAX);
    last = match.index + match[0].length;
    if (out.length > MESSAGE_MAX) break;
  }
  if (out.length <= MESSAGE_MAX) out += template.slice(last);
  return cutText(out, MESSAGE_MAX);
}

/** `file:line` of each physical location of a result. */
function locations(value: unknown, path: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new SarifError(`${path} must be an array`);
  const out: string[] = [];
  value.forEach((location: unknown, i) => {
    if (!isObj(location)) throw new SarifError(`${path}[${i}] must be an object`);
    const physical = location.physicalLocation;
    if (!isObj(physical)) return;
    const uri = isObj(physical.artifactLocation) ? str(physical.artifactLocation.uri) : undefined;
    if (uri === undefined) return;
    const line = isObj(physical.region) ? physical.region.startLine : undefined;
    if (out.length < KEPT_LOCATIONS)
      out.push(cutText(typeof line === 'number' ? `${uri}:${line}` : uri, 500));
  });
  return out;
}

/** Whether a result is suppressed (§3.35: a suppression whose status is absent or accepted). */
function suppressed(value: unknown, path: string): boolean {
  if (value === undefined) return false;
  if (!Array.isArray(value)) throw new SarifError(`${path} must be an array`);
  return value.some((s: unknown) => isObj(s) && (s.status === undefined || s.status === 'accepted'));
}

function fixes(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .map((fix: unknown) => (isObj(fix) && isObj(fix.description) ? str(fix.description.text) : undefined))
    .filter((text): text is string => text !== undefined && text.trim() !== '')
    .slice(0, KEPT_FIXES)
    .map((text) => cutText(text, MESSAGE_MAX));
}

/** The help of a rule: its help's Markdown or text, else its full or short description. */
function ruleHelp(rule: Obj | undefined): string | undefined {
  if (rule === undefined) return undefined;
  for (const key of ['help', 'fullDescription', 'shortDescription']) {
    const value = rule[key];
    if (isObj(value)) {
      const text = str(value.markdown) ?? str(value.text);
      if (text !== undefined && text.trim() !== '') return cutText(text, HELP_MAX);
    }
  }
  return undefined;
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

/** Refuses a document with more rules, results or artifacts than SARIF_LIMITS, before it is validated. */
export function checkSarifCounts(doc: Record<string, unknown>): void {
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

/** How long the reading runs before it lets the event loop turn. */
const SLICE_MS = 5;

/** Reads a SARIF 2.1.0 document (parsed JSON); rejects with SarifError naming the first thing wrong. */
export async function readSarif(doc: unknown): Promise<SarifReport> {
  if (!isObj(doc)) throw new SarifError('the SARIF document must be a JSON object');
  if (doc.version !== '2.1.0') {
    throw new SarifError(`version must be "2.1.0" (found ${JSON.stringify(doc.version)})`);
  }
  checkSarifCounts(doc);
  try {
    await validateSarifSchema(doc);
  } catch (error) {
    if (error instanceof SarifSchemaError) throw new SarifError(error.message);
    throw error;
  }
  if (!Array.isArray(doc.runs)) throw new SarifError('runs must be an array');
  const report: SarifReport = { findings: [], tools: [], suppressed: 0 };
  let sliceStart = performance.now();
  for (const [r, run] of (doc.runs as unknown[]).entries()) {
    const at = `runs[${r}]`;
    if (!isObj(run)) throw new SarifError(`${at} must be an object`);
    const driver = isObj(run.tool) ? run.tool.driver : undefined;
    if (!isObj(driver) || typeof driver.name !== 'string' || driver.name === '') {
      throw new SarifError(`${at}.tool.driver.name is missing (every run names its tool)`);
    }
    const tool = driver.name;
    report.tools.push(tool);
    const rules = Array.isArray(driver.rules) ? (driver.rules as unknown[]) : [];
    // By id, the first rule of each (a lookup per result, not a search of every rule).
    const byId = new Map<unknown, Obj>();
    for (const rule of rules) if (isObj(rule) && !byId.has(rule.id)) byId.set(rule.id, rule);
    const results = run.results;
    if (results === undefined || results === null) continue;
    if (!Array.isArray(results)) throw new SarifError(`${at}.results must be an array`);
    for (const [i, result] of (results as unknown[]).entries()) {
      if (performance.now() - sliceStart > SLICE_MS) {
        await nextTurn();
        sliceStart = performance.now();
      }
      const path = `${at}.results[${i}]`;
      if (!isObj(result)) throw new SarifError(`${path} must be an object`);
      const reference = isObj(result.rule) ? result.rule : undefined;
      const index =
        typeof result.ruleIndex === 'number'
          ? result.ruleIndex
          : typeof reference?.index === 'number'
            ? reference.index
            : undefined;
      const ruleId = str(result.ruleId) ?? str(reference?.id);
      const indexed = index !== undefined ? rules[index] : undefined;
      const rule = (isObj(indexed) ? indexed : undefined) ?? byId.get(ruleId);
      const id = ruleId ?? str(rule?.id) ?? 'result';
      if (suppressed(result.suppressions, `${path}.suppressions`)) {
        report.suppressed++;
        continue;
      }
      const kind = result.kind ?? 'fail';
      const configured = isObj(rule?.defaultConfiguration) ? rule.defaultConfiguration.level : undefined;
      const found =
        kind === 'fail'
          ? (level(result.level, `${path}.level`) ??
            level(configured, `rule ${id} defaultConfiguration.level`) ??
            'warning')
          : 'none';
      report.findings.push({
        tool,
        ruleId: id,
        level: found,
        securitySeverity: securitySeverity(result.properties) ?? securitySeverity(rule?.properties),
        message: messageText(result.message, rule, `${path}.message`),
        help: ruleHelp(rule),
        helpUri: cutText(str(rule?.helpUri) ?? '', 600) || undefined,
        locations: locations(result.locations, `${path}.locations`),
        fixes: fixes(result.fixes),
      });
    }
  }
  return report;
}
