// The mirror figure's world: an origin emulator holding several versions of `example`, published into it with
// `provider publish` (not timed), and one run of each side into a fresh destination emulator: `provider mirror`,
// and bench/baseline/mirror-with-curl.sh. Each run is checked afterwards (not timed) to have left every version
// with every platform in the destination.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIN, MiB, ROOT, SIGNER_PUBLIC_KEY, cleanEnv, profile } from './env.mjs';
import { startEmulator } from './emulator.mjs';
import { expectOk, run } from './proc.mjs';
import { NAME, makeRelease } from './release.mjs';

export const MIRROR_SCRIPT = path.join(ROOT, 'bench', 'baseline', 'mirror-with-curl.sh');

/**
 * A running origin and what it holds.
 * @typedef {object} Origin
 * @property {import('./emulator.mjs').Emulator} emulator
 * @property {string[]} versions
 * @property {string[]} platforms
 * @property {number} bytes the bytes a mirror moves: every zip, SHA256SUMS and signature of every version
 * @property {number} ratio the zips' size over their content's
 * @property {string} home a HOME whose credentials.tfrc.json holds the origin's token, by host and port
 */

/**
 * Starts an origin emulator and publishes into it one goreleaser-shaped release per version (`platforms` zips
 * of `sizeMiB` executables each), generated under `dir` and removed once published.
 * @param {object} options
 * @param {string} options.dir
 * @param {string[]} options.versions
 * @param {string[]} options.platforms
 * @param {number} options.sizeMiB
 * @param {import('./env.mjs').Log} options.log
 * @returns {Promise<Origin>}
 */
export async function startOrigin({ dir, versions, platforms, sizeMiB, log }) {
  // Its downloads answer byte ranges, as the storage behind registry.terraform.io and GitHub releases does: the
  // mirror streams each zip from it into the destination.
  const emulator = await startEmulator({ dir, ranges: true });
  try {
    let bytes = 0;
    let [zipBytes, contentBytes] = [0, 0];
    for (const version of versions) {
      log(
        `mirror: generating ${version} (${platforms.length} × ${sizeMiB} MiB) and publishing it to the origin`,
      );
      const release = await makeRelease(path.join(dir, `origin-${version}`), {
        version,
        size: sizeMiB * MiB,
        platforms,
        shape: 'goreleaser',
      });
      const args = [BIN, 'publish', release.dir, '--key', SIGNER_PUBLIC_KEY];
      args.push('--hostname', emulator.url, '--organization', emulator.organization);
      const env = cleanEnv({ TFE_TOKEN: emulator.ownerToken });
      expectOk(
        await run(process.execPath, args, { env, cwd: dir }),
        `provider publish ${version} to the origin`,
      );
      const moved = [...release.zips, release.shasums, `${release.shasums}.sig`];
      bytes += moved.reduce((sum, file) => sum + fs.statSync(file).size, 0);
      const zips = release.zips.reduce((sum, file) => sum + fs.statSync(file).size, 0);
      zipBytes += zips;
      contentBytes += zips / release.ratio;
      fs.rmSync(release.dir, { recursive: true, force: true });
    }
    const home = fs.mkdtempSync(path.join(dir, 'mirror-home-'));
    fs.mkdirSync(path.join(home, '.terraform.d'));
    const credentials = { [new URL(emulator.url).host]: { token: emulator.ownerToken } };
    fs.writeFileSync(
      path.join(home, '.terraform.d', 'credentials.tfrc.json'),
      JSON.stringify({ credentials }),
    );
    return { emulator, versions, platforms, bytes, ratio: zipBytes / contentBytes, home };
  } catch (error) {
    await emulator.stop();
    throw error;
  }
}

/**
 * What one run of either side took: wall time, CPU time (user + system, GNU time) and peak RSS; for
 * `provider mirror`, also when each version's steps began.
 * @typedef {{ ms: number, cpuMs: number | undefined, peakKiB: number | undefined, milestones?: Record<string, number> }} MirrorRun
 */

