// A steady, open-loop load generator on node:http: request n is sent at start + n / rate, whatever happened to
// the ones before (a slow server does not slow the load down), over a pool of keep-alive connections. Each
// request's latency runs from its send to the end of its answer; `lagMs` says how late the generator itself
// sent (it must stay near zero for the figures to be about the server).
//
// autocannon's fixed-rate mode is not used: it sends each connection's per-second quota back to back at the
// start of every second (bursts of `rate` requests, not a steady rate), and corrects its histogram for
// coordinated omission with an expected interval of ceil(1 / per-connection rate) = 1 ms, which inflates every
// percentile above 1 ms (autocannon 8/9, lib/httpClient.js and lib/run.js).
import * as http from 'node:http';

/** @typedef {(n: number) => import('./payload.mjs').SignedRequest} Build builds request n */

/**
 * What a steady load measured (ms, requests and requests per second).
 * @typedef {object} SteadyLoadResult
 * @property {number} sent
 * @property {number} ok answered 2xx
 * @property {number} non2xx
 * @property {number} errors no answer (a network error or the timeout)
 * @property {number} total requests planned, warm-up included
 * @property {number} warmupSeconds
 * @property {number[]} latencies of the 2xx answers after the warm-up
 * @property {number[]} warmupLatencies of the 2xx answers during the warm-up
 * @property {number[]} lags how late the generator sent each request
 * @property {number[]} accepted the numbers of the requests answered 2xx
 * @property {number} throughput 2xx answers per second after the warm-up
 * @property {ReturnType<typeof perSecond>} bySecond
 */

/**
 * Sends `rate × (warmupSeconds + seconds)` requests built by `build(n)` (→ {body, headers}) to `url`; resolves
 * with the results. The first `warmupSeconds` of the load are not in `latencies` nor `throughput` (they are in
 * `warmupLatencies`, `accepted` and `bySecond`): the figure is about the steady state, the start is reported apart.
 * @param {string} url
 * @param {object} options
 * @param {number} options.rate requests per second
 * @param {number} options.seconds of the measured load, after the warm-up
 * @param {number} [options.warmupSeconds]
 * @param {Build} options.build
 * @param {number} [options.maxSockets]
 * @param {number} [options.timeoutMs]
 * @returns {Promise<SteadyLoadResult>}
 */
export function steadyLoad(
  url,
  { rate, seconds, warmupSeconds = 0, build, maxSockets = 256, timeoutMs = 10_000 },
) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const warmup = Math.round(rate * warmupSeconds);
  const total = warmup + Math.round(rate * seconds);
  /** @type {number[]} */
  const warmupLatencies = [];
  let measuredOk = 0;
  /** @type {number | undefined} */
  let firstMeasured;
  const interval = 1000 / rate;
  /** @type {number[]} */
  const latencies = [];
  /** @type {number[]} */
  const lags = [];
  /** @type {number[]} */
  const accepted = [];
  const counts = { sent: 0, ok: 0, non2xx: 0, errors: 0 };
  /** @type {number | undefined} */
  let firstSent;
  /** @type {[number, number][] | undefined} [sent at, latency] of each 2xx answer */
  let sentAtList;
  /** @type {number | undefined} */
  let lastAnswer;
  return new Promise((resolve) => {
    let pending = total;
    const settle = () => {
      if (--pending > 0) return;
      agent.destroy();
      const begin = /** @type {number} the first send set it */ (firstMeasured ?? firstSent);
      const spanS = ((lastAnswer ?? begin) - begin) / 1000;
      resolve({
        ...counts,
        total,
        warmupSeconds,
        latencies,
        warmupLatencies,
        lags,
        accepted,
        throughput: measuredOk / Math.max(spanS, seconds),
        bySecond: perSecond(sentAtList ?? []),
      });
    };
    const send = (/** @type {number} */ n, /** @type {number} */ due) => {
      const { body, headers } = build(n);
      const sentAt = performance.now();
      firstSent ??= sentAt;
      if (n >= warmup) firstMeasured ??= sentAt;
      lags.push(sentAt - due);
      counts.sent++;
      const request = http.request(url, {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      });
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => {
          lastAnswer = performance.now();
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            counts.ok++;
            accepted.push(n);
            if (n < warmup) warmupLatencies.push(lastAnswer - sentAt);
            else {
              measuredOk++;
              latencies.push(lastAnswer - sentAt);
            }
            (sentAtList ??= []).push([sentAt - start, lastAnswer - sentAt]);
          } else counts.non2xx++;
          settle();
        });
      });
      request.on('timeout', () => request.destroy(new Error('timeout')));
      request.on('error', () => {
        counts.errors++;
        settle();
      });
      request.end(body);
    };
    const start = performance.now() + 20;
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && start + next * interval <= now) {
        send(next, start + next * interval);
        next++;
      }
      if (next < total) setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    setTimeout(tick, 20);
  });
}

/**
 * p99 and max latency of the requests sent in each second of the load, and how many took over 15 ms.
 * @param {[number, number][]} entries [sent at, latency] in ms
 */
function perSecond(entries) {
  /** @type {(number[] | undefined)[]} */
  const seconds = [];
  for (const [at, ms] of entries) (seconds[Math.floor(at / 1000)] ??= []).push(ms);
  return seconds.map((list) => {
    const sorted = (list ?? []).sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)];
    return {
      n: sorted.length,
      p99: Math.round(p99 ?? 0),
      max: Math.round(sorted[sorted.length - 1] ?? 0),
      over15: sorted.filter((ms) => ms > 15).length,
    };
  });
}

/**
 * A closed-loop load: `connections` clients, each sending its next request as soon as the previous one is
 * answered, for `warmupSeconds` and then `seconds`. Resolves with the answers per second (2xx only) and the count
 * of anything else after the warm-up: the most the server acknowledges when nothing holds the load back, once its
 * code is compiled (a server just started runs its first thousands of requests in the interpreter).
 * @param {string} url
 * @param {{ connections: number, seconds: number, warmupSeconds?: number, build: Build, first?: number }} options
 */
export async function saturate(url, { connections, seconds, warmupSeconds = 0, build, first = 0 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const counts = { ok: 0, other: 0 };
  /** The answers of the warm-up, not counted. */
  const warmup = { ok: 0, other: 0 };
  let next = first;
  const measuredFrom = performance.now() + warmupSeconds * 1000;
  const deadline = measuredFrom + seconds * 1000;
  const one = (/** @type {number} */ n) =>
    /** @type {Promise<void>} */ (
      new Promise((resolve) => {
        const { body, headers } = build(n);
        const request = http.request(url, {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        });
        request.on('response', (response) => {
          response.resume();
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const into = performance.now() < measuredFrom ? warmup : counts;
            if (status >= 200 && status < 300) into.ok++;
            else into.other++;
            resolve();
          });
        });
        request.on('error', () => {
          (performance.now() < measuredFrom ? warmup : counts).other++;
          resolve();
        });
        request.end(body);
      })
    );
  const client = async () => {
    while (performance.now() < deadline) await one(next++);
  };
  await Promise.all(Array.from({ length: connections }, client));
  const elapsedS = (performance.now() - measuredFrom) / 1000;
  agent.destroy();
  return {
    ok: counts.ok,
    other: counts.other,
    seconds: elapsedS,
    throughput: counts.ok / elapsedS,
    warmup: { ...warmup, seconds: warmupSeconds },
  };
}
