/**
 * Tables for the read commands. On a terminal: a header and columns aligned with two spaces between them.
 * Otherwise (pipes, CI logs): one plain row per line, fields separated by a tab and no header, so `cut -f`
 * and `awk -F'\t'` read them (the way `gh` prints lists when stdout is not a terminal).
 */
import type { Output } from './output.js';

/** How to lay a table out. */
export interface TableOptions {
  /** Aligned with a header (a terminal) or tab-separated rows without one. */
  aligned: boolean;
  /** Indexes of columns to align right (numbers, sizes). */
  alignRight?: number[];
}

/** The table's lines, without trailing spaces. */
export function renderTable(headers: string[], rows: string[][], options: TableOptions): string[] {
  if (!options.aligned) return rows.map((row) => row.join('\t'));
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((row) => width(row[i] ?? ''))));
  const right = new Set(options.alignRight ?? []);
  return all.map((row) =>
    headers
      .map((_, i) => {
        const cell = row[i] ?? '';
        const pad = ' '.repeat(widths[i]! - width(cell));
        return right.has(i) ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd(),
  );
}

/** Prints a table as results: aligned when the output is interactive, plain rows otherwise. */
export function printTable(output: Output, headers: string[], rows: string[][], alignRight?: number[]): void {
  const aligned = output.interactive;
  const lines = renderTable(headers, rows, { aligned, ...(alignRight ? { alignRight } : {}) });
  lines.forEach((line, i) => output.result(aligned && i === 0 ? output.color.bold(line) : line));
}

/** Prints `label  value` lines with the labels padded to one width (the `show` commands). */
export function printFacts(output: Output, facts: [string, string][]): void {
  const labelWidth = Math.max(...facts.map(([label]) => label.length));
  for (const [label, value] of facts) output.result(`${label.padEnd(labelWidth)}  ${value}`.trimEnd());
}

/** Display width of a cell: code points (the cells here are ASCII names, hashes, dates). */
function width(text: string): number {
  return [...text].length;
}
