// `provider publish` and the documented curl flow, each against a fresh emulator, measured the same way.
import * as path from 'node:path';
import { BASELINE_SCRIPT, BIN, ROOT, SIGNER_KEY_ID, SIGNER_PUBLIC_KEY, cleanEnv, profile } from './env.mjs';
import { startEmulator } from './emulator.mjs';
import { expectOk, run } from './proc.mjs';

/**
 * Milestones of a publish run, from its plain progress lines on stderr (ms since the process started).
 * @type {[string, RegExp][]}
 */
const MILESTONES = [
  ['verify', /^Verifying /],
  ['read', /^Reading /],
  ['uploads', /^Uploading \d+ files?/],
  ['uploaded', /^Uploaded \d+ files?$/],
  ['wait', /^Waiting for the registry/],
  ['check', /^Checking what terraform init/],
  ['checked', /^terraform init will accept/],
];

/**
 * When each milestone was reached (ms), of those that were.
 * @param {{ ms: number, line: string }[]} timeline
 */
function milestones(timeline) {
  /** @type {Record<string, number>} */
  const found = {};
  for (const entry of timeline) {
    for (const [name, pattern] of MILESTONES)
      if (found[name] === undefined && pattern.test(entry.line)) found[name] = entry.ms;
  }
  return found;
}

/**
 * One `provider publish` of `release` into a fresh emulator; resolves with its wall time and milestones.
 * @param {object} options
 * @param {string} options.work the folder publish runs in
 * @param {import('./release.mjs').Release} options.release
 * @param {import('./emulator.mjs').Network} [options.network]
 * @param {number} [options.concurrency] `--concurrency` (default: publish's own)
 * @param {boolean} [options.peakRss] also measure the peak resident set size
 * @param {boolean} [options.cpu] also measure the CPU time (user + system)
 * @param {string} [options.label] names the CPU profile (BENCH_PROFILE)
 * @param {string[]} [options.extra] more flags (`--verify-first`)
 */
export async function publishOnce({
  work,
  release,
  network = {},
  concurrency,
  peakRss = false,
  cpu = false,
  label = 'publish',
  extra = [],
}) {
  const emulator = await startEmulator({ dir: work, ...network });
  try {
    // PUB_BIN: another build's bin/provider.cjs, for an A/B of two builds on the same release (the emulator stays
    // this checkout's; give each build its own HOME, or their compile caches take turns).
    const args = [process.env.PUB_BIN ?? BIN, 'publish', release.dir, '--key', SIGNER_PUBLIC_KEY];
    args.push('--hostname', emulator.url, '--organization', emulator.organization);
    if (concurrency) args.push('--concurrency', String(concurrency));
    args.push(...extra);
    /** @type {{ ms: number, line: string }[]} */
    const timeline = [];
    const result = await run(process.execPath, [...profile(label), ...args], {
      env: cleanEnv({ TFE_TOKEN: emulator.ownerToken }),
      cwd: work,
      peakRss,
      cpu,
      timeline,
    });
    expectOk(result, 'provider publish');
    return { ms: result.ms, peakKiB: result.peakKiB, cpuMs: result.cpuMs, milestones: milestones(timeline) };
  } finally {
    await emulator.stop();
  }
}

/**
 * One run of bench/baseline/publish-with-curl.sh into a fresh emulator; resolves with its wall time.
 * @param {{ work: string, release: import('./release.mjs').Release, network?: import('./emulator.mjs').Network }} options
 */
export async function curlOnce({ work, release, network = {} }) {
  const emulator = await startEmulator({ dir: work, ...network });
  try {
    const env = cleanEnv({
      ...{ BASE_URL: emulator.url, TOKEN: emulator.ownerToken, ORG: emulator.organization },
      ...{ NAME: release.name, VERSION: release.version, KEY_ID: SIGNER_KEY_ID },
    });
    const result = expectOk(
      await run('bash', [BASELINE_SCRIPT, release.dir], { env, cwd: work }),
      'publish-with-curl.sh',
    );
    return { ms: result.ms };
  } finally {
    await emulator.stop();
  }
}

/**
 * One run of bench/baseline/bare-publish.mjs (create, PUT each file one by one with fetch, no checks) into a
 * fresh emulator; resolves with its wall time, CPU time (user + system) and peak resident set size.
 * @param {{ work: string, release: import('./release.mjs').Release }} options
 */
export async function bareOnce({ work, release }) {
  const emulator = await startEmulator({ dir: work });
  try {
    const env = cleanEnv({
      ...{ BASE_URL: emulator.url, TOKEN: emulator.ownerToken, ORG: emulator.organization },
      ...{ NAME: release.name, VERSION: release.version, KEY_ID: SIGNER_KEY_ID },
    });
    const script = path.join(ROOT, 'bench', 'baseline', 'bare-publish.mjs');
    const result = expectOk(
      await run(process.execPath, [...profile('bare-publish'), script, release.dir], {
        env,
        cwd: work,
        peakRss: true,
        cpu: true,
      }),
      'bare-publish.mjs',
    );
    return { ms: result.ms, cpuMs: result.cpuMs, peakKiB: result.peakKiB };
  } finally {
    await emulator.stop();
  }
}

/**
 * The hashes publish's verification takes, with the standard tools on every core (page cache warm): each zip
 * read by `sha256sum` (its zh:, the platform's shasum) and its content inflated by `unzip -p` into `sha256sum`
 * (its h1:), `nproc` zips at a time. Verifying before any write costs at least this; `sha256sum` alone, the
 * ideal's term until the bench measured deflated zips, never inflates.
 * @param {import('./release.mjs').Release} release
 */
export async function hashOnce(release) {
  const each = 'set -o pipefail; sha256sum "$1" >/dev/null && unzip -p "$1" | sha256sum >/dev/null';
  const script = `printf '%s\\0' "$@" | xargs -0 -n 1 -P "$(nproc)" bash -c '${each}' zip`;
  const result = expectOk(
    await run('bash', ['-c', script, 'hashes', ...release.zips]),
    'sha256sum + unzip -p',
  );
  return { ms: result.ms };
}

/**
 * One `provider verify` of the release (its signature included): the same hashes as `hashOnce`, taken by the
 * program itself, and the verification publish makes before its first write. Resolves with its wall time, CPU
 * time (user + system of the process and its threads) and peak resident set size, measured as `bareOnce`'s.
 * @param {import('./release.mjs').Release} release
 * @param {string} work
 * @param {string} [label] names the CPU profile (BENCH_PROFILE)
 */
export async function verifyOnce(release, work, label = 'verify') {
  const args = [BIN, 'verify', release.dir, '--key', SIGNER_PUBLIC_KEY, '--json'];
  const result = expectOk(
    await run(process.execPath, [...profile(label), ...args], { cwd: work, peakRss: true, cpu: true }),
    'provider verify',
  );
  return { ms: result.ms, cpuMs: result.cpuMs, peakKiB: result.peakKiB };
}
