// Figure 1 — publishing a goreleaser-shaped release over a realistic network: the emulator limits each
// connection's bandwidth and adds a latency to every request. Baseline: the documented curl flow (one file after
// another), against publish's default. Ideal: every byte over `concurrency` connections at full bandwidth while
// the hashes verification needs are taken at the same time, the longer of the two: publish verifies each zip in
// the read that uploads it, so verification adds no time of its own to the transfer. The hashing term is the
// standard tools on every core (each zip's sha256 and its inflated content's: bench/lib/publish.mjs `hashOnce`,
// same run); on the bench's per-connection network (13 × 25 MB/s) the transfer is the shorter on two cores, on
// the shared 100 MB/s link about level with it. (Before publish streamed its verification, the ideal was their
// sum.) For information, the transfer plus `provider verify`'s time: the best a publisher that verifies before
// its first write can do.
// Then the default (`--concurrency auto`) against the all-files-in-parallel ideal on the same network, and
// against a fixed 4 on a link whose total bandwidth is the limit (`--total-bandwidth`: more connections gain
// nothing there, so the default must not lose by having more).
import { median } from '../lib/proc.mjs';
import { curlOnce, publishOnce } from '../lib/publish.mjs';
import { parseRate } from '../lib/rate.mjs';
import { describe } from '../lib/release.mjs';
import { infoRow, ratioRow } from '../lib/rows.mjs';

/**
 * Measures figure 1; returns its rows. `concurrency` is the old fixed default (4), kept for comparison with
 * earlier runs. `wide` is one connection per platform: with whole files, 13 equal files on 4 connections take 4
 * rounds where the ideal counts 3.25, so at 4 the ideal is out of reach by construction (the `wholeFiles`
 * bound); the wide run shows where publish stands when every connection can stay busy. `auto` is publish's
 * default (no `--concurrency`): what users get. Only the runs the rows `wants` asks for need are made.
 * @param {object} options
 * @param {string} options.work
 * @param {import('../lib/release.mjs').Release} options.release
 * @param {number} options.hashMs the standard tools' hashes on every core (`hashOnce`), ms
 * @param {number} options.verifyMs `provider verify` of the release, ms
 * @param {number} options.reps
 * @param {string} options.latency `--latency` of the emulator
 * @param {string} options.bandwidth `--bandwidth` of the emulator (per connection)
 * @param {string} options.totalBandwidth `--total-bandwidth` of the emulator for the shared-link rows
 * @param {number} options.concurrency
 * @param {(id: string) => boolean} options.wants
 * @param {import('../lib/env.mjs').Log} options.log
 */
