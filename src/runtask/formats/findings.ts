/**
 * Findings of scanners and test runners (read from SARIF 2.1.0 or JUnit XML by ./sarif.ts and ./junit.ts) as a run
 * task result: one outcome per finding, the pass/fail decision of `--fail-on`, a message that counts them, and the
 * findings that do not fit the platform's outcome limit summarised in a last outcome rather than dropped.
 *
 * Severity tags follow the platform's "Severity"/"Status" tags, which its UI enriches (run-tasks.md §4.3, the
 * documented sample: `"Severity": [{"label": "High", "level": "error"}]`). Labels: from a SARIF
 * `security-severity` score when there is one (the CVSS bands GitHub code scanning uses: ≥ 9 Critical, ≥ 7 High,
 * ≥ 4 Medium, > 0 Low), else from the level (error High, warning Medium, note Low, none Info), as the scanner
 * run task action of gautambaghel/terraform-scanner-runtask-action maps SARIF levels.
 */
import { createHash } from 'node:crypto';
import {
  RESULT_LIMITS,
  type Outcome,
  type OutcomeTag,
  type TagLevel,
  type TaskResult,
} from '../../terraform/runtask/result.js';
import { cutText } from '../../terraform/runtask/trim.js';

/** A finding's level: SARIF's `error`/`warning`/`note`/`none`; a JUnit failure or error is `error`. */
export type FindingLevel = 'error' | 'warning' | 'note' | 'none';

/** Levels from the most to the least severe. */
export const FINDING_LEVELS: readonly FindingLevel[] = ['error', 'warning', 'note', 'none'];

/** One thing a tool reported. */
export interface Finding {
  /** The tool (SARIF `tool.driver.name`, the JUnit suite). */
  tool: string;
  /** The rule or test (SARIF `ruleId`, JUnit `classname.name`). */
  ruleId: string;
  level: FindingLevel;
  /** SARIF `properties.security-severity` (0.0–10.0) of the rule or result. */
  securitySeverity?: number | undefined;
  /** What was found (one line is best: it becomes the outcome's description). */
  message: string;
  /** The rule's help (Markdown or text) or a test's failure output. */
  help?: string | undefined;
  /** Where to read more (an http(s) URL). */
  helpUri?: string | undefined;
  /** `file:line` (or `file`) of each location. */
  locations: string[];
  /** What the tool suggests doing. */
  fixes: string[];
}

/** `--fail-on`: the least severe level that fails the task; `never` always passes. */
export type FailOn = FindingLevel | 'never';

/** The task result of some findings, with the counts its message was made from. */
export interface FindingsResult {
  result: TaskResult;
  counts: Record<FindingLevel, number>;
  tools: string[];
  /** Findings summarised in the last outcome because of the platform's limit. */
  summarised: number;
}

const LEVEL_TAG: Record<FindingLevel, { label: string; level: TagLevel }> = {
  error: { label: 'High', level: 'error' },
  warning: { label: 'Medium', level: 'warning' },
  note: { label: 'Low', level: 'info' },
  none: { label: 'Info', level: 'none' },
};

const PLURAL: Record<FindingLevel, [string, string]> = {
  error: ['error', 'errors'],
  warning: ['warning', 'warnings'],
  note: ['note', 'notes'],
  none: ['other finding', 'other findings'],
};

/** The Severity tag of a finding: the security-severity band when scored, else its level's. */
export function severityTag(finding: Finding): OutcomeTag {
  const score = finding.securitySeverity;
  if (score !== undefined && Number.isFinite(score) && score > 0) {
    if (score >= 9) return { label: 'Critical', level: 'error' };
    if (score >= 7) return { label: 'High', level: 'error' };
    if (score >= 4) return { label: 'Medium', level: 'warning' };
    return { label: 'Low', level: 'info' };
  }
  return LEVEL_TAG[finding.level];
}

/** "3 errors, 5 warnings" (levels with none left out; "no findings" when empty). */
export function countPhrase(counts: Record<FindingLevel, number>): string {
  const parts = FINDING_LEVELS.filter((l) => counts[l] > 0).map(
    (l) => `${counts[l]} ${PLURAL[l][counts[l] === 1 ? 0 : 1]}`,
  );
  return parts.length === 0 ? 'no findings' : parts.join(', ');
}

/** Whether findings fail the task under `failOn`. */
export function fails(counts: Record<FindingLevel, number>, failOn: FailOn): boolean {
  if (failOn === 'never') return false;
  const worst = FINDING_LEVELS.indexOf(failOn);
  return FINDING_LEVELS.some((level, i) => i <= worst && counts[level] > 0);
}

