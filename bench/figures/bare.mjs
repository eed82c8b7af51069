// Figure 8 — publishing goreleaser-shaped releases on loopback against a bare publisher
// (bench/baseline/bare-publish.mjs): what a popular TypeScript GitHub Action does (create the version and
// platforms, PUT each file one after another with Node's fetch) and nothing more: no hashing, no signature check,
// no inflating, no wait, no consumer check. `provider publish` runs with every check on, at its defaults, so it
// reads every byte, inflates every zip for its h1: and checks the signature before its first write. The bare
// publisher does none of that whatever the zips hold, so it stays the floor of uploading the same bytes. Each
// run gets a fresh emulator (not timed); the two alternate, and which goes first alternates too. Wall time, CPU
// time (user + system of the process and its threads, GNU time) and peak RSS of each, medians.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MiB } from '../lib/env.mjs';
import { warm } from '../lib/proc.mjs';
import { bareOnce, publishOnce } from '../lib/publish.mjs';
import { PLATFORMS, describe, makeRelease } from '../lib/release.mjs';
import { processRows } from '../lib/rows.mjs';

const MB = 1e6;

/**
 * Measures figure 8 on each release size; returns its rows (wall ratio, CPU ratio, peak RSS, per size) that
 * `wants` asks for.
 * @param {object} options
 * @param {string} options.work
 * @param {[number, number][]} options.shapes [platforms, MiB per executable] of each release measured
 * @param {number} options.reps runs of each side per size
 * @param {(id: string) => boolean} options.wants
 * @param {import('../lib/env.mjs').Log} options.log
 */
export async function bareFigure({ work, shapes, reps, wants, log }) {
  /** @type {import('../lib/rows.mjs').Row[]} */
  const rows = [];
  for (const [platforms, sizeMiB] of shapes) {
    const key = `${platforms}x${sizeMiB}`;
    const ids = ['', '.cpu', '.rss'].map((suffix) => `publish.bare.${key}${suffix}`);
    if (!ids.some(wants)) continue;
    const shape = `${platforms} × ${sizeMiB} MiB`;
    const dir = path.join(work, `bare-${platforms}x${sizeMiB}`);
    log(`bare: generating ${shape}`);
    const release = await makeRelease(dir, {
      version: '4.0.0',
      size: sizeMiB * MiB,
      platforms: PLATFORMS.slice(0, platforms),
      shape: 'goreleaser',
    });
    warm(release.files);
    /** @type {Record<'ours' | 'bare', { ms: number[], cpuMs: number[], peakMB: number[] }>} */
    const runs = {
      ours: { ms: [], cpuMs: [], peakMB: [] },
      bare: { ms: [], cpuMs: [], peakMB: [] },
    };
    /** @type {Record<string, number> | undefined} */
    let milestones;
    for (let i = 0; i < reps; i++) {
      const sides =
        i % 2 === 0 ? /** @type {const} */ (['bare', 'ours']) : /** @type {const} */ (['ours', 'bare']);
      for (const side of sides) {
        log(
          `bare: ${side === 'ours' ? 'provider publish' : 'bare-publish.mjs'} of ${shape}, run ${i + 1}/${reps}`,
        );
        /** @type {{ ms: number, cpuMs?: number, peakKiB?: number }} */
        let run;
        if (side === 'ours') {
          const label = `publish-bare-${platforms}x${sizeMiB}`;
          const ours = await publishOnce({ work, release, peakRss: true, cpu: true, label });
          milestones ??= ours.milestones;
          run = ours;
        } else run = await bareOnce({ work, release });
        runs[side].ms.push(run.ms);
        runs[side].cpuMs.push(run.cpuMs ?? NaN);
        runs[side].peakMB.push(((run.peakKiB ?? NaN) * 1024) / MB);
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
    const details = { runs, milestonesMs: milestones };
    rows.push(
      ...processRows({
        id: `publish.bare.${key}`,
        figure: `publish, loopback (${describe(release)}), every check vs a bare publisher (fetch, one by one, no checks)`,
        baselineLabel: 'bare',
        wallLimit: 1.3,
        cpuLimit: 2,
        ours: runs.ours,
        baseline: runs.bare,
        details,
      }),
    );
  }
  return rows.filter((row) => wants(row.id));
}
