// Figure 4 — `provider verify` (hashes spread over the cores, the h1: lock hash of every zip's content in the
// same read, signature included) against `sha256sum -c` of the same SHA256SUMS, run alternately, medians; on the
// stored zips of random bytes, and on deflated zips of a binary that compresses to half (goreleaser's shape),
// where the h1: also inflates and hashes twice the bytes the zips hold.
import * as path from 'node:path';
import { BIN, SIGNER_PUBLIC_KEY, profile } from '../lib/env.mjs';
import { expectOk, median, run } from '../lib/proc.mjs';
import { infoRow, ratioRow } from '../lib/rows.mjs';

/**
 * Measures figure 4; returns its rows.
 * @param {{ work: string, release: import('../lib/release.mjs').Release, deflated: import('../lib/release.mjs').Release, reps: number, log: import('../lib/env.mjs').Log }} options
 */
export async function verifyFigure({ work, release, deflated, reps, log }) {
  const stored = await measure({ work, release, reps, log });
  const inflated = await measure({ work, release: deflated, reps, log });
  return [
    ratioRow({
      id: 'verify',
      figure: `verify (${release.platforms} × ${release.size / 2 ** 20} MiB, stored) vs sha256sum -c`,
      ...stored,
      limit: 0.7,
    }),
    // No target: the h1: of a deflated zip needs its content inflated (zlib, some 200-400 MB/s of output on this
    // machine), which sha256sum -c of the zips never does; Terraform pays the same for each platform it locks.
    infoRow({
      id: 'verify.deflated',
      figure: `verify (${deflated.platforms} × ${deflated.size / 2 ** 20} MiB binaries, deflated to ${(deflated.bytes / deflated.platforms / 2 ** 20).toFixed(0)} MiB) vs sha256sum -c`,
      ...inflated,
    }),
  ];
}

/**
 * Runs verify and sha256sum -c alternately over one release.
 * @param {{ work: string, release: import('../lib/release.mjs').Release, reps: number, log: import('../lib/env.mjs').Log }} options
 */
async function measure({ work, release, reps, log }) {
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
  return {
    ours: median(ours) / 1000,
    baseline: median(sums) / 1000,
    baselineLabel: 'sha256sum -c',
    unit: 's',
    details: { runsMs: { ours, sums } },
  };
}
