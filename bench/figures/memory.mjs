// Figure 3 — peak resident memory of `provider publish` (loopback, no limits) of goreleaser-shaped releases: a
// large release must not need much more memory than a small one, because files are streamed from disk through
// fixed buffers (and inflated through zlib's).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { publishOnce } from '../lib/publish.mjs';
import { makeRelease } from '../lib/release.mjs';
import { limitRow } from '../lib/rows.mjs';
import { MiB } from '../lib/env.mjs';

const MB = 1e6;

/**
 * Measures figure 3; returns its rows.
 * @param {{ work: string, smallMiB: number, largeMiB: number, log: import('../lib/env.mjs').Log }} options
 */
export async function memoryFigure({ work, smallMiB, largeMiB, log }) {
  /** @type {Record<number, number>} peak RSS in MB by release size in MiB */
  const peaks = {};
  for (const mb of [smallMiB, largeMiB]) {
    const dir = path.join(work, `memory-${mb}`);
    log(`memory: generating 13 × ${mb} MiB`);
    const release = await makeRelease(dir, { version: '3.0.0', size: mb * MiB, shape: 'goreleaser' });
    log(`memory: provider publish of 13 × ${mb} MiB`);
    const run = await publishOnce({ work, release, peakRss: true, label: `publish-memory-${mb}` });
    peaks[mb] = ((run.peakKiB ?? NaN) * 1024) / MB;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const [small, large] = [peaks[smallMiB] ?? NaN, peaks[largeMiB] ?? NaN];
  return [
    limitRow({
      id: 'memory.large',
      figure: `publish peak RSS, 13 × ${largeMiB} MiB executables, deflated`,
      ours: large,
      unit: 'MB',
      limit: 150,
    }),
    limitRow({
      id: 'memory.growth',
      figure: `publish peak RSS growth, 13 × ${largeMiB} MiB over 13 × ${smallMiB} MiB executables, deflated`,
      ours: large - small,
      baseline: small,
      baselineLabel: `13 × ${smallMiB} MiB`,
      unit: 'MB',
      limit: 20,
    }),
  ];
}
