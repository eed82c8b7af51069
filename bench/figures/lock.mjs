// Figure 10 — `provider lock upgrade` of 40 lock files, each naming the same 3 private providers, from 1.0.0 to
// the 1.1.0 the registry serves (5 platforms each, goreleaser-shaped zips of about 16 MiB), against
// bench/baseline/lock-with-curl.sh downloading each of the 15 distinct zips once with curl and hashing it with the
// standard tools (sha256sum, and the h1: through unzip -p). The baseline checks no signature and writes nothing;
// `provider lock upgrade` verifies each version as `provider check --download` does and rewrites the 40 files.
// The registry is one `provider emulate` on loopback without byte ranges, as the platform's download links
// document none. Then a second run of the same upgrade (the lock files set back to 1.0.0, the same hash cache):
// it must download no zip, within 1.5 s. Each run of ours is checked afterwards (not timed): every file moved,
// with the h1: the baseline computed; its request log with each zip fetched once (a GET without Range) in a first
// run, and no zip asked for at all in a second. The sides alternate, and which goes first alternates too.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIN, MiB, SIGNER_PUBLIC_KEY, cleanEnv } from '../lib/env.mjs';
import { startEmulator } from '../lib/emulator.mjs';
import { expectOk, median, run } from '../lib/proc.mjs';
import { makeRelease } from '../lib/release.mjs';
import { limitRow, processRows } from '../lib/rows.mjs';

const SCRIPT = path.join(
  path.dirname(new URL(import.meta.url).pathname),
  '..',
  'baseline',
  'lock-with-curl.sh',
);
const NAMES = ['alpha', 'bravo', 'charlie'];
const PLATFORMS = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];
const FILES = 40;
const FROM = '1.0.0';
const TO = '1.1.0';
const MB = 1e6;

/**
 * Measures figure 10; returns its rows (first run's wall, CPU and peak RSS against the baseline; second run's
 * wall) that `wants` asks for.
 * @param {object} options
 * @param {string} options.work
 * @param {number} options.exeMiB each executable's size (33 MiB deflates to a zip of about 16 MiB)
 * @param {number} options.reps runs of each side
 * @param {(id: string) => boolean} options.wants
 * @param {import('../lib/env.mjs').Log} options.log
 */
