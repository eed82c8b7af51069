// Figure 4 — `provider verify` (hashes spread over the cores, signature included) against `sha256sum -c` of
// the same SHA256SUMS, run alternately, medians.
import * as path from 'node:path';
import { BIN, SIGNER_PUBLIC_KEY, profile } from '../lib/env.mjs';
import { expectOk, median, run } from '../lib/proc.mjs';
import { ratioRow } from '../lib/rows.mjs';

/**
 * Measures figure 4; returns its rows.
 * @param {{ work: string, release: import('../lib/release.mjs').Release, reps: number, log: import('../lib/env.mjs').Log }} options
 */
export async function verifyFigure({ work, release, reps, log }) {
  /** @type {number[]} */
  const ours = [];
  /** @type {number[]} */
  const sums = [];
  log(`verify: ${reps} runs each of provider verify and sha256sum -c`);
  for (let i = 0; i < reps; i++) {
    const checked = await run('sha256sum', ['--quiet', '-c', path.basename(release.shasums)], {
      cwd: release.dir,
    });
    sums.push(expectOk(checked, 'sha256sum -c').ms);
    const args = [...profile('verify'), BIN, 'verify', release.dir, '--key', SIGNER_PUBLIC_KEY, '--json'];
    ours.push(expectOk(await run(process.execPath, args, { cwd: work }), 'provider verify').ms);
  }
  return [
    ratioRow({
      id: 'verify',
      figure: `verify (${release.platforms} × ${release.size / 2 ** 20} MiB) vs sha256sum -c`,
      ours: median(ours) / 1000,
      baseline: median(sums) / 1000,
      baselineLabel: 'sha256sum -c',
      unit: 's',
      limit: 0.7,
      details: { runsMs: { ours, sums } },
    }),
  ];
}