/** A stable outcome id: the rule id (cut to fit) and 8 hex digits of what makes the finding this one. */
export function outcomeId(finding: Finding): string {
  const digest = createHash('sha256')
    .update([finding.tool, finding.ruleId, finding.locations.join('\n'), finding.message].join('\0'))
    .digest('hex')
    .slice(0, 8);
  const rule = cutText(finding.ruleId.replace(/\s+/g, '_'), RESULT_LIMITS.outcomeId - 9) || 'finding';
  return `${rule}-${digest}`;
}

/** The outcome's Markdown body: rule and tool, locations, the help, fix hints (cut to the body limit). */
function body(finding: Finding): string {
  const lines = [`**${finding.ruleId}** (${finding.tool})`];
  if (finding.locations.length > 0) {
    lines.push('', '**Locations**', '', ...finding.locations.slice(0, 20).map((l) => `- \`${l}\``));
    if (finding.locations.length > 20) lines.push(`- … and ${finding.locations.length - 20} more`);
  }
  if (finding.help !== undefined && finding.help.trim() !== '') lines.push('', finding.help.trim());
  if (finding.fixes.length > 0) lines.push('', '**Fix**', '', ...finding.fixes.map((f) => `- ${f}`));
  return cutText(lines.join('\n'), RESULT_LIMITS.body);
}

function isWebUrl(text: string | undefined): text is string {
  if (text === undefined || [...text].length > RESULT_LIMITS.url) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** One finding's outcome. */
export function findingOutcome(finding: Finding): Outcome {
  const outcome: Outcome = {
    id: outcomeId(finding),
    // Never empty: the platform refuses an outcome without a description (a rule id and message may both be "").
    description: cutText(
      finding.message.trim() || finding.ruleId.trim() || 'finding',
      RESULT_LIMITS.description,
    ),
    body: body(finding),
    tags: {
      Severity: [severityTag(finding)],
      Status: [
        finding.level === 'error' ? { label: 'Failed', level: 'error' } : { label: 'Open', level: 'none' },
      ],
    },
  };
  if (isWebUrl(finding.helpUri)) outcome.url = finding.helpUri;
  return outcome;
}

/**
 * The task result of a tool run's findings. Most severe first; beyond the platform's limit of outcomes, the
 * rest are counted by level in a last outcome. The message counts every finding and names the tools.
 */
export function findingsResult(
  findings: Finding[],
  options: { failOn: FailOn; tools?: string[] },
): FindingsResult {
  const counts: Record<FindingLevel, number> = { error: 0, warning: 0, note: 0, none: 0 };
  for (const f of findings) counts[f.level]++;
  const tools = options.tools ?? [...new Set(findings.map((f) => f.tool))];
  const failed = fails(counts, options.failOn);
  const ordered = [...findings].sort(
    (a, b) =>
      FINDING_LEVELS.indexOf(a.level) - FINDING_LEVELS.indexOf(b.level) ||
      (b.securitySeverity ?? 0) - (a.securitySeverity ?? 0),
  );
  const max = RESULT_LIMITS.outcomes;
  const shown = ordered.length <= max ? ordered : ordered.slice(0, max - 1);
  const rest = ordered.slice(shown.length);
  const outcomes = shown.map(findingOutcome);
  if (rest.length > 0) {
    const restCounts: Record<FindingLevel, number> = { error: 0, warning: 0, note: 0, none: 0 };
    for (const f of rest) restCounts[f.level]++;
    const worst = FINDING_LEVELS.find((l) => restCounts[l] > 0) ?? 'none';
    outcomes.push({
      id: 'more-findings',
      description: `${rest.length} more findings (${countPhrase(restCounts)}) not listed: the platform shows at most ${max} outcomes`,
      body: [
        `The tools reported ${findings.length} findings; the ${max - 1} most severe are listed above.`,
        '',
        '| level | not listed |',
        '| --- | ---: |',
        ...FINDING_LEVELS.filter((l) => restCounts[l] > 0).map((l) => `| ${l} | ${restCounts[l]} |`),
      ].join('\n'),
      tags: { Severity: [LEVEL_TAG[worst]], Status: [{ label: 'Summary', level: 'info' }] },
    });
  }
  const toolText =
    tools.length === 0 ? '' : tools.length === 1 ? ` in ${tools[0]}` : ` in ${tools.length} tools`;
  const message = cutText(
    `${countPhrase(counts)[0]!.toUpperCase()}${countPhrase(counts).slice(1)}${toolText}` +
      (options.failOn === 'never' ? '' : failed ? ` (fails on ${options.failOn})` : ''),
    RESULT_LIMITS.message,
  );
  return {
    result: { status: failed ? 'failed' : 'passed', message, ...(outcomes.length > 0 ? { outcomes } : {}) },
    counts,
    tools,
    summarised: rest.length,
  };
}