export async function networkFigure({
  work,
  release,
  hashMs,
  verifyMs,
  reps,
  latency,
  bandwidth,
  totalBandwidth,
  concurrency,
  wants,
  log,
}) {
  const network = { latency, bandwidth };
  const shared = { latency, totalBandwidth };
  const wide = release.platforms;
  /** @typedef {'ours' | 'wide' | 'auto' | 'sharedAuto' | 'sharedFixed'} RunKey */
  /** @type {Record<RunKey | 'curl', number[]>} */
  const runs = { ours: [], wide: [], auto: [], sharedAuto: [], sharedFixed: [], curl: [] };
  /** @type {Partial<Record<RunKey, Record<string, number>>>} */
  const milestones = {};
  /** @type {Record<RunKey, string[]>} the rows each run is needed for */
  const neededBy = {
    ours: ['curl-4', 'ideal', 'whole-files'],
    wide: ['ideal-wide'],
    auto: ['curl', 'auto-ideal', 'auto-verify'],
    sharedAuto: ['shared-auto', 'shared-ideal'],
    sharedFixed: ['shared-auto'],
  };
  const needed = (/** @type {RunKey} */ key) => neededBy[key].some((row) => wants(`publish.network.${row}`));
  /** @type {[RunKey, import('../lib/emulator.mjs').Network, number | undefined][]} */
  const plan = [
    ['ours', network, concurrency],
    ['wide', network, wide],
    ['auto', network, undefined],
    ['sharedAuto', shared, undefined],
    ['sharedFixed', shared, concurrency],
  ];
  for (let i = 0; i < reps; i++) {
    if (wants('publish.network.curl') || wants('publish.network.curl-4')) {
      log(`network: curl baseline, run ${i + 1}/${reps}`);
      runs.curl.push((await curlOnce({ work, release, network })).ms);
    }
    for (const [key, net, c] of plan.filter(([key]) => needed(key))) {
      const where = net === shared ? `${totalBandwidth} in total` : `${bandwidth} per connection`;
      log(`network: provider publish --concurrency ${c ?? 'auto (default)'}, ${where}, run ${i + 1}/${reps}`);
      const run = await publishOnce({
        work,
        release,
        network: net,
        concurrency: c,
        label: 'publish-network',
      });
      runs[key].push(run.ms);
      milestones[key] ??= run.milestones;
    }
  }
  const bytesPerSecond = parseRate(bandwidth);
  const totalBytesPerSecond = parseRate(totalBandwidth);
  const shape = `${describe(release)}, ${bandwidth} per connection, ${latency}`;
  /** The ideal on c connections, and the bound for whole files (ceil(n / c) rounds). */
  const bounds = (/** @type {number} */ c) => {
    const transferMs = (release.bytes / (c * bytesPerSecond)) * 1000;
    const rounds = Math.ceil(release.platforms / c);
    const roundsMs = ((rounds * release.zipSize) / bytesPerSecond) * 1000;
    return {
      concurrency: c,
      ideal: { transferMs, hashMs, totalMs: Math.max(transferMs, hashMs) },
      wholeFiles: { rounds, transferMs: roundsMs, totalMs: Math.max(roundsMs, hashMs) },
    };
  };
  const sharedTransferMs = (release.bytes / totalBytesPerSecond) * 1000;
  const details = {
    runsMs: runs,
    bytes: release.bytes,
    bytesPerSecond,
    totalBytesPerSecond,
    verifyMs,
    ours: { ...bounds(concurrency), milestonesMs: milestones.ours },
    wide: { ...bounds(wide), milestonesMs: milestones.wide },
    auto: { ...bounds(wide), milestonesMs: milestones.auto },
    shared: {
      ideal: { transferMs: sharedTransferMs, hashMs, totalMs: Math.max(sharedTransferMs, hashMs) },
      milestonesMs: { auto: milestones.sharedAuto, fixed: milestones.sharedFixed },
    },
  };
  const seconds = (/** @type {RunKey} */ key) => median(runs[key]) / 1000;
  const oursS = seconds('ours');
  const rows = [
    ratioRow({
      id: 'publish.network.curl',
      figure: `publish (default concurrency), shaped network (${shape}) vs documented curl flow`,
      ours: seconds('auto'),
      baseline: median(runs.curl) / 1000,
      baselineLabel: 'curl, one by one',
      unit: 's',
      limit: 0.35,
      details,
    }),
    infoRow({
      id: 'publish.network.curl-4',
      figure: `  the same with --concurrency ${concurrency}`,
      ours: oursS,
      baseline: median(runs.curl) / 1000,
      baselineLabel: 'curl, one by one',
      unit: 's',
    }),
    // 4 was the default until `auto`; the default's own target is the `publish.network.auto-ideal` row below.
    infoRow({
      id: 'publish.network.ideal',
      figure: `publish --concurrency ${concurrency}, shaped network vs ideal (bytes / (${concurrency} × bandwidth), hashes at once)`,
      ours: oursS,
      baseline: details.ours.ideal.totalMs / 1000,
      baselineLabel: 'ideal',
      unit: 's',
    }),
    infoRow({
      id: 'publish.network.whole-files',
      figure: `  the same vs whole files (${details.ours.wholeFiles.rounds} rounds of ${concurrency}, hashes at once)`,
      ours: oursS,
      baseline: details.ours.wholeFiles.totalMs / 1000,
      baselineLabel: 'bound',
      unit: 's',
    }),
    ratioRow({
      id: 'publish.network.ideal-wide',
      figure: `publish --concurrency ${wide}, shaped network vs ideal (bytes / (${wide} × bandwidth), hashes at once)`,
      ours: seconds('wide'),
      baseline: details.wide.ideal.totalMs / 1000,
      baselineLabel: 'ideal',
      unit: 's',
      limit: 1.05,
    }),
    ratioRow({
      id: 'publish.network.auto-ideal',
      figure: `publish (default concurrency), shaped network vs all files in parallel (bytes / (${wide} × bandwidth), hashes at once)`,
      ours: seconds('auto'),
      baseline: details.auto.ideal.totalMs / 1000,
      baselineLabel: 'ideal',
      unit: 's',
      limit: 1.05,
    }),
    infoRow({
      id: 'publish.network.auto-verify',
      figure: `  the same vs all files in parallel + provider verify (verifying before the first write, at best)`,
      ours: seconds('auto'),
      baseline: (details.auto.ideal.transferMs + verifyMs) / 1000,
      baselineLabel: 'transfer + verify',
      unit: 's',
    }),
    ratioRow({
      id: 'publish.network.shared-auto',
      figure: `publish (default concurrency) vs --concurrency ${concurrency}, ${totalBandwidth} shared by all connections, ${latency}`,
      ours: seconds('sharedAuto'),
      baseline: seconds('sharedFixed'),
      baselineLabel: `--concurrency ${concurrency}`,
      unit: 's',
      limit: 1.05,
    }),
    infoRow({
      id: 'publish.network.shared-ideal',
      figure: `  the same (default) vs ideal (bytes / ${totalBandwidth}, hashes at once)`,
      ours: seconds('sharedAuto'),
      baseline: details.shared.ideal.totalMs / 1000,
      baselineLabel: 'ideal',
      unit: 's',
    }),
  ].filter((row) => wants(row.id));
  // The details go with the first row; when that one was not asked for, with the first that was.
  const [first] = rows;
  if (first && !first.details) rows[0] = { ...first, details };
  return rows;
}
