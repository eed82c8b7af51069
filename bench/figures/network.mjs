// Figure 1 — publishing over a realistic network: the emulator limits each connection's bandwidth and adds a
// latency to every request. Baseline: the documented curl flow (one file after another). Ideal: every byte
// over `concurrency` connections at full bandwidth, plus the time to hash every byte once (sha256sum, same run).
import { median } from '../lib/proc.mjs';
import { curlOnce, publishOnce } from '../lib/publish.mjs';
import { parseRate } from '../lib/rate.mjs';
import { ratioRow } from '../lib/rows.mjs';

/** Measures figure 1; returns its rows. */
export async function networkFigure({ work, release, hashMs, reps, latency, bandwidth, concurrency, log }) {
  const network = { latency, bandwidth };
  const ours = [];
  const curl = [];
  let milestones;
  for (let i = 0; i < reps; i++) {
    log(`network: curl baseline, run ${i + 1}/${reps}`);
    curl.push((await curlOnce({ work, release, network })).ms);
    log(`network: provider publish, run ${i + 1}/${reps}`);
    const run = await publishOnce({ work, release, network, label: 'publish-network' });
    ours.push(run.ms);
    milestones ??= run.milestones;
  }
  const bytesPerSecond = parseRate(bandwidth);
  const transferMs = (release.bytes / (concurrency * bytesPerSecond)) * 1000;
  const ideal = transferMs + hashMs;
  // The files are whole: with n equal files on c connections the transfers take ceil(n / c) rounds.
  const rounds = Math.ceil(release.platforms / concurrency);
  const roundsMs = ((rounds * release.size) / bytesPerSecond) * 1000;
  const shape = `${release.platforms} × ${release.size / 2 ** 20} MiB, ${bandwidth} per connection, ${latency}`;
  const details = {
    runsMs: { ours, curl },
    bytes: release.bytes,
    bytesPerSecond,
    concurrency,
    ideal: { transferMs, hashMs, totalMs: ideal },
    wholeFiles: { rounds, transferMs: roundsMs, totalMs: roundsMs + hashMs },
    milestonesMs: milestones,
  };
  const oursS = median(ours) / 1000;
  return [
    ratioRow({
      id: 'publish.network.curl',
      figure: `publish, shaped network (${shape}) vs documented curl flow`,
      ours: oursS,
      baseline: median(curl) / 1000,
      baselineLabel: 'curl, one by one',
      unit: 's',
      limit: 0.35,
      details,
    }),
    ratioRow({
      id: 'publish.network.ideal',
      figure: `publish, shaped network vs ideal (bytes / (${concurrency} × bandwidth) + sha256sum)`,
      ours: oursS,
      baseline: ideal / 1000,
      baselineLabel: 'ideal',
      unit: 's',
      limit: 1.15,
    }),
  ];
}
