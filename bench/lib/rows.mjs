// One row of the results table, and the table itself (text and JSON).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { median } from './proc.mjs';

/**
 * What a figure says about one measure.
 * @typedef {object} RowFields
 * @property {string} id
 * @property {string} figure the row's label in the table
 * @property {number} ours
 * @property {number | null} [baseline]
 * @property {string | null} [baselineLabel]
 * @property {string} unit
 * @property {unknown} [details] anything worth keeping in the JSON
 */

/**
 * How a row is judged against its target.
 * @typedef {object} Judgement
 * @property {number | null} ratio
 * @property {string} target
 * @property {boolean | null} met null for a row shown for information
 */

/**
 * One row of the results table.
 * @typedef {{ id: string, figure: string, ours: number, baseline: number | null, baselineLabel: string | null, unit: string, details?: unknown } & Judgement} Row
 */

/**
 * The fields every row has; `ratio`, `target` and `met` are the kind's.
 * @param {RowFields} fields
 * @param {Judgement} judged
 * @returns {Row}
 */
function row({ id, figure, ours, baseline = null, baselineLabel = null, unit, details }, judged) {
  return { id, figure, ours, baseline, baselineLabel, unit, ...judged, ...(details ? { details } : {}) };
}

/**
 * A row comparing `ours` with `baseline`: ratio = ours / baseline, met when the ratio is within `limit`.
 * @param {RowFields & { baseline: number, limit: number, atLeast?: boolean }} fields
 */
export function ratioRow(fields) {
  const { ours, baseline, limit, atLeast = false } = fields;
  const ratio = ours / baseline;
  return row(fields, {
    ratio,
    target: `${atLeast ? '≥' : '≤'} ${limit}`,
    met: atLeast ? ratio >= limit : ratio <= limit,
  });
}

/**
 * A row with an absolute target: met when `ours` is within `limit` (in `unit`).
 * @param {RowFields & { limit: number }} fields
 */
export function limitRow(fields) {
  return row(fields, {
    ratio: null,
    target: `≤ ${fields.limit} ${fields.unit}`,
    met: fields.ours <= fields.limit,
  });
}

/**
 * A row shown for information, with no target (it neither meets nor misses one).
 * @param {RowFields} fields
 */
export function infoRow(fields) {
  const { ours, baseline } = fields;
  return row(fields, { ratio: baseline ? ours / baseline : null, target: '—', met: null });
}

/**
 * The runs of one side of a side-by-side comparison of whole processes: wall time, CPU time (ms) and peak RSS (MB)
 * of each run.
 * @typedef {{ ms: number[], cpuMs: number[], peakMB: number[] }} SideRuns
 */

/**
 * A baseline's measure from its sides' runs: one side's median, or, for a baseline made of several processes run
 * one after another (`[bare, verify]`), the sum of their medians (wall and CPU time) or the largest median (peak
 * RSS: the processes never run at once). Sums of medians, not medians of per-run sums: each term is then the
 * median of its own process's runs, as `ours` is, and the pairing of the i-th run of one with the i-th of the
 * other, which share nothing, does not enter the figure.
 * @param {SideRuns | SideRuns[]} baseline
 * @param {'ms' | 'cpuMs' | 'peakMB'} key
 * @param {'sum' | 'max'} [wall] `max`: the wall time of several processes is the largest median (the floor of a
 *   program that does their work at once), not their sum
 */
function baselineMeasure(baseline, key, wall = 'sum') {
  const sides = Array.isArray(baseline) ? baseline : [baseline];
  const medians = sides.map((side) => median(side[key]));
  const largest = key === 'peakMB' || (key === 'ms' && wall === 'max');
  return largest ? Math.max(...medians) : medians.reduce((a, b) => a + b, 0);
}

