// Figure 8 — publishing goreleaser-shaped releases on loopback against its floor: a bare publisher
// (bench/baseline/bare-publish.mjs), what a popular TypeScript GitHub Action does (create the version and
// platforms, PUT each file one after another with Node's fetch) and nothing more, and `provider verify` of the
// same release. `provider publish` runs with every check on, at its defaults: each zip is read once, hashed and
// inflated as it uploads (its last part held back until it is proven), so on loopback, where the uploads cost
// little, its floor is the longer of the two jobs done at once: wall time against the larger of the bare
// publisher's and verify's medians, CPU time against their sum (one read of every byte instead of two). For
// information, `provider publish --verify-first` (every zip read before the first write) against their sum, the
// floor of doing one after the other. Each publish and bare run gets a fresh emulator (not timed); the sides
// alternate, taking turns to go first. Wall time, CPU time (user + system of the process and its threads, GNU
// time) and peak RSS of each, medians (bench/lib/rows.mjs `baselineMeasure`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MiB } from '../lib/env.mjs';
import { median, warm } from '../lib/proc.mjs';
import { bareOnce, publishOnce, verifyOnce } from '../lib/publish.mjs';
import { PLATFORMS, describe, makeRelease } from '../lib/release.mjs';
import { processRows } from '../lib/rows.mjs';

const MB = 1e6;

/** The sides of figure 8, in the order of even runs (odd runs take them in reverse). */
const SIDES = /** @type {const} */ (['bare', 'verify', 'ours', 'first']);
/** @type {Record<(typeof SIDES)[number], string>} */
const NAMES = {
  bare: 'bare-publish.mjs',
  verify: 'provider verify',
  ours: 'provider publish',
  first: 'provider publish --verify-first',
};

/**
 * Measures figure 8 on each release size; returns its rows (wall ratio, CPU ratio, peak RSS, per size) that
 * `wants` asks for.
 * @param {object} options
 * @param {string} options.work
 * @param {[number, number][]} options.shapes [platforms, MiB per executable] of each release measured
 * @param {number} options.reps runs of each side (publish, publish --verify-first, the bare publisher, verify)
 *   per size
 * @param {(id: string) => boolean} options.wants
 * @param {import('../lib/env.mjs').Log} options.log
 */
export async function bareFigure({ work, shapes, reps, wants, log }) {
  /** @type {import('../lib/rows.mjs').Row[]} */
  const rows = [];
  for (const [platforms, sizeMiB] of shapes) {
    const key = `${platforms}x${sizeMiB}`;
    const ids = ['', '.cpu', '.rss', '.verify-first', '.verify-first.cpu', '.verify-first.rss'].map(
      (suffix) => `publish.bare.${key}${suffix}`,
    );
    if (!ids.some(wants)) continue;
    const shape = `${platforms} × ${sizeMiB} MiB`;
    const dir = path.join(work, `bare-${key}`);
    log(`bare: generating ${shape}`);
    const release = await makeRelease(dir, {
      version: '4.0.0',
      size: sizeMiB * MiB,
      platforms: PLATFORMS.slice(0, platforms),
      shape: 'goreleaser',
    });
    warm(release.files);
    /** @type {Record<(typeof SIDES)[number], import('../lib/rows.mjs').SideRuns>} */
    const runs = {
      ours: { ms: [], cpuMs: [], peakMB: [] },
      first: { ms: [], cpuMs: [], peakMB: [] },
      bare: { ms: [], cpuMs: [], peakMB: [] },
      verify: { ms: [], cpuMs: [], peakMB: [] },
    };
    /** @type {Record<string, Record<string, number>>} */
    const milestones = {};
    for (let i = 0; i < reps; i++) {
      for (const side of i % 2 === 0 ? SIDES : [...SIDES].reverse()) {
        log(`bare: ${NAMES[side]} of ${shape}, run ${i + 1}/${reps}`);
        /** @type {{ ms: number, cpuMs?: number, peakKiB?: number }} */
        let run;
        if (side === 'ours' || side === 'first') {
          const ours = await publishOnce({
            work,
            release,
            peakRss: true,
            cpu: true,
            label: `publish-bare-${key}${side === 'first' ? '-first' : ''}`,
            extra: side === 'first' ? ['--verify-first'] : [],
          });
          milestones[side] ??= ours.milestones;
          run = ours;
        } else if (side === 'verify') run = await verifyOnce(release, work, `verify-bare-${key}`);
        else run = await bareOnce({ work, release });
        runs[side].ms.push(run.ms);
        runs[side].cpuMs.push(run.cpuMs ?? NaN);
        runs[side].peakMB.push(((run.peakKiB ?? NaN) * 1024) / MB);
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
    /** Each side's medians (s, MB), and for comparison the medians of the per-run sums of bare and verify. */
    const medians = Object.fromEntries(
      Object.entries(runs).map(([side, r]) => [
        side,
        { s: median(r.ms) / 1000, cpuS: median(r.cpuMs) / 1000, peakMB: median(r.peakMB) },
      ]),
    );
    const perRunSums = {
      s: median(runs.bare.ms.map((ms, i) => ms + (runs.verify.ms[i] ?? NaN))) / 1000,
      cpuS: median(runs.bare.cpuMs.map((ms, i) => ms + (runs.verify.cpuMs[i] ?? NaN))) / 1000,
    };
    const details = { runs, medians, medianOfPerRunSums: perRunSums, milestonesMs: milestones };
    rows.push(
      ...processRows({
        id: `publish.bare.${key}`,
        figure: `publish, loopback (${describe(release)}), every check vs the longer of a bare publisher (fetch, one by one, no checks) and provider verify`,
        baselineLabel: 'max(bare, verify)',
        cpuLabel: 'bare + verify',
        wallLimit: 1.15,
        cpuLimit: 1.1,
        ours: runs.ours,
        baseline: [runs.bare, runs.verify],
        wall: 'max',
        details,
      }),
      ...processRows({
        id: `publish.bare.${key}.verify-first`,
        figure: '  publish --verify-first (every zip read before the first write) vs bare + verify',
        baselineLabel: 'bare + verify',
        wallLimit: null,
        cpuLimit: null,
        ours: runs.first,
        baseline: [runs.bare, runs.verify],
      }),
    );
  }
  return rows.filter((row) => wants(row.id));
}