export async function lockFigure({ work, exeMiB, reps, wants, log }) {
  const key = `${FILES}x${NAMES.length}x${PLATFORMS.length}`;
  const ids = ['wall', 'cpu', 'rss', 'cached'].map((suffix) => `lock.${key}.${suffix}`);
  if (!ids.some(wants)) return [];
  const dir = path.join(work, `lock-${key}`);
  fs.mkdirSync(dir, { recursive: true });
  const requestLog = path.join(dir, 'requests.jsonl');
  const emulator = await startEmulator({ dir, requestLog });
  /** @type {Record<'ours' | 'curl', { ms: number[], cpuMs: number[], peakMB: number[] }>} */
  const runs = { ours: { ms: [], cpuMs: [], peakMB: [] }, curl: { ms: [], cpuMs: [], peakMB: [] } };
  /** @type {number[]} */
  const cachedMs = [];
  try {
    const zipBytes = await publishAll({ dir, emulator, exeMiB, log });
    /** @type {Map<string, string> | undefined} */
    let expected;
    for (let i = 0; i < reps; i++) {
      const sides = i % 2 === 0 ? ['curl', 'ours'] : ['ours', 'curl'];
      for (const side of sides) {
        log(
          `lock: ${side === 'ours' ? 'provider lock upgrade' : 'lock-with-curl.sh'} of ${key}, run ${i + 1}/${reps}`,
        );
        if (side === 'curl') {
          const { result, h1 } = await curlOnce({ dir, emulator });
          expected ??= h1;
          record(runs.curl, result);
          continue;
        }
        const cache = fs.mkdtempSync(path.join(dir, 'cache-'));
        const first = await oursOnce({ dir, emulator, cache, requestLog, first: true });
        record(runs.ours, first.result);
        const second = await oursOnce({ dir, emulator, cache, requestLog, first: false });
        cachedMs.push(second.result.ms);
        fs.rmSync(cache, { recursive: true, force: true });
        if (expected !== undefined) expectHashes(first.root, expected);
        fs.rmSync(first.root, { recursive: true, force: true });
        fs.rmSync(second.root, { recursive: true, force: true });
      }
    }
    const figure =
      `lock upgrade, ${FILES} lock files × ${NAMES.length} providers × ${PLATFORMS.length} zips of ` +
      `${(zipBytes / (NAMES.length * PLATFORMS.length) / MiB).toFixed(1)} MiB on loopback, every check vs curl + sha256sum + unzip`;
    const rows = [
      ...processRows({
        id: `lock.${key}.wall`,
        figure,
        baselineLabel: 'curl',
        wallLimit: 1.3,
        cpuLimit: null,
        ours: runs.ours,
        baseline: runs.curl,
        details: { runs, zipBytes, files: FILES, names: NAMES, platforms: PLATFORMS },
      }),
      limitRow({
        id: `lock.${key}.cached`,
        figure: '  the same again, hashes from the cache (no zip downloaded)',
        ours: median(cachedMs) / 1000,
        unit: 's',
        limit: 1.5,
        details: { runsMs: cachedMs },
      }),
    ];
    return rows.filter((row) => wants(row.id));
  } finally {
    await emulator.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * @param {{ ms: number[], cpuMs: number[], peakMB: number[] }} side
 * @param {import('../lib/proc.mjs').RunResult} result
 */
function record(side, result) {
  side.ms.push(result.ms);
  side.cpuMs.push(result.cpuMs ?? NaN);
  side.peakMB.push(((result.peakKiB ?? NaN) * 1024) / MB);
}

/**
 * Publishes `TO` of each provider (not timed); returns the bytes of its zips.
 * @param {{ dir: string, emulator: import('../lib/emulator.mjs').Emulator, exeMiB: number, log: import('../lib/env.mjs').Log }} options
 */
async function publishAll({ dir, emulator, exeMiB, log }) {
  let zipBytes = 0;
  for (const name of NAMES) {
    log(`lock: generating ${name} ${TO} (${PLATFORMS.length} × ${exeMiB} MiB) and publishing it`);
    const release = await makeRelease(path.join(dir, `release-${name}`), {
      name,
      version: TO,
      size: exeMiB * MiB,
      platforms: PLATFORMS,
      shape: 'goreleaser',
    });
    const args = [BIN, 'publish', release.dir, '--key', SIGNER_PUBLIC_KEY];
    args.push('--hostname', emulator.url, '--organization', emulator.organization);
    const env = cleanEnv({ TFE_TOKEN: emulator.ownerToken });
    expectOk(await run(process.execPath, args, { env, cwd: dir }), `provider publish ${name} ${TO}`);
    zipBytes += release.zips.reduce((sum, file) => sum + fs.statSync(file).size, 0);
    fs.rmSync(release.dir, { recursive: true, force: true });
  }
  return zipBytes;
}

/**
 * `FILES` configurations under a new folder, each with a lock file naming every provider at `FROM` (and a public
 * provider's block, left alone).
 * @param {string} dir
 * @param {string} host
 * @param {string} org
 */
function lockFiles(dir, host, org) {
  const root = fs.mkdtempSync(path.join(dir, 'configs-'));
  const old = `h1:${Buffer.alloc(32, 1).toString('base64')}`;
  const block = (/** @type {string} */ address) =>
    [
      `provider "${address}" {`,
      `  version     = "${FROM}"`,
      '  constraints = "~> 1.0"',
      '  hashes = [',
      `    "${old}",`,
      '  ]',
      '}',
    ].join('\n');
  const text = [
    '# This file is maintained automatically by "terraform init".',
    '# Manual edits may be lost in future updates.',
    '',
    ...NAMES.map((name) => `${block(`${host}/${org}/${name}`)}\n`),
    block('registry.terraform.io/hashicorp/random'),
    '',
  ].join('\n');
  for (let i = 0; i < FILES; i++) {
    const folder = path.join(root, `stack-${String(i).padStart(2, '0')}`);
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, '.terraform.lock.hcl'), text);
  }
  return root;
}

