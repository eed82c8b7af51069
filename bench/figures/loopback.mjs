// Figure 2 — publishing on loopback without limits. The limit: the hashes verification needs, taken by the
// standard tools on every core (each zip's sha256, and its content inflated by `unzip -p` into `sha256sum`:
// bench/lib/publish.mjs `hashOnce`), then the same files uploaded with parallel `curl -T` (4 at once) to links
// prepared beforehand (not timed): what hashing and transferring alone cost with the standard tools.
import { startEmulator } from '../lib/emulator.mjs';
import { median, run } from '../lib/proc.mjs';
import { publishOnce } from '../lib/publish.mjs';
import { prepareUploads } from '../lib/registry.mjs';
import { describe } from '../lib/release.mjs';
import { ratioRow } from '../lib/rows.mjs';

/**
 * Uploads every [file, link] with `curl -T`, `concurrency` at once; resolves with the wall time in ms.
 * @param {[string, string][]} uploads
 * @param {number} concurrency
 */
async function parallelCurl(uploads, concurrency) {
  const queue = [...uploads];
  const started = performance.now();
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const result = await run('curl', ['-sSf', '-o', '/dev/null', '-T', next[0], next[1]]);
      if (result.code !== 0) throw new Error(`curl -T ${next[0]} failed: ${result.stderr}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - started;
}

/**
 * Measures figure 2; returns its rows.
 * @param {{ work: string, release: import('../lib/release.mjs').Release, hashMs: number, reps: number, concurrency: number, log: import('../lib/env.mjs').Log }} options
 */
export async function loopbackFigure({ work, release, hashMs, reps, concurrency, log }) {
  /** @type {number[]} */
  const ours = [];
  /** @type {number[]} */
  const curl = [];
  for (let i = 0; i < reps; i++) {
    log(`loopback: parallel curl -T, run ${i + 1}/${reps}`);
    const emulator = await startEmulator({ dir: work });
    try {
      curl.push(await parallelCurl(await prepareUploads(emulator, release), concurrency));
    } finally {
      await emulator.stop();
    }
    log(`loopback: provider publish, run ${i + 1}/${reps}`);
    ours.push((await publishOnce({ work, release, label: 'publish-loopback' })).ms);
  }
  const limit = hashMs + median(curl);
  return [
    ratioRow({
      id: 'publish.loopback',
      figure: `publish, loopback (${describe(release)}) vs hashes + curl -T ×${concurrency}`,
      ours: median(ours) / 1000,
      baseline: limit / 1000,
      baselineLabel: 'limit',
      unit: 's',
      limit: 1.3,
      details: { runsMs: { ours, curl }, hashMs, curlMs: median(curl) },
    }),
  ];
}
