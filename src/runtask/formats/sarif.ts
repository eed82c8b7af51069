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
 * A document is first counted (at most SARIF_LIMITS rules, results and artifacts), then the fields above are checked
 * (./sarifCheck.ts: their types only, the rest of the report is not looked at); the first one that is wrong is
 * refused naming where it is. Reading is asynchronous and yields to the event loop as it goes: an integrator
 * reading a large report keeps serving its other requests.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Finding, FindingLevel } from './findings.js';
import { RESULT_LIMITS } from '../../terraform/runtask/result.js';
import { cutText } from '../../terraform/runtask/trim.js';
import {
  SarifError,
  checkDocument,
  checkResult,
  checkRule,
  checkRun,
  checkSarifCounts,
  isObj,
  type Obj,
} from './sarifCheck.js';

export { SARIF_LIMITS, SarifError, checkSarifCounts } from './sarifCheck.js';

/** The findings of a SARIF document, the tools that ran, and how many results were suppressed. */
export interface SarifReport {
  findings: Finding[];
  tools: string[];
  suppressed: number;
}

/** A string value (the checks have refused any other type where the reading takes one). */
function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** What a finding keeps of the report's texts: no more than an outcome can show (RESULT_LIMITS). */
const MESSAGE_MAX = RESULT_LIMITS.description;
const HELP_MAX = RESULT_LIMITS.body;
const KEPT_LOCATIONS = 21;
const KEPT_FIXES = 10;

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

/** A message object's template (§3.11): its `text`, else the rule's string of its `id`. */
function messageTemplate(message: Obj, rule: Obj | undefined, path: string): string {
  let template = str(message.text) ?? str(message.markdown);
  const id = str(message.id);
  if (template === undefined && id !== undefined && rule !== undefined && isObj(rule.messageStrings)) {
    const entry = rule.messageStrings[id];
    if (isObj(entry)) template = str(entry.text) ?? str(entry.markdown);
  }
  if (template === undefined) throw new SarifError(`${path} has neither "text" nor a rule message "id"`);
  return template;
}

/**
 * A message's text: its template with `{n}` filled from `arguments`. Filled piece by piece, from at most twice
 * the description's limit of the template, and stopped past that limit: a template of many placeholders with long
 * arguments must not build a string of gigabytes, nor a template of megabytes shared by every result be read
 * again for each (a handler's output is untrusted).
 */
