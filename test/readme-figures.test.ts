import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs build script without type declarations
import * as figures from '../scripts/readme-figures.mjs';

/** What this test calls of the script, typed (the script is plain JavaScript). */
const { expectedReadme, expectedReliabilityDoc, rewrite } = figures as {
  /** README.md with every marked region rendered from the committed results. */
  expectedReadme: () => string;
  /** docs/reliability.md likewise. */
  expectedReliabilityDoc: () => string;
  /** `readme` with each marked region replaced by the text of the same name in `regions`. */
  rewrite: (readme: string, regions: Record<string, string>) => string;
};

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const regions = [...readme.matchAll(/<!-- figures:([\w-]+) -->([\s\S]*?)<!-- \/figures -->/g)];

describe("the README's figures come from runs, through scripts/readme-figures.mjs", () => {
  it('has the marked regions for the test run, the demo, the reliability suites and the benchmarks (full and --large)', () => {
    expect(regions.map((m) => m[1])).toEqual(['test', 'demo', 'reliability', 'bench', 'bench-large']);
    for (const [, name, text] of regions) expect(text!.trim(), name).not.toBe('');
  });

  it('every marked region is exactly what the script renders from the committed results', () => {
    // No suite runs here: the script reads bench/results/tests.json and latest.json, committed with the README.
    expect(readme).toBe(expectedReadme());
  });

  it("docs/reliability.md's suite times are what the script renders from the committed results", () => {
    const doc = readFileSync(new URL('../docs/reliability.md', import.meta.url), 'utf8');
    expect(doc).toContain('<!-- figures:suites -->');
    expect(doc).toBe(expectedReliabilityDoc());
  });

  it('a hand edit inside a region is not what the script renders', () => {
    const edited = readme.replace(
      /(<!-- figures:test -->[^<]*?)(\d+) tests/,
      (_m, a: string) => `${a}about 1 700 tests`,
    );
    expect(edited).not.toBe(readme);
    expect(edited).not.toBe(expectedReadme());
    expect(
      rewrite(
        edited,
        Object.fromEntries(regions.map((m): [string, string] => [m[1]!, m[2]!.replace(/^\n|\n$/g, '')])),
      ),
    ).toBe(readme);
  });

  it('states no test count or suite duration outside the marked regions', () => {
    const outside = readme.replace(/<!-- figures:[\w-]+ -->[\s\S]*?<!-- \/figures -->/g, '');
    expect(outside).not.toMatch(/half a minute|minutes? on 2 cores|about a minute/);
    expect(outside).not.toMatch(/\b\d[\d ]* tests\b/);
    expect(outside).not.toMatch(/Latest full run/);
    // Sample transcripts outside the regions show no measured time or rate (the demo's region has real ones).
    expect(outside).not.toMatch(/ in \d[\d.]*m?s\b[;) ]|\d KiB\/s\)/);
  });
});
