#!/usr/bin/env node
// Writes the documentation's figures from runs of the code, never by hand. Each marked region
// (`<!-- figures:NAME -->…<!-- /figures -->`) of the pages in `documents` below is rendered from a results file:
//   test, demo (README.md)         bench/results/tests.json, demo.json: the last `npm test` and `npm run demo`
//                                  (written by `.ci/run` through --from-report and --from-demo, only when what
//                                  they show changed: `testsChanged`, `demoChanged`)
//   reliability, suites (docs/reliability.md)   bench/results/tests.json
//   bench, bench-large (docs/performance.md)    bench/results/latest.json, latest-large.json: the last
//                                  `npm run bench` and `npm run bench -- --large`
// Usage:
//   node scripts/readme-figures.mjs                                  rewrite the regions from the results
//   node scripts/readme-figures.mjs --check                          exit 1 when a page differs from them
//   node scripts/readme-figures.mjs --from-report <vitest.json> --wall-ms <n> [--command <what ran>]
//                                                                    summarise a vitest JSON report first
//   node scripts/readme-figures.mjs --from-demo <output of npm run demo>   keep the demo's result lines first
// test/readme-figures.test.ts checks that the committed pages are what this renders, so a hand edit fails.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderTable } from '../bench/lib/rows.mjs';

/**
 * The machine a result was measured on, as far as the README says.
 * @typedef {object} Machine
 * @property {string} node e.g. `v20.19.0`
 * @property {string} platform e.g. `linux 6.8.0`
 * @property {number} cpus
 * @property {string} cpu the model
 * @property {number} [load] the load average, when it was above the core count
 */

/**
 * The part of a vitest JSON report (`--reporter=json`) read here.
 * @typedef {object} VitestReport
 * @property {number} startTime ms since the epoch
 * @property {number} numTotalTests
 * @property {number} numPassedTests
 * @property {number} numFailedTests
 * @property {{ name: string, startTime: number, endTime: number }[]} testResults one per file
 */

/** @typedef {ReturnType<typeof summariseReport>} TestsSummary bench/results/tests.json */
/** @typedef {ReturnType<typeof summariseDemo>} DemoSummary bench/results/demo.json */

/**
 * A results document of `npm run bench` (bench/run.mjs), the part read here.
 * @typedef {{ date: string, durationS: number, machine: Machine, rows: import('../bench/lib/rows.mjs').Row[] }} BenchResults
 */

const root = fileURLToPath(new URL('..', import.meta.url));
/** The pages holding figures regions, relative to the repository's root. */
export const documents = ['README.md', 'docs/reliability.md', 'docs/performance.md'];

/** @type {Record<'tests' | 'bench' | 'large' | 'demo', URL>} */
const files = {
  tests: new URL('../bench/results/tests.json', import.meta.url),
  bench: new URL('../bench/results/latest.json', import.meta.url),
  large: new URL('../bench/results/latest-large.json', import.meta.url),
  demo: new URL('../bench/results/demo.json', import.meta.url),
};

/**
 * The summary kept of a vitest JSON report: counts, wall time, the reliability suites' durations.
 * @param {VitestReport} report
 * @param {number} wallMs
 * @param {Machine} machine
 * @param {string} command
 */
export function summariseReport(report, wallMs, machine, command) {
  /** @type {Record<string, number>} seconds by file */
  const suites = {};
  for (const file of report.testResults) {
    const name = relative(root, file.name);
    if (name.startsWith('test/reliability/'))
      suites[name] = Math.round((file.endTime - file.startTime) / 100) / 10;
  }
  return {
    date: new Date(report.startTime).toISOString().slice(0, 10),
    command,
    machine,
    wallS: Math.round(wallMs / 1000),
    files: report.testResults.length,
    tests: report.numTotalTests,
    passed: report.numPassedTests,
    failed: report.numFailedTests,
    reliabilityS: Object.values(suites).reduce((a, b) => a + b, 0),
    suites,
  };
}

/**
 * The lines of `npm run demo`'s output the README quotes: the two results, what terraform init sees, the writes.
 * @param {string} text
 * @param {Machine} machine
 */
