import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { documents, expectedDocuments, rewrite } from '../scripts/readme-figures.mjs';

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
