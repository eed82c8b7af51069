// Figure 6 — the run task integrator under a steady load: signed requests of the documented payload at a fixed
// rate (bench/integrator/load.mjs), a handler that sleeps 2 s, a local platform (bench/integrator/receiver.mjs)
// that answers and counts the callbacks. Measured: the acknowledgement latency (p99, less the load generator's own
// p99 lag in the same load: on two cores a stall of the machine holds up the generator as well as the server, and
// how late the generator sent is its measure), the acknowledgement throughput against a bare node:http server
// under the same load, and whether every accepted request got its final callback.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIN, ROOT, cleanEnv, profile } from '../lib/env.mjs';
import { percentile, startServer } from '../lib/proc.mjs';
import { saturate, steadyLoad } from '../integrator/load.mjs';
import { infoRow, limitRow, ratioRow } from '../lib/rows.mjs';
import { requestSigner } from '../integrator/payload.mjs';

const HMAC_KEY = 'bench-hmac-key-not-secret';
/**
 * The closed-loop load that finds the most each server acknowledges, after a warm-up second that is not counted
 * (either server just started: the integrator's first thousands of requests run before V8 has compiled its code).
 */
const SATURATION = { connections: 32, seconds: 5, warmupSeconds: 1 };
const HANDLER = 'sleep 2';

/** @typedef {import('../lib/proc.mjs').StartedServer<{ url: string }>} UrlServer a server that prints its URL */

/**
 * `rate` signed requests per second for `seconds` after `warmupSeconds` (the servers start cold) against `url`.
 * @param {string} url
 * @param {{ rate: number, seconds: number, warmupSeconds: number, build: import('../integrator/load.mjs').Build }} options
 */
function load(url, { rate, seconds, warmupSeconds, build }) {
  return steadyLoad(url, {
    rate,
    seconds,
    warmupSeconds,
    build,
  });
}

/**
 * The receiver's counts (bench/integrator/receiver.mjs), with `ids`: and the ids.
 * @param {string} receiver
 * @returns {Promise<import('../integrator/receiver.mjs').Stats>}
 */
async function stats(receiver, ids = false) {
  const response = await fetch(`${receiver}/_stats${ids ? '?ids=1' : ''}`);
  return /** @type {Promise<import('../integrator/receiver.mjs').Stats>} */ (response.json());
}

/**
 * Polls the receiver until it holds `expected` more final callbacks than `before`, or `timeoutMs` passed.
 * @param {string} receiver
 * @param {number} expected
 * @param {number} timeoutMs
 */
