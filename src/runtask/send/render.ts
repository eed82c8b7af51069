/**
 * How a session reads: one timeline line per event (time since start, what, the platform's answer, and a
 * VIOLATION line under each broken rule), then the verdict; or, with `--json`, one report document: result,
 * each request attempt, each callback, each download, each request to a path the local platform does not serve,
 * each violation and warning, why the request was not accepted, the timeout.
 */
import type { ChalkInstance } from 'chalk';
import { toErrorDocument } from '../../errors.js';
import { NOT_ACCEPTED_CONSEQUENCE } from './acceptance.js';
import type { SendEvent } from './events.js';
import type { SessionRecord } from './session.js';
import type { Verdict } from './verdict.js';

const WHAT: Record<string, string> = {
  'plan-json': 'plan JSON',
  'configuration-version': 'configuration version',
  blob: 'blob',
};

function quote(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, ' ');
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

function describe(
  event: SendEvent,
  windows: { progressWindow: string; maxDuration: string },
): [string, string] {
  switch (event.kind) {
    case 'platform':
      return event.verification
        ? ['platform', `listening on ${event.url}; sending the verification request`]
        : [
            'platform',
            `listening on ${event.url}; task result ${event.taskResultId} (${event.stage}, ${event.enforcement}, outcomes ${event.outcomesOffered ? 'offered' : 'not offered'})`,
          ];
    case 'request':
      return [
        'request',
        `POST ${event.url}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}: ${event.bytes} bytes, ${event.signed ? 'signed' : 'unsigned (empty X-TFC-Task-Signature)'}`,
      ];
    case 'answer':
      return event.http === undefined
        ? ['answer', `no answer after ${event.ms}ms: ${event.error}`]
        : [
            'answer',
            `${event.http} after ${event.ms}ms${event.detail ? `: ${quote(event.detail, 300)}` : ''}`,
          ];
    case 'retry':
      return ['retry', `in ${event.delayMs}ms`];
    case 'gave-up': {
      const once = event.request === 'verification' ? ' (the verification request is sent once)' : '';
      const attempts = `${event.attempts} attempt${event.attempts > 1 ? 's' : ''}`;
      return ['gave up', `after ${attempts}${once}: ${NOT_ACCEPTED_CONSEQUENCE[event.request]}`];
    }
    case 'callback': {
      const parts = [`${event.method} → ${event.http}`, event.status ?? '(no status)'];
      if (event.message !== undefined) parts.push(quote(event.message));
      if (event.outcomes > 0) parts.push(`(${event.outcomes} outcome${event.outcomes > 1 ? 's' : ''})`);
      return ['callback', parts.join('  ')];
    }
    case 'download': {
      const what =
        event.what === 'blob' && event.detail
          ? `blob (${WHAT[event.detail] ?? event.detail})`
          : WHAT[event.what];
      const extra =
        event.bytes !== undefined
          ? `, ${event.bytes} bytes`
          : event.detail && event.http !== 200
            ? `: ${event.detail}`
            : '';
      return ['download', `GET ${what} → ${event.http}${extra}`];
    }
    case 'unserved':
      return [
        'unserved',
        `${event.method} ${event.path} → ${event.http}: not a path the local platform serves (it serves the callback, the plan JSON, the configuration version and /api/v2/ping); a real platform may answer it`,
      ];
    case 'timeout':
      return event.window === 'progress-window'
        ? ['timeout', `no progress update within ${windows.progressWindow}: the task result is errored`]
        : ['timeout', `not final after ${windows.maxDuration}: the task result is errored`];
    case 'warning':
      return ['warning', event.message];
  }
}

/** The timeline lines of one event (the event, then one line per violation). */
export function timelineLines(
  event: SendEvent,
  startedAt: number,
  windows: { progressWindow: string; maxDuration: string },
  color: ChalkInstance,
): string[] {
  const time = `+${((event.at - startedAt) / 1000).toFixed(3)}s`.padStart(9);
  const [label, text] = describe(event, windows);
  const tint =
    event.kind === 'warning' || event.kind === 'unserved'
      ? color.yellow
      : event.kind === 'timeout'
        ? color.red
        : (s: string) => s;
  const lines = [`${color.dim(time)}  ${tint(label.padEnd(9))}  ${text}`];
  if ('violations' in event) {
    for (const v of event.violations) lines.push(`${' '.repeat(9)}  ${color.red('VIOLATION')}  ${v.message}`);
  }
  return lines;
}

/** The closing lines: the result, then the verdict. */
export function verdictLines(record: SessionRecord, verdict: Verdict, color: ChalkInstance): string[] {
  const time = `+${((record.endedAt - record.startedAt) / 1000).toFixed(3)}s`.padStart(9);
  const good = verdict.exitCode === 0;
  return [
    `${color.dim(time)}  ${'result'.padEnd(9)}  ${verdict.result}`,
    (good ? color.green : color.red)(verdict.summary),
  ];
}

/** The `--json` report. */
export function reportDocument(
  record: SessionRecord,
  verdict: Verdict,
  integratorUrl: string,
): Record<string, unknown> {
  const rel = (at: number): number => at - record.startedAt;
  const { events } = record;
  // The events of one kind as the report lists them: `at` from the start, then `fields` (an absent one is null).
  const listed = <K extends SendEvent['kind']>(
    kind: K,
    ...fields: (keyof Extract<SendEvent, { kind: K }>)[]
  ): Record<string, unknown>[] =>
    events
      .filter((e): e is Extract<SendEvent, { kind: K }> => e.kind === kind)
      .map((e) => ({
        at: rel(e.at),
        ...Object.fromEntries(fields.map((f): [PropertyKey, unknown] => [f, e[f] ?? null])),
      }));
  const doc: Record<string, unknown> = {
    ok: verdict.exitCode === 0,
    result: verdict.result,
    expected: verdict.expected ?? null,
    exitCode: verdict.exitCode,
    summary: verdict.summary,
    integrator: integratorUrl,
    platform: record.platformUrl,
    verification: record.issued.kind === 'verification',
    stage: record.issued.stage,
    enforcement: record.issued.enforcement,
    outcomesOffered: record.issued.outcomesOffered,
    taskResultId: record.issued.taskResultId,
    request: {
      bytes: record.bytes,
      signed: record.signed,
      accepted: record.accepted,
      attempts: listed('answer', 'http', 'error', 'ms', 'detail'),
    },
    callbacks: listed('callback', 'method', 'http', 'status', 'message', 'url', 'outcomes', 'violations'),
    downloads: listed('download', 'what', 'http', 'bytes', 'detail'),
    unserved: listed('unserved', 'method', 'path', 'http'),
    violations: verdict.violations.map((v) => ({ at: rel(v.at), rule: v.rule, message: v.message })),
    notAccepted: verdict.notAccepted ?? null,
    warnings: listed('warning', 'message'),
    timeout: verdict.timeout ?? null,
    durationMs: record.endedAt - record.startedAt,
  };
  if (verdict.error !== undefined) doc.error = toErrorDocument(verdict.error);
  return doc;
}
