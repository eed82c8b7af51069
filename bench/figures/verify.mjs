// Figure 4 — `provider verify` (hashes spread over the cores, the h1: lock hash of every zip's content in the
// same read, signature included), run alternately with its baselines, medians:
//   - on a goreleaser-shaped release (deflated zips, bench/lib/release.mjs), against the same hashes taken with
//     the standard tools one after another: `sha256sum -c` of SHA256SUMS (the zh:), then every zip's content
//     inflated by `unzip -p` into `sha256sum` (what its h1: needs); and, for information, against `sha256sum -c`
//     alone, which never inflates;
//   - on stored zips of random bytes against `sha256sum -c` (an extra row: nothing to inflate there).
import * as path from 'node:path';
import { BIN, SIGNER_PUBLIC_KEY, profile } from '../lib/env.mjs';
import { expectOk, median, run } from '../lib/proc.mjs';
import { describe } from '../lib/release.mjs';
import { infoRow, ratioRow } from '../lib/rows.mjs';

/**
 * Measures figure 4; returns the rows `wants` asks for.
 * @param {object} options
 * @param {string} options.work
 * @param {import('../lib/release.mjs').Release} options.release goreleaser-shaped
 * @param {() => Promise<import('../lib/release.mjs').Release>} options.stored makes the stored release
 * @param {number} options.reps
 * @param {(id: string) => boolean} options.wants
 * @param {import('../lib/env.mjs').Log} options.log
 */
export async function verifyFigure({ work, release, stored, reps, wants, log }) {
  const shape = describe(release);
  /** @type {import('../lib/rows.mjs').Row[]} */
  const rows = [];
  if (wants('verify') || wants('verify.sums')) {
    const runs = await measure({ work, release, reps, log, inflate: true });
    rows.push(
      ratioRow({
        id: 'verify',
        figure: `verify (${shape}) vs sha256sum -c, then unzip -p of each zip into sha256sum`,
        ours: median(runs.ours) / 1000,
        baseline: median(runs.tools) / 1000,
        baselineLabel: 'the same hashes, standard tools',
        unit: 's',
        limit: 0.7,
        details: { runsMs: runs, ratio: release.ratio },
      }),
      infoRow({
        id: 'verify.sums',
        figure: `  the same vs sha256sum -c alone (reads the zips, inflates nothing)`,
        ours: median(runs.ours) / 1000,
        baseline: median(runs.sums) / 1000,
        baselineLabel: 'sha256sum -c',
        unit: 's',
      }),
    );
  }
  if (wants('verify.stored')) {
    const made = await stored();
    const runs = await measure({ work, release: made, reps, log, inflate: false });
    rows.push(
      ratioRow({
        id: 'verify.stored',
        figure: `verify (${describe(made)}) vs sha256sum -c`,
        ours: median(runs.ours) / 1000,
        baseline: median(runs.sums) / 1000,
        baselineLabel: 'sha256sum -c',
        unit: 's',
        limit: 0.7,
        details: { runsMs: runs },
      }),
    );
  }
  return rows;
}

/**
 * Runs verify, `sha256sum -c` and (with `inflate`) the standard tools' h1: work alternately over one release.
 * @param {{ work: string, release: import('../lib/release.mjs').Release, reps: number, log: import('../lib/env.mjs').Log, inflate: boolean }} options
 */
async function measure({ work, release, reps, log, inflate }) {
  /** @type {{ ours: number[], sums: number[], tools: number[] }} ms of each run */
  const runs = { ours: [], sums: [], tools: [] };
  const sumsFile = path.basename(release.shasums);
  const zips = release.zips.map((zip) => path.basename(zip));
  log(`verify: ${reps} runs each of provider verify, sha256sum -c${inflate ? ', and it with unzip -p' : ''}`);
  for (let i = 0; i < reps; i++) {
    const checked = await run('sha256sum', ['--quiet', '-c', sumsFile], { cwd: release.dir });
    runs.sums.push(expectOk(checked, 'sha256sum -c').ms);
    if (inflate) {
      // The zh: of every file, then each zip's content inflated and hashed: the work verify does, one by one.
      const script =
        'set -eo pipefail; sha256sum --quiet -c "$1"; shift; for z; do unzip -p "$z" | sha256sum >/dev/null; done';
      const tools = await run('bash', ['-c', script, 'tools', sumsFile, ...zips], { cwd: release.dir });
      runs.tools.push(expectOk(tools, 'sha256sum -c + unzip -p | sha256sum').ms);
    }
    const args = [...profile('verify'), BIN, 'verify', release.dir, '--key', SIGNER_PUBLIC_KEY, '--json'];
    runs.ours.push(expectOk(await run(process.execPath, args, { cwd: work }), 'provider verify').ms);
  }
  return runs;
}
