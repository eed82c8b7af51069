// Figure 5 — start-up: `provider --version` and `provider --help` against `node -e 0`, run round-robin many
// times; the medians are compared.
import { BIN } from '../lib/env.mjs';
import { expectOk, median, run } from '../lib/proc.mjs';
import { ratioRow } from '../lib/rows.mjs';

/**
 * Measures figure 5; returns its rows.
 * @param {{ work: string, reps: number, log: import('../lib/env.mjs').Log }} options
 */
export async function startupFigure({ work, reps, log }) {
  /** @type {Record<'node' | 'version' | 'help', string[]>} */
  const cases = { node: ['-e', '0'], version: [BIN, '--version'], help: [BIN, '--help'] };
  /** @type {Record<keyof typeof cases, number[]>} */
  const times = { node: [], version: [], help: [] };
  log(`start-up: ${reps} rounds of node -e 0, provider --version, provider --help`);
  for (let i = 0; i < reps; i++) {
    for (const [name, args] of Object.entries(cases)) {
      times[/** @type {keyof typeof cases} */ (name)].push(
        expectOk(await run(process.execPath, args, { cwd: work }), name).ms,
      );
    }
  }
  const node = median(times.node);
  const row = (/** @type {'version' | 'help'} */ name) =>
    ratioRow({
      id: `startup.${name}`,
      figure: `start-up: provider --${name} vs node -e 0 (median of ${reps})`,
      ours: median(times[name]),
      baseline: node,
      baselineLabel: 'node -e 0',
      unit: 'ms',
      limit: 1.6,
      details: { runsMs: times[name] },
    });
  return [row('version'), row('help')];
}