async function awaitFinals(receiver, expected, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await stats(receiver);
    if (s.finals >= expected || Date.now() > deadline) return stats(receiver, true);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The figures of one steady load of `rate` requests per second. The generator's lag is taken, as the latencies
 * are, over the measured seconds only (the requests after the warm-up: load.mjs sends them in order, one lag per
 * request), and over the whole load beside it.
 * @param {import('../integrator/load.mjs').SteadyLoadResult} result
 * @param {number} rate
 */
function summarize(result, rate) {
  const measuredLags = result.lags.slice(Math.round(rate * result.warmupSeconds));
  const latencyMs = {
    p50: percentile(result.latencies, 50),
    p90: percentile(result.latencies, 90),
    p99: percentile(result.latencies, 99),
    max: Math.max(...result.latencies),
  };
  const generatorLagMs = { p99: percentile(measuredLags, 99), max: Math.max(...measuredLags) };
  return {
    sent: result.sent,
    ok: result.ok,
    non2xx: result.non2xx,
    errors: result.errors,
    throughput: result.throughput,
    latencyMs,
    /** The whole load, the cold start included. */
    withStartMs: {
      p99: percentile([...result.warmupLatencies, ...result.latencies], 99),
      max: Math.max(...result.warmupLatencies, ...result.latencies),
    },
    /** How late the generator sent, over the measured seconds. */
    generatorLagMs,
    /** The same over the whole load, the warm-up included. */
    generatorLagWithStartMs: { p99: percentile(result.lags, 99), max: Math.max(...result.lags) },
    /** The p99 latency less the generator's p99 lag (0 at least): the target's measure. */
    p99LessLagMs: Math.max(0, latencyMs.p99 - generatorLagMs.p99),
    warmupSeconds: result.warmupSeconds,
    bySecond: result.bySecond,
  };
}

/**
 * Measures figure 6; returns its rows.
 * @param {object} options
 * @param {string} options.work
 * @param {number} options.rate requests per second
 * @param {number} options.seconds of the measured load
 * @param {number} options.warmupSeconds
 * @param {number} options.maxJobs `--max-jobs` of the integrator
 * @param {import('../lib/env.mjs').Log} options.log
 */
export async function integratorFigure({ work, rate, seconds, warmupSeconds, maxJobs, log }) {
  const stateDir = path.join(work, 'runtask-state');
  const saturationDir = path.join(work, 'runtask-state-saturation');
  const script = (/** @type {string} */ name) => path.join(ROOT, 'bench', 'integrator', name);
  /** @type {UrlServer} */
  const receiver = await startServer(process.execPath, [script('receiver.mjs')]);
  const platformUrl = receiver.doc.url;
  const signedRequest = await requestSigner(HMAC_KEY);
  const build = (/** @type {number} */ n) => signedRequest(n, platformUrl);
  try {
    log(`integrator: bare node:http server, ${rate} requests/s for ${seconds} s`);
    /** @type {UrlServer} */
    const bare = await startServer(process.execPath, [script('bare-server.mjs')]);
    const reference = summarize(await load(bare.doc.url, { rate, seconds, warmupSeconds, build }), rate);
    await bare.stop();

    /**
     * `provider runtask serve` with the figure's settings and its own state dir.
     * @param {string} stateDir
     * @returns {Promise<UrlServer>}
     */
    const startServe = (stateDir) =>
      startServer(
        process.execPath,
        [
          ...profile('runtask-serve'),
          ...(process.env.BENCH_LOOP_MONITOR
            ? ['--import', path.join(ROOT, 'bench', 'lib', 'loop-monitor.mjs')]
            : []),
          ...[BIN, 'runtask', 'serve', '--json', '--port', '0', '--exec', HANDLER],
          ...['--max-jobs', String(maxJobs), '--platform-host', platformUrl, '--state-dir', stateDir],
          ...(process.env.BENCH_NO_DRAIN ? ['--grace', '1ms'] : []),
        ],
        {
          env: cleanEnv({
            RUNTASK_HMAC_KEY: HMAC_KEY,
            ...(process.env.UV_THREADPOOL_SIZE ? { UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE } : {}),
          }),
          cwd: work,
          ...(process.env.BENCH_LOOP_MONITOR
            ? {
                stderr: 'pipe',
                onLine: (line) => /"loop"|^TIMING|Mark-Compact|Scavenge/.test(line) && log(line),
              }
            : {}),
        },
      );

    log(`integrator: provider runtask serve --max-jobs ${maxJobs}, ${rate} requests/s for ${seconds} s`);
    const serve = await startServe(stateDir);
    const started = Date.now();
    const loaded = await load(serve.doc.url, { rate, seconds, warmupSeconds, build });
    const ours = summarize(loaded, rate);
    // Every accepted job runs 2 s, at most maxJobs at once: allow for that, with room to spare.
    const drainMs = process.env.BENCH_NO_DRAIN ? 0 : (loaded.accepted.length / maxJobs) * 2000 * 2 + 30_000;
    log(
      `integrator: waiting for ${loaded.accepted.length} final callbacks (at most ${Math.round(drainMs / 1000)} s)`,
    );
    const after = await awaitFinals(platformUrl, loaded.accepted.length, drainMs);
    const finalIds = new Set(after.ids);
    const lost = [...loaded.accepted].filter(
      (n) => !finalIds.has(`taskrs-bench${String(n).padStart(7, '0')}`),
    );
    const drainedS = ((after.lastFinalAt ?? Date.now()) - started) / 1000;
    await serve.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });

    // The most each server acknowledges, with clients sending back to back. The integrator's accepted jobs
    // then pile up (2 s each, maxJobs at once): it is killed afterwards, its journal discarded.
    const { connections, seconds: saturationS, warmupSeconds: saturationWarmupS } = SATURATION;
    log(
      `integrator: saturation, ${connections} connections back to back for ${saturationS} s after ${saturationWarmupS} s, each server`,
    );
    /** @type {UrlServer} */
    const bare2 = await startServer(process.execPath, [script('bare-server.mjs')]);
    const saturation = { connections, seconds: saturationS, warmupSeconds: saturationWarmupS, build };
    const bareMax = await saturate(bare2.doc.url, saturation);
    await bare2.stop();
    const serve2 = await startServe(saturationDir);
    const oursMax = await saturate(serve2.doc.url, { ...saturation, first: 1e6 });
    await serve2.stop('SIGKILL');
    fs.rmSync(saturationDir, { recursive: true, force: true });

    const load1 = `${rate}/s for ${seconds} s after ${warmupSeconds} s, sleep 2, --max-jobs ${maxJobs}`;
    return [
      limitRow({
        id: 'integrator.p99',
        figure: `integrator: p99 acknowledgement latency less the load generator's p99 lag (${load1})`,
        ours: ours.p99LessLagMs,
        baseline: reference.p99LessLagMs,
        baselineLabel: 'bare node:http',
        unit: 'ms',
        limit: 15,
        details: { bare: reference, ours },
      }),
      infoRow({
        id: 'integrator.p99-with-start',
        figure: `integrator: p99 acknowledgement latency, the first ${warmupSeconds} s included (cold start)`,
        ours: ours.withStartMs.p99,
        baseline: reference.withStartMs.p99,
        baselineLabel: 'bare node:http',
        unit: 'ms',
      }),
      limitRow({
        id: 'integrator.callbacks',
        figure: `integrator: accepted requests without their final callback (of ${loaded.accepted.length})`,
        ours: lost.length,
        unit: 'lost',
        limit: 0,
        details: {
          accepted: loaded.accepted.length,
          finals: after.finals,
          duplicates: after.duplicates,
          runningCallbacks: after.running,
          lastFinalAfterS: drainedS,
        },
      }),
      ratioRow({
        id: 'integrator.throughput',
        figure: `integrator: acknowledgement throughput under the steady load (${rate}/s)`,
        ours: ours.throughput,
        baseline: reference.throughput,
        baselineLabel: 'bare node:http',
        unit: 'req/s',
        limit: 0.6,
        atLeast: true,
      }),
      ratioRow({
        id: 'integrator.throughput-saturation',
        figure: `integrator: the most acknowledgements per second (${connections} connections, back to back, after ${saturationWarmupS} s)`,
        ours: oursMax.throughput,
        baseline: bareMax.throughput,
        baselineLabel: 'bare node:http',
        unit: 'req/s',
        limit: 0.3,
        atLeast: true,
        details: { bare: bareMax, ours: oursMax },
      }),
    ];
  } finally {
    await receiver.stop();
  }
}
