// Figure 5 — start-up, run round-robin many times; the medians are compared:
//   - `provider --version`, `provider --help` and `provider verify --help` (a command's help, which loads the
//     command declarations and nothing else), against `node -e 0`;
//   - `provider versions list`, up to its first API request (a command that resolves its settings and token, loads
//     the HTTP client and sends), against got's own floor: got alone, bundled as the package is and run with
//     Node's compile cache, sending one GET (bench/baseline/got-request.mjs). The emulator (with the fixture
//     release published) sits behind a proxy in this process that notes when each run's first request arrives;
//     the run itself goes on to its end.
// The other floors, and the first request against `node -e 0`, are shown for information.
import * as http from 'node:http';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { BIN, ROOT, SIGNER_PUBLIC_KEY, cleanEnv } from '../lib/env.mjs';
import { startEmulator } from '../lib/emulator.mjs';
import { expectOk, median, provider, run } from '../lib/proc.mjs';
import { infoRow, ratioRow } from '../lib/rows.mjs';

/**
 * The targets, ratios of medians: `provider --version` and each help to `node -e 0`; the first request to got's
 * floor (`startup.floor.gotRequest`). Against `node -e 0` the first request sits on got's floor, not the program's:
 * got alone takes 2.4–3.0 × `node -e 0` to its GET (it loads http2-wrapper, cacheable-request and node:https at
 * its top level), so the program's own part (the arguments, the settings, the token, the command) is held to
 * got's floor instead (docs/performance.md).
 */
const LIMITS = { version: 1.8, help: 1.8, verifyHelp: 1.8, firstRequest: 1.8 };

/**
 * A proxy to `target` on a free loopback port that notes when the first request after each `arm()` arrives.
 * @param {string} target the emulator's URL
 */
