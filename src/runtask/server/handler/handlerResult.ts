/**
 * Turning what the handler did into a task result. A JSON object on stdout (the whole of it, or its last line
 * when that line is an object with a `status`) decides; otherwise exit code 0 means passed, anything else
 * failed, and the last line printed is the message. A result that cannot be read fails the task: a checker
 * that cannot say what it found must not let the run through.
 */
import type { HandlerExit } from './handler.js';
import { checkTaskResult, type ResultProblem, type TaskResult } from '../../../terraform/runtask/payload.js';
import type { FailOn } from '../../formats/findings.js';
import { ReportError, detectReport, reportResult, type ReportFormat } from '../../formats/report.js';

/**
 * `--result-format`: how a handler's output is read. `auto` (the default) takes a SARIF or JUnit report when the
 * output is one (a JSON object with `runs`, a document starting with `<`), else a JSON result, else the exit code.
 */
export const RESULT_FORMATS = ['auto', 'json', 'exit-code', 'sarif', 'junit'] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

/** How to read a handler's output. */
export interface ResultReading {
  format: ResultFormat;
  /** With a report: the least severe level that fails the task. */
  failOn: FailOn;
}

const DEFAULT_READING: ResultReading = { format: 'auto', failOn: 'error' };

const REPORT_NAME: Record<ReportFormat, string> = { sarif: 'SARIF 2.1.0', junit: 'JUnit XML' };

/** The result and how it was read (for the log). */
export interface InterpretedResult {
  result: TaskResult;
  source:
    | 'json'
    | 'exit-code'
    | 'sarif'
    | 'junit'
    | 'timeout'
    | 'aborted'
    | 'spawn-error'
    | 'plan-error'
    | 'configuration-error'
    | 'invalid-json'
    | 'invalid-report';
  /** Over-the-limit problems left for trimming. */
  limits: ResultProblem[];
}

function asObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The handler's JSON result, if it printed one. */
export function findJsonResult(stdout: string): Record<string, unknown> | undefined {
  const whole = stdout.trim();
  if (whole.startsWith('{')) {
    const value = asObject(whole);
    if (value !== undefined) return value;
  }
  const last = lastLine(stdout);
  if (last?.startsWith('{')) {
    const value = asObject(last);
    if (value !== undefined && 'status' in value) return value;
  }
  return undefined;
}

/** The last non-empty line of a text. */
export function lastLine(text: string): string | undefined {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]) return lines[i];
  return undefined;
}

function ending(exit: HandlerExit): string {
  if (exit.exitCode !== null) return `exit code ${exit.exitCode}`;
  return `killed by ${exit.signal ?? 'a signal'}`;
}

/** A scanner's report as the result: its findings as outcomes, `failOn` deciding; an unreadable one fails. */
async function fromReport(
  stdout: string,
  format: ReportFormat,
  failOn: FailOn,
  parsed?: unknown,
): Promise<InterpretedResult> {
  try {
    const { result } = await reportResult(stdout, format, failOn, parsed);
    // Made to fit the documented limits; checked all the same, as a handler's JSON result is.
    const checked = checkTaskResult(result, ['passed', 'failed']);
    if (checked.result === undefined) {
      const problem = checked.problems[0];
      return {
        result: {
          status: 'failed',
          message: `The check's ${REPORT_NAME[format]} report gave a result that cannot be sent (${problem?.path ?? 'result'} ${problem?.message ?? 'is invalid'}).`,
        },
        source: 'invalid-report',
        limits: [],
      };
    }
    return { result: checked.result, source: format, limits: checked.problems };
  } catch (error) {
    if (!(error instanceof ReportError)) throw error;
    const reason = error.message.replace(/^the (SARIF 2\.1\.0|JUnit XML|SARIF|JUnit) report:? ?/, '');
    return {
      result: {
        status: 'failed',
        message: `The check's ${REPORT_NAME[format]} report cannot be used: ${reason}`.slice(0, 1000),
      },
      source: 'invalid-report',
      limits: [],
    };
  }
}

/**
 * Reads the result of a handler run; `timeoutText` is the configured timeout, for the message; `reading` says
 * how its output is taken (`--result-format`, `--fail-on`). Asynchronous: a report is read a piece at a time,
 * so that the integrator keeps serving meanwhile.
 */
export async function interpretHandlerExit(
  exit: HandlerExit,
  timeoutText: string,
  reading: ResultReading = DEFAULT_READING,
): Promise<InterpretedResult> {
  if (exit.spawnError !== undefined) {
    return {
      result: { status: 'failed', message: `The check could not be started: ${exit.spawnError}` },
      source: 'spawn-error',
      limits: [],
    };
  }
  if (exit.aborted) {
    return { result: { status: 'failed', message: 'The check was stopped.' }, source: 'aborted', limits: [] };
  }
  if (exit.timedOut) {
    return {
      result: {
        status: 'failed',
        message: `The check did not finish within ${timeoutText} and was stopped.`,
      },
      source: 'timeout',
      limits: [],
    };
  }
  const structured = reading.format !== 'auto' || /^\s*[{<]/.test(exit.stdout);
  if (exit.stdoutTruncated && reading.format !== 'exit-code' && structured) {
    // Cut at the output limit, a report or JSON result is no longer what the check said: never pass on it. (Plain
    // text over the limit is read by its exit code, as before.)
    return {
      result: {
        status: 'failed',
        message: `The check printed more than the integrator reads (8 MiB), so its result cannot be used (${ending(exit)}).`,
      },
      source: 'invalid-report',
      limits: [],
    };
  }
  const detected = reading.format === 'auto' ? detectReport(exit.stdout) : undefined;
  const report = reading.format === 'sarif' || reading.format === 'junit' ? reading.format : detected?.format;
  if (report !== undefined) return await fromReport(exit.stdout, report, reading.failOn, detected?.parsed);
  const json = reading.format === 'exit-code' ? undefined : findJsonResult(exit.stdout);
  if (reading.format === 'json' && json === undefined) {
    return {
      result: { status: 'failed', message: `The check printed no JSON result (${ending(exit)}).` },
      source: 'invalid-json',
      limits: [],
    };
  }
  if (json !== undefined) {
    const checked = checkTaskResult(json, ['passed', 'failed']);
    if (checked.result !== undefined) {
      return { result: checked.result, source: 'json', limits: checked.problems };
    }
    const problems = checked.problems
      .filter((p) => p.kind === 'invalid')
      .slice(0, 3)
      .map((p) => `${p.path || 'result'} ${p.message}`)
      .join('; ');
    return {
      result: { status: 'failed', message: `The check printed a result that cannot be used (${problems}).` },
      source: 'invalid-json',
      limits: [],
    };
  }
  const passed = exit.exitCode === 0;
  const said = lastLine(exit.stdout) ?? lastLine(exit.stderrTail);
  const message = said ?? (passed ? 'The check passed.' : `The check failed (${ending(exit)}).`);
  return { result: { status: passed ? 'passed' : 'failed', message }, source: 'exit-code', limits: [] };
}
