/**
 * A scanner's or test runner's report, whichever it is: SARIF 2.1.0 (a JSON object with `runs`) or JUnit XML (a
 * document starting with `<`), told apart by their first bytes unless the format is given, read into findings.
 */
import { findingsResult, type FailOn, type FindingsResult } from './findings.js';
import { JunitError, readJunit } from './junit.js';
import { SarifError, readSarif } from './sarif.js';

/** The formats a report may have. */
export const REPORT_FORMATS = ['sarif', 'junit'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** `--fail-on` values, from the most to the least severe, then never. */
export const FAIL_ON = ['error', 'warning', 'note', 'never'] as const;

/** A report that cannot be read: the format it was taken for and why. */
export class ReportError extends Error {
  constructor(
    readonly format: ReportFormat,
    message: string,
  ) {
    super(message);
  }
}

/** A report's format as told from its first bytes, and the parsed SARIF document when it was whole JSON. */
export interface DetectedReport {
  format: ReportFormat;
  /** The SARIF document, parsed once here and not again by `reportResult`. */
  parsed?: unknown;
}

/**
 * The format a text looks like, or undefined when it is neither (a JSON result or outcomes, plain text). SARIF: a
 * JSON object with `runs` and `version` 2.1.0 — or text that starts like one without being JSON (cut off, or
 * followed by a tool's banner), so that it fails as an unreadable report instead of passing on an exit code 0.
 * JUnit: an XML declaration or a `<testsuites>`/`<testsuite>` element first.
 */
export function detectReport(text: string): DetectedReport | undefined {
  const start = text.trimStart().replace(/^\uFEFF/, '');
  if (/^<(\?xml\b|testsuites\b|testsuite\b)/.test(start)) return { format: 'junit' };
  if (!start.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(start) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    return 'runs' in value && (value as { version?: unknown }).version === '2.1.0'
      ? { format: 'sarif', parsed: value }
      : undefined;
  } catch {
    const head = start.slice(0, 4096);
    return /"runs"\s*:/.test(head) && /"version"\s*:\s*"2\.1\.0"|"\$schema"\s*:\s*"[^"]*sarif/i.test(head)
      ? { format: 'sarif' }
      : undefined;
  }
}

/** The format alone (see `detectReport`). */
export function detectReportFormat(text: string): ReportFormat | undefined {
  return detectReport(text)?.format;
}

/**
 * Reads a report of `format` into a task result; rejects with ReportError saying what is wrong. `parsed` is the
 * SARIF document when `detectReport` already parsed it (an 8 MiB report is not parsed twice). A SARIF report is
 * read a piece at a time, letting the event loop turn (./sarif.ts).
 */
export async function reportResult(
  text: string,
  format: ReportFormat,
  failOn: FailOn,
  parsed?: unknown,
): Promise<FindingsResult & { format: ReportFormat }> {
  const what = format === 'sarif' ? 'SARIF 2.1.0' : 'JUnit XML';
  try {
    if (format === 'junit') {
      const junit = readJunit(text);
      return { ...findingsResult(junit.findings, { failOn, tools: junit.suites }), format };
    }
    let doc = parsed;
    if (doc === undefined) {
      try {
        doc = JSON.parse(text);
      } catch (error) {
        throw new SarifError(`the SARIF report is not JSON: ${(error as Error).message}`);
      }
    }
    const sarif = await readSarif(doc);
    return { ...findingsResult(sarif.findings, { failOn, tools: sarif.tools }), format };
  } catch (error) {
    if (error instanceof SarifError || error instanceof JunitError) {
      const message = error.message.startsWith('the ')
        ? error.message
        : `the ${what} report: ${error.message}`;
      throw new ReportError(format, message);
    }
    // Whatever else an untrusted document makes a library throw (a stack overflow on deep nesting, say) is a
    // report that cannot be read, never a crash of the command or the integrator.
    throw new ReportError(format, `the ${what} report cannot be read: ${(error as Error).message}`);
  }
}