export function summariseDemo(text, machine) {
  // eslint-disable-next-line no-control-regex -- colour codes are what is removed
  const lines = text.replace(/\u001b\[[0-9;]*m/g, '').split('\n');
  const published = lines.filter((line) => / published: /.test(line));
  const seen = lines.findIndex((line) => line.startsWith('== what terraform init sees'));
  const writes = lines.find((line) => /write requests? in total/.test(line));
  if (published.length !== 2 || seen < 0 || writes === undefined)
    throw new Error('the demo output lacks its result lines: did npm run demo succeed?');
  return {
    date: new Date().toISOString().slice(0, 10),
    machine,
    first: published[0],
    seen: lines.slice(seen, seen + 2),
    second: published[1],
    writes,
  };
}

/**
 * Whether a new test summary shows something the committed one does not: other counts, another command, or a
 * wall time off by more than a quarter. A run that only repeats the committed figures leaves them (and their
 * date) alone, so that no commit only refreshes figures.
 * @param {unknown} before the committed summary (anything, when there is none)
 * @param {TestsSummary} after
 */
export function testsChanged(before, after) {
  const old = /** @type {Partial<TestsSummary>} */ (before ?? {});
  if (old.command !== after.command || old.files !== after.files || old.tests !== after.tests) return true;
  if (old.passed !== after.passed || old.failed !== after.failed) return true;
  if (typeof old.wallS !== 'number' || old.wallS <= 0) return true;
  return Math.abs(after.wallS - old.wallS) / old.wallS > 0.25;
}

/**
 * Whether the demo's quoted lines changed: their date, machine and durations alone do not count.
 * @param {unknown} before
 * @param {DemoSummary} after
 */
export function demoChanged(before, after) {
  const old = /** @type {Partial<DemoSummary>} */ (before ?? {});
  const shown = (/** @type {Partial<DemoSummary>} */ d) =>
    JSON.stringify([d.first, d.seen, d.second, d.writes]).replace(/\bin \d+(\.\d+)?(ms|s)\b/g, 'in …');
  return shown(old) !== shown(after);
}

/**
 * A duration as the README writes it: `42 s`, `3 min 05 s`.
 * @param {number} seconds
 */
function minutes(seconds) {
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/**
 * The machine in words: `2 cores (model), Node 20.19.0, Linux`.
 * @param {Machine} m
 */
function machineText(m) {
  return `${m.cpus} cores (${m.cpu}), Node ${m.node.replace(/^v/, '')}, ${m.platform.split(' ')[0] === 'linux' ? 'Linux' : m.platform}`;
}

/**
 * The text of each region, from the results.
 * @param {TestsSummary} tests
 * @param {BenchResults} bench
 * @param {BenchResults} large
 * @param {DemoSummary} demo
 * @returns {Record<string, string>}
 */
export function renderRegions(tests, bench, large, demo) {
  return {
    demo:
      `From the last \`npm run demo\` (${demo.date}, ${machineText(demo.machine)}` +
      `${demo.machine.load ? `, load average ${demo.machine.load}: the machine was shared` : ''}):\n\n` +
      ['```text', demo.first, '…', ...demo.seen, '…', demo.second, demo.writes, '```'].join('\n'),
    test:
      `\`${tests.command}\`, last run ${tests.date} on ${machineText(tests.machine)}` +
      `${tests.machine.load ? ` (load average ${tests.machine.load} at its end: the machine was shared)` : ''}: ` +
      `${tests.tests} tests in ${tests.files} files, ${tests.passed} passed, ${tests.failed} failed, ` +
      `in ${minutes(tests.wallS)}.`,
    reliability:
      `${Object.keys(tests.suites).length} files; in the last \`${tests.command}\` (${tests.date}, ${tests.machine.cpus} cores) ` +
      `they took ${minutes(tests.reliabilityS)}, summed per file, running beside the others`,
    suites:
      `Wall time of each file in the last \`${tests.command}\` (${tests.date}, ${machineText(tests.machine)}` +
      `${tests.machine.load ? `, load average ${tests.machine.load}` : ''}), running beside the other test files:\n\n` +
      `| file | seconds |\n| --- | --- |\n` +
      Object.entries(tests.suites)
        .map(([file, seconds]) => `| \`${file.replace('test/reliability/', '')}\` | ${seconds} |`)
        .join('\n') +
      `\n| **all of test/reliability, summed** | **${Math.round(tests.reliabilityS)}** |`,
    bench:
      `Latest full run, \`bench/results/latest.json\` (${bench.date.slice(0, 10)}, ${minutes(bench.durationS)}, ` +
      `${machineText(bench.machine)}):\n\n${renderTable(bench.rows)}`,
    'bench-large':
      `\`npm run bench -- --large\`, \`bench/results/latest-large.json\` (${large.date.slice(0, 10)}, ` +
      `${minutes(large.durationS)}, ${machineText(large.machine)}):\n\n` +
      renderTable(large.rows.filter((row) => row.id.startsWith('publish.') || row.id.startsWith('memory.'))),
  };
}

/**
 * A page with every marked region replaced by its rendered text; an unknown region name is an error.
 * @param {string} readme
 * @param {Record<string, string>} regions
 */
export function rewrite(readme, regions) {
  return readme.replace(
    /(<!-- figures:([\w-]+) -->)[\s\S]*?(<!-- \/figures -->)/g,
    (
      /** @type {string} */ _all,
      /** @type {string} */ open,
      /** @type {string} */ name,
      /** @type {string} */ close,
    ) => {
      if (!(name in regions)) throw new Error(`unknown figures region "${name}"`);
      const text = /** @type {string} */ (regions[name]);
      return text.includes('\n') ? `${open}\n${text}\n${close}` : `${open}${text}${close}`;
    },
  );
}

/**
 * A JSON file's document, typed as what it is until the caller says more.
 * @param {URL | string} file
 * @returns {unknown}
 */
function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * A results file's document, or undefined when there is none yet.
 * @param {URL} file
 * @returns {unknown}
 */
function readJsonIfAny(file) {
  return existsSync(file) ? readJson(file) : undefined;
}

/** The regions, rendered from the committed results files. */
function regionsFromResults() {
  const tests = /** @type {TestsSummary} */ (readJson(files.tests));
  const bench = /** @type {BenchResults} */ (readJson(files.bench));
  const large = /** @type {BenchResults} */ (readJson(files.large));
  const demo = /** @type {DemoSummary} */ (readJson(files.demo));
  return renderRegions(tests, bench, large, demo);
}

/**
 * Each page of `documents` as the committed results would render it, by its path.
 * @returns {Record<string, string>}
 */
export function expectedDocuments() {
  const regions = regionsFromResults();
  return Object.fromEntries(
    documents.map((path) => [
      path,
      rewrite(readFileSync(new URL(`../${path}`, import.meta.url), 'utf8'), regions),
    ]),
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  /** The value after `flag` (an error when it has none). */
  const valueAfter = (/** @type {string} */ flag) => {
    const value = args[args.indexOf(flag) + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    return value;
  };
  const from = args.indexOf('--from-report');
  const cpus = os.cpus();
  const [load = 0] = os.loadavg();
  const machine = {
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: cpus.length,
    cpu: (cpus[0]?.model ?? 'unknown').trim(),
    // A busy machine stretches every duration: said beside them when it was.
    load: load > cpus.length ? Math.round(load * 10) / 10 : undefined,
  };
  const fromDemo = args.indexOf('--from-demo');
  if (fromDemo >= 0) {
    const demo = summariseDemo(readFileSync(valueAfter('--from-demo'), 'utf8'), machine);
    if (demoChanged(readJsonIfAny(files.demo), demo))
      writeFileSync(files.demo, `${JSON.stringify(demo, null, 2)}\n`);
  }
  if (from >= 0) {
    const report = /** @type {VitestReport} */ (readJson(valueAfter('--from-report')));
    const wall = Number(args[args.indexOf('--wall-ms') + 1]);
    const command = args.includes('--command') ? valueAfter('--command') : 'npm test';
    const tests = summariseReport(report, wall, machine, command);
    if (testsChanged(readJsonIfAny(files.tests), tests))
      writeFileSync(files.tests, `${JSON.stringify(tests, null, 2)}\n`);
  }
  for (const [path, text] of Object.entries(expectedDocuments())) {
    const file = new URL(`../${path}`, import.meta.url);
    if (!args.includes('--check')) writeFileSync(file, text);
    else if (text !== readFileSync(file, 'utf8')) {
      console.error(`${path}: figures differ from bench/results: run node scripts/readme-figures.mjs`);
      process.exitCode = 1;
    }
  }
}
