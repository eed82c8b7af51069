// Loaded with `node --import` into a measured process when BENCH_LOOP_MONITOR is set: every second, one JSON
// line on stderr with the event loop's utilization and delay (p50/p99/max, ms) over that second. A diagnostic
// for the integrator figure; it is not used for any figure.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();
let last = performance.eventLoopUtilization();
const timer = setInterval(() => {
  const now = performance.eventLoopUtilization();
  const elu = performance.eventLoopUtilization(now, last);
  last = now;
  const ms = (/** @type {number} */ n) => Math.round(n / 1e4) / 100;
  process.stderr.write(
    `${JSON.stringify({ loop: { elu: Math.round(elu.utilization * 100) / 100, p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), rssMB: Math.round(process.memoryUsage.rss() / 1e6) } })}\n`,
  );
  histogram.reset();
}, 1000);
timer.unref();