/**
 * One `provider lock upgrade --recursive` of fresh lock files, with the hash cache `cache`; checked afterwards
 * against the request log (not timed).
 * @param {{ dir: string, emulator: import('../lib/emulator.mjs').Emulator, cache: string, requestLog: string, first: boolean }} options
 */
async function oursOnce({ dir, emulator, cache, requestLog, first }) {
  const root = lockFiles(dir, new URL(emulator.url).host, emulator.organization);
  const logged = readLog(requestLog).length;
  const args = [BIN, 'lock', 'upgrade', root, '--recursive', '--cache-dir', cache];
  args.push('--hostname', emulator.url, '--organization', emulator.organization);
  const env = cleanEnv({ TFE_TOKEN: emulator.ownerToken, HOME: dir });
  const result = expectOk(
    await run(process.execPath, args, { env, cwd: dir, peakRss: true, cpu: true }),
    'provider lock upgrade',
  );
  const zips = readLog(requestLog)
    .slice(logged)
    .filter((r) => r.method === 'GET' && r.object === 'provider-binary');
  const whole = new Map();
  for (const r of zips.filter((r) => r.range === undefined))
    whole.set(r.owner, (whole.get(r.owner) ?? 0) + 1);
  const once = whole.size === NAMES.length * PLATFORMS.length && [...whole.values()].every((n) => n === 1);
  if (first ? !once : zips.length > 0)
    throw new Error(
      `provider lock upgrade (${first ? 'first' : 'second'} run) asked for the zips ${JSON.stringify([...whole])} ` +
        `(${zips.length} requests): each once in a first run, none in a second`,
    );
  return { result, root };
}

/**
 * One run of bench/baseline/lock-with-curl.sh; the h1: it computed for each zip, by `<name> <platform>`.
 * @param {{ dir: string, emulator: import('../lib/emulator.mjs').Emulator }} options
 */
async function curlOnce({ dir, emulator }) {
  const scratch = fs.mkdtempSync(path.join(dir, 'curl-'));
  try {
    const env = cleanEnv({
      ...{ BASE_URL: emulator.url, TOKEN: emulator.ownerToken, ORG: emulator.organization },
      ...{ NAMES: NAMES.join(' '), VERSION: TO, PLATFORMS: PLATFORMS.join(' ') },
    });
    const result = expectOk(
      await run('bash', [SCRIPT, scratch], { env, cwd: dir, peakRss: true, cpu: true }),
      'lock-with-curl.sh',
    );
    const h1 = new Map(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(' '))
        .map(([name, platform, , hash]) => [`${name} ${platform}`, hash ?? '']),
    );
    return { result, h1 };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Throws unless every lock file under `root` holds each provider at `TO` with the h1: the baseline computed.
 * @param {string} root
 * @param {Map<string, string>} expected
 */
function expectHashes(root, expected) {
  for (const folder of fs.readdirSync(root)) {
    const text = fs.readFileSync(path.join(root, folder, '.terraform.lock.hcl'), 'utf8');
    const moved = (text.match(new RegExp(`version     = "${TO.replaceAll('.', '\\.')}"`, 'g')) ?? []).length;
    const missing = [...expected.values()].filter((h1) => !text.includes(`"${h1}"`));
    if (moved !== NAMES.length || missing.length > 0)
      throw new Error(`${folder}: ${moved} providers at ${TO}, h1: missing ${missing.join(', ')}:\n${text}`);
  }
}

/**
 * The request log's records.
 * @param {string} file
 * @returns {{ method: string, object?: string, owner?: string, range?: string }[]}
 */
function readLog(file) {
  if (!fs.existsSync(file)) return [];
  /** @type {{ method: string, object?: string, owner?: string, range?: string }[]} */
  const records = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    /** @type {unknown} */
    const record = JSON.parse(line);
    records.push(/** @type {(typeof records)[number]} */ (record));
  }
  return records;
}
