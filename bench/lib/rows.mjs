// One row of the results table, and the table itself (text and JSON).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The fields every row has; `ratio`, `target` and `met` are the kind's. */
function row({ id, figure, ours, baseline = null, baselineLabel = null, unit, details }, judged) {
  return { id, figure, ours, baseline, baselineLabel, unit, ...judged, ...(details ? { details } : {}) };
}

/** A row comparing `ours` with `baseline`: ratio = ours / baseline, met when the ratio is within `limit`. */
export function ratioRow(fields) {
  const { ours, baseline, limit, atLeast = false } = fields;
  const ratio = ours / baseline;
  return row(fields, {
    ratio,
    target: `${atLeast ? '≥' : '≤'} ${limit}`,
    met: atLeast ? ratio >= limit : ratio <= limit,
  });
}

/** A row with an absolute target: met when `ours` is within `limit` (in `unit`). */
export function limitRow(fields) {
  return row(fields, {
    ratio: null,
    target: `≤ ${fields.limit} ${fields.unit}`,
    met: fields.ours <= fields.limit,
  });
}

/** A row shown for information, with no target (it neither meets nor misses one). */
export function infoRow(fields) {
  const { ours, baseline } = fields;
  return row(fields, { ratio: baseline ? ours / baseline : null, target: '—', met: null });
}

function show(value, unit) {
  if (value === null || value === undefined) return '—';
  if (unit === 's') return `${value.toFixed(2)} s`;
  if (unit === 'ms') return `${value.toFixed(value < 100 ? 1 : 0)} ms`;
  if (unit === 'MB') return `${value.toFixed(1)} MB`;
  if (unit === 'req/s') return `${value.toFixed(0)} req/s`;
  return `${Math.round(value * 100) / 100} ${unit}`;
}

/** The ratio to 2 decimals, or 3 when 2 would round a miss onto its target ("1.15, ≤ 1.15, NO"). */
function showRatio(r) {
  if (r.ratio === null) return '—';
  const limit = Number(r.target.split(' ')[1]);
  const two = r.ratio.toFixed(2);
  return r.met === false && Number(two) === limit ? r.ratio.toFixed(3) : two;
}

/** The table as text: figure, ours, baseline, ratio, target, met. */
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
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}

/** Writes the results document to bench/results/<name>.json. */
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