/**
 * The three rows of a side-by-side run of whole processes: wall time (a ratio with a target), CPU time (user +
 * system, a ratio with a target) and peak RSS (for information), each the median of the runs of each side; a
 * baseline of several processes counts as `baselineMeasure` says.
 * @param {{ id: string, cpuId?: string, figure: string, baselineLabel: string, cpuLabel?: string,
 *   wallLimit: number | null, cpuLimit: number | null, ours: SideRuns, baseline: SideRuns | SideRuns[],
 *   wall?: 'sum' | 'max', details?: unknown }} fields `id` is the wall row's; the
 *   others append `.cpu` and `.rss` to `cpuId` (default `id`). `wall` says how a baseline of several processes
 *   counts for wall time (`baselineMeasure`), `cpuLabel` names the CPU row's baseline when it differs; a limit of
 *   null makes its row one for information.
 * @returns {Row[]}
 */
export function processRows({
  id,
  cpuId = id,
  figure,
  baselineLabel,
  cpuLabel = baselineLabel,
  wallLimit,
  cpuLimit,
  ours,
  baseline,
  wall = 'sum',
  details,
}) {
  const common = { baselineLabel, unit: 's' };
  /** @param {RowFields & { baseline: number }} fields @param {number | null} limit */
  const judged = (fields, limit) => (limit === null ? infoRow(fields) : ratioRow({ ...fields, limit }));
  return [
    judged(
      {
        ...common,
        id,
        figure,
        ours: median(ours.ms) / 1000,
        baseline: baselineMeasure(baseline, 'ms', wall) / 1000,
        details,
      },
      wallLimit,
    ),
    judged(
      {
        ...common,
        baselineLabel: cpuLabel,
        id: `${cpuId}.cpu`,
        figure: '  the same, CPU time (user + system)',
        ours: median(ours.cpuMs) / 1000,
        baseline: baselineMeasure(baseline, 'cpuMs') / 1000,
      },
      cpuLimit,
    ),
    infoRow({
      ...common,
      id: `${cpuId}.rss`,
      figure: '  the same, peak RSS',
      ours: median(ours.peakMB),
      baseline: baselineMeasure(baseline, 'peakMB'),
      unit: 'MB',
    }),
  ];
}

/**
 * A measure in its unit, for the table.
 * @param {number | null | undefined} value
 * @param {string} unit
 */
function show(value, unit) {
  if (value === null || value === undefined) return '—';
  if (unit === 's') return `${value.toFixed(2)} s`;
  if (unit === 'ms') return `${value.toFixed(value < 100 ? 1 : 0)} ms`;
  if (unit === 'MB') return `${value.toFixed(1)} MB`;
  if (unit === 'req/s') return `${value.toFixed(0)} req/s`;
  return `${Math.round(value * 100) / 100} ${unit}`;
}

/**
 * The ratio to 2 decimals, or 3 when 2 would round a miss onto its target ("1.15, ≤ 1.15, NO").
 * @param {Row} r
 */
function showRatio(r) {
  if (r.ratio === null) return '—';
  const limit = Number(r.target.split(' ')[1]);
  const two = r.ratio.toFixed(2);
  return r.met === false && Number(two) === limit ? r.ratio.toFixed(3) : two;
}

/**
 * The table as text: figure, ours, baseline, ratio, target, met.
 * @param {Row[]} rows
 */
export function renderTable(rows) {
  const header = ['figure', 'ours', 'baseline', 'ratio', 'target', 'met'];
  const lines = rows.map((r) => [
    r.figure,
    show(r.ours, r.unit),
    r.baseline === null
      ? '—'
      : `${show(r.baseline, r.unit)}${r.baselineLabel ? ` (${r.baselineLabel})` : ''}`,
    showRatio(r),
    r.target,
    r.met === null ? '—' : r.met ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (/** @type {string[]} */ cells) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}

/**
 * Writes the results document to bench/results/<name>.json.
 * @param {string} dir
 * @param {string} name
 * @param {unknown} doc
 */
export function writeResults(dir, name, doc) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(doc, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
  return file;
}

/** The machine the figures were measured on. */
export function machine() {
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
  };
}
