// Where things are, and the few constants every benchmark shares.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = path.join(ROOT, 'bin', 'provider.cjs');
export const KEYS = path.join(ROOT, 'fixtures', 'keys');
export const SIGNER_PUBLIC_KEY = path.join(KEYS, 'signer.pub.asc');
export const SIGNER_KEY_ID = fs.readFileSync(path.join(KEYS, 'signer.keyid'), 'utf8').trim();
export const BASELINE_SCRIPT = path.join(ROOT, 'bench', 'baseline', 'publish-with-curl.sh');
export const RESULTS = path.join(ROOT, 'bench', 'results');
export const MiB = 1024 * 1024;

/** @typedef {(text: string) => unknown} Log a progress line for the person running the benchmarks (stderr) */

/**
 * A fresh work folder under the temporary folder, marked as a project root (no config file above it).
 * @param {string} label
 * @returns {string}
 */
export function workDir(label) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `provider-bench-${label}-`)));
  fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/bench\n');
  return dir;
}

/**
 * The environment every measured command gets: nothing of the caller's but PATH and HOME.
 * @param {Record<string, string>} [extra]
 * @returns {NodeJS.ProcessEnv}
 */
export function cleanEnv(extra = {}) {
  return { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...extra };
}

/**
 * With BENCH_PROFILE=<dir>, node flags that write a CPU profile of the measured program there (named by `label`).
 * @param {string} label
 * @returns {string[]}
 */
export function profile(label) {
  const dir = process.env.BENCH_PROFILE;
  const extra = process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : [];
  return dir
    ? [...extra, '--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', `${label}-${Date.now()}.cpuprofile`]
    : extra;
}