/** The steps of each version in a mirror's progress lines on stderr: the version's start, then its verification. */
const STEPS = /** @type {const} */ ([
  ['mirroring', /^Mirroring \S+ (\S+) \(/],
  ['verifying', /^Verifying \S+ (\S+) in /],
]);

/**
 * When each version's steps began (ms since the start), as `<version> <step>`; the publish that follows a
 * verification prints nothing of its own, so it runs from there to the next version's start (or the end).
 * @param {{ ms: number, line: string }[]} timeline
 */
function milestones(timeline) {
  /** @type {Record<string, number>} */
  const found = {};
  for (const { ms, line } of timeline) {
    for (const [step, pattern] of STEPS) {
      const version = pattern.exec(line)?.[1];
      if (version !== undefined) found[`${version} ${step}`] ??= ms;
    }
  }
  return found;
}

/**
 * One `provider mirror` of every version of the origin into a fresh destination emulator, as a user runs it:
 * the destination's token in TFE_TOKEN, the origin's in credentials.tfrc.json (TFE_TOKEN is never sent to an
 * origin), the versions as one constraint that selects all of them.
 * @param {{ work: string, origin: Origin, label: string }} options
 * @returns {Promise<MirrorRun>}
 */
export async function mirrorOnce({ work, origin, label }) {
  const destination = await startEmulator({ dir: work });
  try {
    const args = [BIN, 'mirror', `${origin.emulator.organization}/${NAME}`, '--from', origin.emulator.url];
    args.push('--versions', `>= ${origin.versions[0]}`);
    args.push('--hostname', destination.url, '--organization', destination.organization);
    /** @type {{ ms: number, line: string }[]} */
    const timeline = [];
    const result = await run(process.execPath, [...profile(label), ...args], {
      env: cleanEnv({ TFE_TOKEN: destination.ownerToken, HOME: origin.home }),
      cwd: work,
      peakRss: true,
      cpu: true,
      timeline,
    });
    expectOk(result, 'provider mirror');
    await expectMirrored(destination, origin);
    const { ms, cpuMs, peakKiB } = result;
    return { ms, cpuMs, peakKiB, milestones: milestones(timeline) };
  } finally {
    await destination.stop();
  }
}

/**
 * One run of bench/baseline/mirror-with-curl.sh into a fresh destination emulator, downloading into a folder of
 * its own under `work` (removed after the run).
 * @param {{ work: string, origin: Origin }} options
 * @returns {Promise<MirrorRun>}
 */
export async function curlMirrorOnce({ work, origin }) {
  const destination = await startEmulator({ dir: work });
  const dir = fs.mkdtempSync(path.join(work, 'curl-mirror-'));
  try {
    const env = cleanEnv({
      ...{ ORIGIN_URL: origin.emulator.url, ORIGIN_TOKEN: origin.emulator.ownerToken },
      ...{ NAMESPACE: origin.emulator.organization, NAME },
      ...{ VERSIONS: origin.versions.join(' '), PLATFORMS: origin.platforms.join(' ') },
      ...{ BASE_URL: destination.url, TOKEN: destination.ownerToken, ORG: destination.organization },
    });
    const result = await run('bash', [MIRROR_SCRIPT, dir], { env, cwd: work, peakRss: true, cpu: true });
    expectOk(result, 'mirror-with-curl.sh');
    await expectMirrored(destination, origin);
    return { ms: result.ms, cpuMs: result.cpuMs, peakKiB: result.peakKiB };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await destination.stop();
  }
}

/**
 * Throws unless the destination serves every version of the origin with every platform (its consumer view lists
 * a version once both checksum files and its platforms' zips are uploaded).
 * @param {import('./emulator.mjs').Emulator} destination
 * @param {Origin} origin
 */
async function expectMirrored(destination, origin) {
  const url = `${destination.url}/api/registry/v1/providers/${destination.organization}/${NAME}/versions`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${destination.ownerToken}` } });
  const doc = /** @type {{ versions?: { version: string, platforms: unknown[] }[] }} */ (
    await response.json()
  );
  const served = new Map((doc.versions ?? []).map((v) => [v.version, v.platforms.length]));
  const missing = origin.versions.filter((v) => served.get(v) !== origin.platforms.length);
  if (!response.ok || missing.length > 0)
    throw new Error(`the destination does not serve ${missing.join(', ')} whole: ${JSON.stringify(doc)}`);
}