function fillMessage(template: string, message: Obj): string {
  const args = Array.isArray(message.arguments) ? (message.arguments as string[]) : [];
  template = template.slice(0, 2 * MESSAGE_MAX);
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

/** `file:line` of the first physical locations of a result. */
function locations(value: unknown): string[] {
  const out: string[] = [];
  for (const location of Array.isArray(value) ? (value as Obj[]) : []) {
    if (out.length === KEPT_LOCATIONS) break;
    const physical = isObj(location.physicalLocation) ? location.physicalLocation : undefined;
    const uri = isObj(physical?.artifactLocation) ? str(physical.artifactLocation.uri) : undefined;
    if (uri === undefined) continue;
    const line = isObj(physical?.region) ? physical.region.startLine : undefined;
    out.push(cutText(typeof line === 'number' ? `${uri}:${line}` : uri, 500));
  }
  return out;
}

/** Whether a result is suppressed (§3.35: a suppression whose status is absent or accepted). */
function suppressed(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  return (value as Obj[]).some((s) => s.status === undefined || s.status === 'accepted');
}

function fixes(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return (value as Obj[])
    .map((fix) => (isObj(fix.description) ? str(fix.description.text) : undefined))
    .filter((text): text is string => text !== undefined && text.trim() !== '')
    .slice(0, KEPT_FIXES)
    .map((text) => cutText(text, MESSAGE_MAX));
}

/** The help of a rule: its help's Markdown or text, else its full or short description. */
function ruleHelp(rule: Obj): string | undefined {
  for (const key of ['help', 'fullDescription', 'shortDescription']) {
    const value = rule[key];
    if (isObj(value)) {
      const text = str(value.markdown) ?? str(value.text);
      if (text !== undefined && text.trim() !== '') return cutText(text, HELP_MAX);
    }
  }
  return undefined;
}

/** What every finding of a rule shares, read once per rule: its help and its help's address. */
interface RuleTexts {
  help: string | undefined;
  helpUri: string | undefined;
}

/** A rule's texts, from `read` (each rule's computed once, and the same strings shared by its findings). */
function ruleTexts(rule: Obj | undefined, read: Map<Obj, RuleTexts>): RuleTexts {
  if (rule === undefined) return { help: undefined, helpUri: undefined };
  let texts = read.get(rule);
  if (texts === undefined) {
    texts = { help: ruleHelp(rule), helpUri: cutText(str(rule.helpUri) ?? '', 600) || undefined };
    read.set(rule, texts);
  }
  return texts;
}

/** How long the reading runs before it lets the event loop turn. */
const SLICE_MS = 5;

/** The reading's time since it last let the event loop turn. */
class Pace {
  private since = performance.now();

  due(): boolean {
    return performance.now() - this.since > SLICE_MS;
  }

  async turn(): Promise<void> {
    await nextTurn();
    this.since = performance.now();
  }
}

/** A result's rule: the one at its index, else the first with its id. */
function ruleOf(result: Obj, rules: readonly Obj[], byId: ReadonlyMap<unknown, Obj>): Obj | undefined {
  const reference = isObj(result.rule) ? result.rule : undefined;
  const index =
    typeof result.ruleIndex === 'number'
      ? result.ruleIndex
      : typeof reference?.index === 'number'
        ? reference.index
        : undefined;
  const indexed = index !== undefined ? rules[index] : undefined;
  return indexed ?? byId.get(str(result.ruleId) ?? str(reference?.id));
}

/**
 * A result as a finding (its fields checked). Its message is filled when it is first asked for: most findings of
 * a large report only count, and a short result naming a long rule message must not cost a string each.
 */
function finding(
  tool: string,
  result: Obj,
  rule: Obj | undefined,
  path: string,
  read: Map<Obj, RuleTexts>,
): Finding {
  const reference = isObj(result.rule) ? result.rule : undefined;
  const id = str(result.ruleId) ?? str(reference?.id) ?? str(rule?.id) ?? 'result';
  const configured = isObj(rule?.defaultConfiguration) ? rule.defaultConfiguration.level : undefined;
  const level = (result.kind ?? 'fail') === 'fail' ? (result.level ?? configured ?? 'warning') : 'none';
  const message = result.message as Obj;
  const template = messageTemplate(message, rule, `${path}.message`);
  let filled: string | undefined;
  return {
    tool,
    ruleId: id,
    level: level as FindingLevel,
    securitySeverity: securitySeverity(result.properties) ?? securitySeverity(rule?.properties),
    get message(): string {
      filled ??= fillMessage(template, message);
      return filled;
    },
    ...ruleTexts(rule, read),
    locations: locations(result.locations),
    fixes: fixes(result.fixes),
  };
}

/** Reads one run into the report: its rules checked, then each result checked and read. */
async function readRun(run: unknown, at: string, report: SarifReport, pace: Pace): Promise<void> {
  const { tool, rules: listed, results } = checkRun(run, at);
  report.tools.push(tool);
  const rules: Obj[] = [];
  // By id, the first rule of each (a lookup per result, not a search of every rule); a rule without an id is
  // found by its index only, never by a result that names no rule.
  const byId = new Map<unknown, Obj>();
  for (const [i, item] of listed.entries()) {
    if (pace.due()) await pace.turn();
    const rule = checkRule(item, `${at}.tool.driver.rules[${i}]`);
    rules.push(rule);
    if (typeof rule.id === 'string' && !byId.has(rule.id)) byId.set(rule.id, rule);
  }
  const read = new Map<Obj, RuleTexts>();
  for (const [i, item] of results.entries()) {
    if (pace.due()) await pace.turn();
    const path = `${at}.results[${i}]`;
    const result = checkResult(item, path);
    if (suppressed(result.suppressions)) {
      report.suppressed++;
      continue;
    }
    report.findings.push(finding(tool, result, ruleOf(result, rules, byId), path, read));
  }
}

/** Reads a SARIF 2.1.0 document (parsed JSON); rejects with SarifError naming the first thing wrong. */
export async function readSarif(doc: unknown): Promise<SarifReport> {
  const runs = checkDocument(doc);
  checkSarifCounts(doc as Obj);
  const report: SarifReport = { findings: [], tools: [], suppressed: 0 };
  const pace = new Pace();
  for (const [r, run] of runs.entries()) await readRun(run, `runs[${r}]`, report, pace);
  return report;
}
