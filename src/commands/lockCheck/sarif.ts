/**
 * `provider lock check --format sarif`: the findings as a SARIF 2.1.0 log (one run, the tool's rules being the
 * check's kinds of findings), as GitHub code scanning uploads it and as `runtask serve` reads a handler's report
 * (src/runtask/formats/sarif.ts): every result an `error` located at its provider's block in the lock file (the
 * file itself for a missing one), its message the finding's with its hint, and the provider, version and
 * subject as properties. Its rules carry what GitHub code scanning requires (a full description and help), and
 * the driver the program's version.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { LOCK_RULES, type LockRule } from '../../lockfile/audit.js';
import type { LockCheckDocument } from './report.js';
import { plainText, RULE_TEXTS, ruleName } from './rules.js';

/** Where the SARIF log says its rules are explained. */
const HELP_URI = 'https://github.com/provider-cli/provider/blob/main/docs/supply-chain.md';

const RULE_IDS = Object.keys(LOCK_RULES) as LockRule[];

/** The SARIF 2.1.0 log of a check; `version` is the program's. */
export function lockCheckSarif(document: LockCheckDocument, version: string): Record<string, unknown> {
  const uri = artifactUri(document.lockFile);
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'provider lock check',
            version,
            informationUri: HELP_URI,
            rules: RULE_IDS.map((id) => ({
              id,
              name: ruleName(id),
              shortDescription: { text: LOCK_RULES[id] },
              fullDescription: { text: RULE_TEXTS[id].fullDescription },
              help: { text: plainText(RULE_TEXTS[id].help), markdown: RULE_TEXTS[id].help },
              helpUri: `${HELP_URI}#${id}`,
              defaultConfiguration: { level: 'error' },
            })),
          },
        },
        results: document.findings.map((finding) => ({
          ruleId: finding.rule,
          ruleIndex: RULE_IDS.indexOf(finding.rule),
          level: 'error',
          message: { text: `${finding.message}. ${finding.hint}` },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri },
                ...(finding.line === null ? {} : { region: { startLine: finding.line } }),
              },
            },
          ],
          partialFingerprints: {
            lockFinding: [finding.rule, finding.provider ?? '', finding.subject].join('|'),
          },
          properties: {
            provider: finding.provider,
            version: finding.version,
            subject: finding.subject,
          },
        })),
      },
    ],
  };
}

/**
 * The lock file as a SARIF artifact URI: a relative path stays relative (code scanning takes it from the
 * repository's root), each segment percent-encoded; an absolute one is a `file:` URL, as a relative reference may
 * not begin with a slash (the SARIF Multitool's SARIF1004).
 */
function artifactUri(file: string): string {
  if (path.isAbsolute(file)) return pathToFileURL(file).href;
  const segments = file
    .replace(/\\/g, '/')
    .replace(/^(\.\/)+/, '')
    .split('/');
  return segments.map((segment) => encodeURIComponent(segment)).join('/');
}
