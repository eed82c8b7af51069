// Figure 9 — mirroring between two emulators on loopback: `provider mirror` of 3 versions × 5 platforms of
// goreleaser-shaped zips from one `provider emulate` (the origin, speaking the provider registry protocol) into
// another (the destination), against bench/baseline/mirror-with-curl.sh moving the same bytes with curl:
// download every zip, SHA256SUMS and signature from the origin's download links, then the documented upload flow
// (publish-with-curl.sh). The baseline checks nothing; `provider mirror` checks each version's signature with the
// origin's key before it writes anything, then streams each zip from the origin (which answers byte ranges, as
// the storage behind registry.terraform.io and GitHub releases does) into the destination with publish's core,
// each zip's SHA-256 and contents (inflated) proven by that one read before its upload completes. The origin is filled once (not timed); each run gets a fresh destination
// (not timed) and is checked afterwards to have left every version whole there (not timed). The two alternate,
// and which goes first alternates too. Wall time, CPU time (user + system of the process and of the processes
// it waited for, GNU time) and peak RSS (of the largest process, for the script), medians.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { curlMirrorOnce, mirrorOnce, startOrigin } from '../lib/mirror.mjs';
import { processRows } from '../lib/rows.mjs';

const MB = 1e6;
/** The versions the origin holds, all mirrored. */
const VERSIONS = ['1.0.0', '1.1.0', '1.2.0'];
/** The platforms of each version: the five most used. */
const PLATFORMS = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];

/**
 * Measures figure 9; returns its rows (wall ratio, CPU ratio, peak RSS) that `wants` asks for.
 * @param {object} options
 * @param {string} options.work
 * @param {number} options.sizeMiB each executable's size
 * @param {number} options.reps runs of each side
 * @param {(id: string) => boolean} options.wants
 * @param {import('../lib/env.mjs').Log} options.log
 */
export async function mirrorFigure({ work, sizeMiB, reps, wants, log }) {
  const key = `${VERSIONS.length}x${PLATFORMS.length}x${sizeMiB}`;
  const ids = ['wall', 'cpu', 'rss'].map((suffix) => `mirror.${key}.${suffix}`);
  if (!ids.some(wants)) return [];
  const dir = path.join(work, `mirror-${key}`);
  fs.mkdirSync(dir, { recursive: true });
  const origin = await startOrigin({ dir, versions: VERSIONS, platforms: PLATFORMS, sizeMiB, log });
  /** @type {Record<'ours' | 'curl', { ms: number[], cpuMs: number[], peakMB: number[] }>} */
  const runs = { ours: { ms: [], cpuMs: [], peakMB: [] }, curl: { ms: [], cpuMs: [], peakMB: [] } };
  /** @type {Record<string, number> | undefined} */
  let milestones;
  try {
    for (let i = 0; i < reps; i++) {
      const sides =
        i % 2 === 0 ? /** @type {const} */ (['curl', 'ours']) : /** @type {const} */ (['ours', 'curl']);
      for (const side of sides) {
        log(
          `mirror: ${side === 'ours' ? 'provider mirror' : 'mirror-with-curl.sh'} of ${key}, run ${i + 1}/${reps}`,
        );
        const run =
          side === 'ours'
            ? await mirrorOnce({ work: dir, origin, label: `mirror-${key}` })
            : await curlMirrorOnce({ work: dir, origin });
        milestones ??= run.milestones;
        runs[side].ms.push(run.ms);
        runs[side].cpuMs.push(run.cpuMs ?? NaN);
        runs[side].peakMB.push(((run.peakKiB ?? NaN) * 1024) / MB);
      }
    }
  } finally {
    await origin.emulator.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const shape =
    `${VERSIONS.length} versions × ${PLATFORMS.length} × ${sizeMiB} MiB executables, ` +
    `deflated to ${Math.round(origin.ratio * 100)} %`;
  const details = {
    runs,
    milestonesMs: milestones,
    bytes: origin.bytes,
    versions: VERSIONS,
    platforms: PLATFORMS,
  };
  const rows = processRows({
    id: `mirror.${key}.wall`,
    cpuId: `mirror.${key}`,
    figure: `mirror, emulator to emulator on loopback (${shape}), every check vs curl down and up (no checks)`,
    baselineLabel: 'curl',
    wallLimit: 1.1,
    cpuLimit: 1.5,
    ours: runs.ours,
    baseline: runs.curl,
    details,
  });
  return rows.filter((row) => wants(row.id));
}
