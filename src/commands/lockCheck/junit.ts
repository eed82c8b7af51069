/**
 * `provider lock check --format junit`: the check as JUnit XML, as CI systems show test reports and as
 * `runtask serve` reads a handler's report (src/runtask/formats/junit.ts): one suite; one failed test case per
 * finding (its class the provider, or the lock file), and one passing case per provider without findings. A
 * control character of an address, which XML 1.0 cannot hold even as a character reference, is written `\u001b`.
 */
import { escapeChar } from '../../ui/output.js';
import type { LockCheckDocument } from './report.js';

const SUITE = 'provider lock check';

/**
 * Escapes text for an XML attribute or element. What XML 1.0 cannot hold (C0 controls, surrogates left alone,
 * U+FFFE, U+FFFF: §2.2) is written `\uXXXX`, and so are tab, line breaks (an attribute would not keep them), DEL
 * and C1, as the text output writes them.
 */
function xml(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Cs}\uFFFE\uFFFF]/gu, escapeChar)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** The JUnit XML of a check, as lines. */
export function lockCheckJunit(document: LockCheckDocument): string[] {
  const cases: string[] = [];
  for (const finding of document.findings) {
    cases.push(
      `    <testcase classname="${xml(finding.provider ?? document.lockFile)}" name="${xml(`${finding.rule}: ${finding.subject}`)}">`,
      `      <failure type="${xml(finding.rule)}" message="${xml(finding.message)}">${xml(finding.hint)}</failure>`,
      '    </testcase>',
    );
  }
  const failing = new Set(document.findings.map((f) => f.provider));
  const passing = document.providers.filter((p) => !failing.has(p.address));
  for (const provider of passing) {
    cases.push(
      `    <testcase classname="${xml(provider.address)}" name="${xml(`${provider.version} (${provider.origin})`)}"/>`,
    );
  }
  const tests = document.findings.length + passing.length;
  const counts = `tests="${tests}" failures="${document.findings.length}" errors="0"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${SUITE}" ${counts}>`,
    `  <testsuite name="${SUITE}" ${counts}>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
  ];
}