async function recordingProxy(target) {
  const upstream = new URL(target);
  /** @type {bigint | undefined} */
  let first;
  const server = http.createServer((req, res) => {
    first ??= process.hrtime.bigint();
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}`,
    arm() {
      first = undefined;
    },
    /** When the first request since `arm()` arrived (process.hrtime), if one did. */
    first: () => first,
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}

/** The floors' scripts (bench/baseline/). */
const BASELINES = path.join(ROOT, 'bench', 'baseline');

/**
 * Bundles bench/baseline/got-request.mjs into `work` as scripts/bundle.mjs bundles the package (one CommonJS
 * file for Node 22.14); resolves with its path.
 * @param {string} work
 */
async function bundleGotRequest(work) {
  const outfile = path.join(work, 'got-request.bundle.cjs');
  await esbuild.build({
    entryPoints: [path.join(BASELINES, 'got-request.mjs')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22.14',
    format: 'cjs',
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * Runs `args` (node's arguments) once, to its end; resolves with the ms from its spawn to the first request the
 * proxy saw.
 * @param {Awaited<ReturnType<typeof recordingProxy>>} proxy
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {string} name
 * @param {string} cwd
 */
async function untilFirstRequest(proxy, args, env, name, cwd) {
  proxy.arm();
  const started = process.hrtime.bigint();
  expectOk(await run(process.execPath, args, { cwd, env }), name);
  const first = proxy.first();
  if (first === undefined) throw new Error(`${name} sent no request`);
  return Number(first - started) / 1e6;
}

/**
 * Measures figure 5; returns the rows `wants` asks for (`node -e 0` runs whatever is asked, the rest only for a
 * row asked for).
 * @param {{ work: string, reps: number, wants: (id: string) => boolean, log: import('../lib/env.mjs').Log }} options
 */
export async function startupFigure({ work, reps, wants, log }) {
  const emulator = await startEmulator({ dir: work });
  const proxy = await recordingProxy(emulator.url);
  try {
    const env = cleanEnv({ TFE_TOKEN: emulator.ownerToken });
    const organization = ['--organization', emulator.organization];
    const release = path.join(ROOT, 'fixtures', 'release');
    const publish = [
      'publish',
      release,
      '--key',
      SIGNER_PUBLIC_KEY,
      '--hostname',
      emulator.url,
      ...organization,
    ];
    expectOk(await provider(publish, { env, cwd: work }), 'publishing the fixture release');
    const list = [BIN, 'versions', 'list', '--name', 'example', '--hostname', proxy.url, ...organization];
    /** @type {Record<'node' | 'version' | 'help' | 'verifyHelp' | 'emptyModule' | 'commander', string[]>} */
    const cases = {
      node: ['-e', '0'],
      version: [BIN, '--version'],
      help: [BIN, '--help'],
      verifyHelp: [BIN, 'verify', '--help'],
      emptyModule: [path.join(BASELINES, 'empty-module.mjs')],
      commander: [path.join(BASELINES, 'commander-parse.cjs')],
    };
    /** @type {Record<keyof typeof cases | 'firstRequest' | 'bareRequest' | 'gotRequest', number[]>} */
    const times = {
      ...{ node: [], version: [], help: [], verifyHelp: [], emptyModule: [], commander: [] },
      ...{ firstRequest: [], bareRequest: [], gotRequest: [] },
    };
    const floorNames = ['emptyModule', 'commander', 'bareRequest', 'gotRequest'];
    // `node -e 0` runs whatever is asked; got's floor also for the first request's target row, its baseline.
    const firstRequestRows = ['startup.firstRequest', 'startup.firstRequest.node'];
    const asked = (/** @type {string} */ name) =>
      name === 'node' ||
      (name === 'firstRequest' && firstRequestRows.some(wants)) ||
      (name === 'gotRequest' && wants('startup.firstRequest')) ||
      wants(floorNames.includes(name) ? `startup.floor.${name}` : `startup.${name}`);
    const measured = Object.entries(cases).filter(([name]) => asked(name));
    log(
      `start-up: ${reps} rounds of ${[...measured.map(([name]) => name), 'firstRequest', 'bareRequest', 'gotRequest'].filter(asked).join(', ')}`,
    );
    const gotBundle = asked('gotRequest') ? await bundleGotRequest(work) : undefined;
    // Round -1 is not counted: it fills Node's compile cache for the got bundle, just written in `work`, and for
    // any chunk of the package no earlier run loaded, so that every program is measured as a user's second run.
    for (let i = -1; i < reps; i++) {
      /** @type {(name: keyof typeof times, ms: number) => void} */
      const note = (name, ms) => {
        if (i >= 0) times[name].push(ms);
      };
      for (const [name, args] of measured) {
        note(
          /** @type {keyof typeof cases} */ (name),
          expectOk(await run(process.execPath, args, { cwd: work }), name).ms,
        );
      }
      if (asked('firstRequest'))
        note('firstRequest', await untilFirstRequest(proxy, list, env, 'versions list', work));
      const bare = [path.join(BASELINES, 'first-request.mjs'), proxy.url];
      if (asked('bareRequest'))
        note('bareRequest', await untilFirstRequest(proxy, bare, env, 'first-request.mjs', work));
      if (gotBundle !== undefined) {
        const got = [path.join(BASELINES, 'got-first-request.cjs'), gotBundle, proxy.url];
        note('gotRequest', await untilFirstRequest(proxy, got, env, 'got-first-request.cjs', work));
      }
    }
    const node = median(times.node);
    const got = median(times.gotRequest);
    /** @type {Record<keyof typeof LIMITS, string>} */
    const labels = {
      version: 'provider --version',
      help: 'provider --help',
      verifyHelp: 'provider verify --help',
      firstRequest: 'provider versions list, to its first API request,',
    };
    const rows = /** @type {(keyof typeof LIMITS)[]} */ (Object.keys(LIMITS)).map((name) =>
      name === 'firstRequest'
        ? ratioRow({
            id: 'startup.firstRequest',
            figure: `start-up: ${labels[name]} vs got alone sending one GET (median of ${reps})`,
            ours: median(times.firstRequest),
            baseline: got,
            baselineLabel: 'got alone',
            unit: 'ms',
            limit: LIMITS[name],
            details: { runsMs: times.firstRequest, gotRunsMs: times.gotRequest, nodeRunsMs: times.node },
          })
        : ratioRow({
            id: `startup.${name}`,
            figure: `start-up: ${labels[name]} vs node -e 0 (median of ${reps})`,
            ours: median(times[name]),
            baseline: node,
            baselineLabel: 'node -e 0',
            unit: 'ms',
            limit: LIMITS[name],
            details: { runsMs: times[name], nodeRunsMs: times.node },
          }),
    );
    if (times.firstRequest.length > 0)
      rows.push(
        infoRow({
          id: 'startup.firstRequest.node',
          figure: `  the same vs node -e 0`,
          ours: median(times.firstRequest),
          baseline: node,
          baselineLabel: 'node -e 0',
          unit: 'ms',
        }),
      );
    // The floors, for information: what no program of ours can beat, measured the same way.
    const floors = {
      emptyModule: 'an empty ES module (the floor of any ES module program)',
      commander:
        'a CommonJS script that only loads commander and parses `versions list` (the floor of any command of a commander program)',
      bareRequest:
        'an ES module that only loads node:http and sends one GET, to that request (the floor of any first request)',
      gotRequest:
        "got alone, bundled and cached as the package is, sending one GET, to that request (the first request's baseline)",
    };
    for (const [name, label] of /** @type {[keyof typeof floors, string][]} */ (Object.entries(floors)))
      rows.push(
        infoRow({
          id: `startup.floor.${name}`,
          figure: `  floor: ${label}, vs node -e 0`,
          ours: median(times[name]),
          baseline: node,
          baselineLabel: 'node -e 0',
          unit: 'ms',
          details: { runsMs: times[name] },
        }),
      );
    return rows.filter((row) => wants(row.id));
  } finally {
    await proxy.close();
    await emulator.stop();
  }
}
