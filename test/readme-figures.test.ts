import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  demoChanged,
  documents,
  expectedDocuments,
  rewrite,
  testsChanged,
} from '../scripts/readme-figures.mjs';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const regionsOf = (text: string) => [
  ...text.matchAll(/<!-- figures:([\w-]+) -->([\s\S]*?)<!-- \/figures -->/g),
];
const outsideRegions = (text: string): string =>
  text.replace(/<!-- figures:[\w-]+ -->[\s\S]*?<!-- \/figures -->/g, '');
const readme = read('README.md');

describe('the figures in README.md and docs/ come from runs, through scripts/readme-figures.mjs', () => {
  it('each region lives once, on the page of its section: test and demo in the quick start, the rest in docs/', () => {
    const where = Object.fromEntries(documents.map((path) => [path, regionsOf(read(path)).map((m) => m[1])]));
    expect(where).toEqual({
      'README.md': ['test', 'demo'],
      'docs/reliability.md': ['reliability', 'suites'],
      'docs/performance.md': ['bench', 'bench-large'],
    });
    for (const path of documents)
      for (const [, name, text] of regionsOf(read(path)))
        expect(text!.trim(), `${path} ${name}`).not.toBe('');
  });

  it('the quick start quotes the test run and the demo', () => {
    const quickStart = readme.slice(
      readme.indexOf('\n## Quick start'),
      readme.indexOf('\n## ', readme.indexOf('\n## Quick start') + 1),
    );
    expect(regionsOf(quickStart).map((m) => m[1])).toEqual(['test', 'demo']);
  });

  it('every marked region is exactly what the script renders from the committed results', () => {
    // No suite runs here: the script reads bench/results/*.json, committed with the pages.
    const expected = expectedDocuments();
    for (const path of documents) expect(read(path), path).toBe(expected[path]);
  });

  it('a hand edit inside a region is not what the script renders, and the script puts it back', () => {
    const edited = readme.replace(
      /(<!-- figures:test -->[^<]*?)(\d+) tests/,
      (_m, a: string) => `${a}about 1 700 tests`,
    );
    expect(edited).not.toBe(readme);
    expect(edited).not.toBe(expectedDocuments()['README.md']);
    expect(
      rewrite(
        edited,
        Object.fromEntries(
          regionsOf(readme).map((m): [string, string] => [m[1]!, m[2]!.replace(/^\n|\n$/g, '')]),
        ),
      ),
    ).toBe(readme);
  });

  it('states no test count, suite duration or bench figure outside the marked regions', () => {
    for (const path of ['README.md', 'docs/performance.md']) {
      const outside = outsideRegions(read(path));
      expect(outside, path).not.toMatch(/half a minute|minutes? on 2 cores|about a minute/);
      expect(outside, path).not.toMatch(/\b\d[\d ]* tests\b/);
      expect(outside, path).not.toMatch(/Latest full run/);
    }
    // Sample transcripts outside the regions show no measured time or rate (the demo's region has real ones).
    expect(outsideRegions(readme)).not.toMatch(/ in \d[\d.]*m?s\b[;) ]|\d KiB\/s\)/);
  });
});

describe('a run that repeats the committed figures leaves them alone (no commit only refreshes figures)', () => {
  const tests = {
    date: '2026-11-28',
    command: 'npm test (build included)',
    machine: { node: 'v24.0.0', platform: 'linux 6', cpus: 2, cpu: 'x' },
    wallS: 200,
    files: 170,
    tests: 3000,
    passed: 3000,
    failed: 0,
    reliabilityS: 100,
    suites: {},
  };
  it('tests: the same counts and a wall time within a quarter keep them; other counts or times replace them', () => {
    expect(testsChanged(tests, { ...tests, date: '2026-12-01', wallS: 240, reliabilityS: 130 })).toBe(false);
    expect(testsChanged(tests, { ...tests, wallS: 160 })).toBe(false);
    expect(testsChanged(tests, { ...tests, wallS: 251 })).toBe(true);
    expect(testsChanged(tests, { ...tests, wallS: 149 })).toBe(true);
    expect(testsChanged(tests, { ...tests, tests: 3001, passed: 3001 })).toBe(true);
    expect(testsChanged(tests, { ...tests, passed: 2999, failed: 1 })).toBe(true);
    expect(testsChanged(tests, { ...tests, files: 171 })).toBe(true);
    expect(testsChanged(undefined, tests)).toBe(true);
  });

  const demo = {
    date: '2026-11-28',
    machine: tests.machine,
    first: '✓ example 1.2.3 published: 5 platforms (5 created, 5 uploaded) in 486ms; consumer check passed',
    seen: ['== what terraform init sees', '1.2.3 (protocols 6.0): linux_amd64'],
    second:
      '✓ example 1.2.3 published: 5 platforms (everything was already there) in 311ms; consumer check passed',
    writes: '(15 write requests in total, all from the first run)',
  };
  it('demo: other durations, dates or machines keep it; another line replaces it', () => {
    const later = { ...demo, date: '2026-12-01', first: demo.first.replace('486ms', '1.2s') };
    expect(demoChanged(demo, later)).toBe(false);
    expect(
      demoChanged(demo, { ...demo, writes: '(16 write requests in total, all from the first run)' }),
    ).toBe(true);
    expect(demoChanged(undefined, demo)).toBe(true);
  });
});
