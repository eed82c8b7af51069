/**
 * Kill and resume: `node bin/provider.cjs publish` spawned as a user runs it, SIGKILLed at a seeded moment —
 * after a random delay, at the start of the k-th request, the instant a create has taken effect but before its
 * answer leaves (between a create and its upload), at the start of an upload held open by a slow archivist or
 * carrying a 3 MB zip (mid-upload), or while it waits for the flags — once or twice; then the same command
 * again (in-process) must finish: the registry ends complete and byte-identical, nothing duplicated, no token on
 * a link, no secret in any output. The emulator runs in this process, so the child is spawned asynchronously.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultRule } from '../../src/emulator/faults.js';
import type { RequestRecord } from '../../src/emulator/requestLog.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import type { CliResult } from '../helpers/result.js';
import { PLATFORMS, RELEASE, publishArgs } from '../commands/publish/helpers.js';
import { FIXTURES, MANIFEST, SIG, SUMS, makeZip, signDetached, zipName } from '../release/helpers.js';
import { removeTempDirs, tempDir, tempRoot } from '../helpers/tmp.js';
import {
  REPLAYING,
  report,
  emulatorSecrets,
  emulatorStateFile,
  expectNoSecretIn,
  expectNoSecretInFiles,
  expectNoTokenOnLinks,
  expectPublishedExactly,
  recordLinks,
  seeded,
  seedsFor,
  tail,
  type Random,
} from './helpers.js';

const BIN = path.join(REPO_ROOT, 'bin', 'provider.cjs');
const SEEDS = seedsFor(700_001, 32);
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** When the child dies. */
type Trigger =
  | { kind: 'timer'; ms: number }
  | { kind: 'request'; k: number }
  | { kind: 'create'; n: number }
  | { kind: 'upload'; n: number }
  | { kind: 'waiting' };

interface Plan {
  seed: number;
  big: boolean;
  concurrency: number;
  flagDelayMs: number;
  faults: FaultRule[];
  kills: Trigger[];
}

function trigger(r: Random, big: boolean): Trigger {
  switch (r.pick(['timer', 'request', 'create', 'create', 'upload', 'upload', 'waiting'] as const)) {
    case 'timer':
      return { kind: 'timer', ms: r.int(50, big ? 1500 : 900) };
    case 'request':
      return { kind: 'request', k: r.int(1, 30) };
    case 'create':
      return { kind: 'create', n: r.int(1, 8) };
    case 'upload':
      return { kind: 'upload', n: r.int(1, 7) };
    case 'waiting':
      return { kind: 'waiting' };
  }
}

function planFor(seed: number): Plan {
  const r = seeded(seed);
  const big = r.chance(0.3);
  const kills = Array.from({ length: r.chance(0.3) ? 2 : 1 }, () => trigger(r, big));
  const slowUploads = !big && (kills.some((k) => k.kind === 'upload') || r.chance(0.3));
  const faults: FaultRule[] = slowUploads
    ? [
        {
          method: 'PUT',
          path: '/_archivist/**',
          delayMs: r.int(80, 250),
          ...(r.chance(0.5) ? { probability: 0.7 } : {}),
        },
      ]
    : [];
  const waiting = kills.some((k) => k.kind === 'waiting');
  return {
    seed,
    big,
    concurrency: r.int(1, 5),
    flagDelayMs: waiting ? r.int(150, 400) : r.chance(0.3) ? r.int(10, 100) : 0,
    faults,
    kills,
  };
}

function describeTrigger(t: Trigger): string {
  switch (t.kind) {
    case 'timer':
      return `after ${t.ms}ms`;
    case 'request':
      return `at the start of request ${t.k}`;
    case 'create':
      return `as create ${t.n} takes effect (before its answer leaves)`;
    case 'upload':
      return `at the start of upload ${t.n}`;
    case 'waiting':
      return 'while waiting for the flags';
  }
}

/** A release of 3 MB zips (random, so incompressible), signed by the fixture signer: uploads take a while. */
async function buildBigRelease(dir: string): Promise<void> {
  const lines: string[] = [];
  const { createHash } = await import('node:crypto');
  const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
  for (const platform of PLATFORMS) {
    const os = platform.split('_')[0];
    const zip = makeZip([
      {
        name: `terraform-provider-example_v1.2.3${os === 'windows' ? '.exe' : ''}`,
        data: randomBytes(3 * 1024 * 1024),
      },
    ]);
    fs.writeFileSync(path.join(dir, zipName(platform)), zip);
    lines.push(`${sha(zip)}  ${zipName(platform)}`);
  }
  const manifest = fs.readFileSync(path.join(RELEASE, MANIFEST));
  fs.writeFileSync(path.join(dir, MANIFEST), manifest);
  lines.push(`${sha(manifest)}  ${MANIFEST}`);
  lines.sort((a, b) => a.slice(66).localeCompare(b.slice(66)));
  const sums = Buffer.from(lines.map((l) => `${l}\n`).join(''));
  fs.writeFileSync(path.join(dir, SUMS), sums);
  const secret = fs.readFileSync(path.join(FIXTURES, 'keys', 'signer.sec.asc'), 'utf8');
  fs.writeFileSync(path.join(dir, SIG), await signDetached(sums, secret));
}

let bigRelease: string;
const outcomes = { killed: 0, finishedFirst: 0, states: new Set<string>() };

/** What the registry held when a child died: `v` version, `p3` platforms created, `u4` files uploaded. */
function stateOf(e: Emulator): string {
  const { versions, platforms } = e.store.data;
  const uploaded =
    versions.flatMap((v) => [v.shasums, v.shasumsSig]).filter((o) => o.uploadedAt !== null).length +
    platforms.filter((p) => p.binary.uploadedAt !== null).length;
  return `${versions.length ? 'v' : '-'}p${platforms.length}u${uploaded}`;
}

beforeAll(async () => {
  recordLinks();
  expect(fs.existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'main.js')), 'npm run build first').toBe(true);
  bigRelease = tempDir('kill-big-release');
  await buildBigRelease(bigRelease);
});

afterAll(() => {
  if (SEEDS.length > 1 && !REPLAYING) {
    report(
      `kill and resume: ${SEEDS.length} seeds, ${outcomes.killed} kills, ${outcomes.finishedFirst} runs finished before their kill; ` +
        `${outcomes.states.size} distinct registry states at a kill: ${[...outcomes.states].sort().join(' ')}`,
    );
  }
});

/** The emulator's request starts and ends, with hooks the kill triggers listen to. */
function instrument(e: Emulator): {
  inFlight: () => number;
  onStart: Set<(method: string, path: string, count: number) => void>;
  onEnd: Set<(record: RequestRecord) => void>;
} {
  let started = 0;
  let ended = 0;
  const onStart = new Set<(method: string, path: string, count: number) => void>();
  const onEnd = new Set<(record: RequestRecord) => void>();
  const decide = e.faults.decide.bind(e.faults);
  e.faults.decide = (method, urlPath) => {
    started++;
    for (const f of onStart) f(method, urlPath, started);
    return decide(method, urlPath);
  };
  const add = e.requestLog.add.bind(e.requestLog);
  e.requestLog.add = (record) => {
    add(record);
    ended++;
    // The record is written as the answer ends, before its last bytes leave: a kill here loses the answer.
    for (const f of onEnd) f(record);
  };
  return { inFlight: () => started - ended, onStart, onEnd };
}

async function killedRun(
  e: Emulator,
  hooks: ReturnType<typeof instrument>,
  plan: Plan,
  kill: Trigger,
  home: string,
): Promise<CliResult> {
  const releaseDir = plan.big ? bigRelease : RELEASE;
  const child = spawn(
    process.execPath,
    [BIN, ...publishArgs(e, ['--concurrency', String(plan.concurrency)], releaseDir)],
    {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        TFE_TOKEN: e.ownerToken,
        NO_COLOR: '1',
        PROVIDER_RETRY_DELAY: '2ms',
        PROVIDER_POLL_INTERVAL: '5ms',
        PROVIDER_HTTP_TIMEOUT: '10s',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const die = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  let timer: NodeJS.Timeout | undefined;
  let puts = 0;
  let creates = 0;
  let requests = 0;
  const start = (method: string): void => {
    requests++;
    if (kill.kind === 'request' && requests === kill.k) die();
    if (method === 'PUT' && ++puts === (kill.kind === 'upload' ? kill.n : -1)) die();
    // Uploads are all in: the next read of the version is the waiter's (or the check's).
    if (kill.kind === 'waiting' && method === 'GET' && puts >= 7) die();
  };
  const end = (record: RequestRecord): void => {
    if (
      record.method === 'POST' &&
      record.status === 201 &&
      ++creates === (kill.kind === 'create' ? kill.n : -1)
    )
      die();
  };
  hooks.onStart.add(start);
  hooks.onEnd.add(end);
  if (kill.kind === 'timer') timer = setTimeout(die, kill.ms);
  try {
    return await new Promise<CliResult>((resolve) =>
      child.on('close', (code, signal) => resolve({ exitCode: code, signal, stdout, stderr })),
    );
  } finally {
    if (timer) clearTimeout(timer);
    hooks.onStart.delete(start);
    hooks.onEnd.delete(end);
  }
}

async function settle(e: Emulator, hooks: ReturnType<typeof instrument>, plan: Plan): Promise<void> {
  // A request held by a delay fault outlives its killed client inside the emulator; let it finish.
  const held = Math.max(0, ...plan.faults.map((f) => f.delayMs ?? 0));
  if (held > 0) await sleep(held + 50);
  for (let i = 0; i < 500 && hooks.inFlight() > 0; i++) await sleep(10);
  expect(hooks.inFlight(), `seed ${plan.seed}: requests still in flight`).toBe(0);
}

describe.concurrent('provider publish killed (SIGKILL) and run again', () => {
  it.each(SEEDS)(
    'seed %i',
    async (seed) => {
      const plan = planFor(seed);
      const where = `seed ${seed} [${plan.big ? '3 MB zips' : 'fixture'}, concurrency ${plan.concurrency}, ${
        plan.faults.length ? `uploads held ${plan.faults[0]!.delayMs}ms, ` : ''
      }flags +${plan.flagDelayMs}ms; killed ${plan.kills.map(describeTrigger).join(', then ')}]`;
      const dataDir = tempDir('kill-data');
      const home = tempRoot('kill-home');
      const e = await startEmulator({
        dataDir,
        faults: plan.faults,
        faultSeed: seed,
        flagDelayMs: plan.flagDelayMs,
        requestLogPath: path.join(home, 'requests.jsonl'),
      });
      const hooks = instrument(e);
      const outputs: string[] = [];
      try {
        for (const kill of plan.kills) {
          const run = await killedRun(e, hooks, plan, kill, home);
          outputs.push(run.stdout, run.stderr);
          if (run.signal === 'SIGKILL') {
            outcomes.killed++;
            outcomes.states.add(stateOf(e));
          } else {
            outcomes.finishedFirst++;
            expect(run.exitCode, `${where}: a run that was not killed\n${tail(run.stderr)}`).toBe(0);
          }
          await settle(e, hooks, plan);
        }
        e.faults.clear();
        const writesBefore = e.requestLog.records.filter((r) => WRITES.has(r.method)).length;
        const again = await runCli(publishArgs(e, [], plan.big ? bigRelease : RELEASE), {
          env: {
            TFE_TOKEN: e.ownerToken,
            NO_COLOR: '1',
            PROVIDER_RETRY_DELAY: '2ms',
            PROVIDER_POLL_INTERVAL: '5ms',
            PROVIDER_HTTP_TIMEOUT: '10s',
          },
          cwd: home,
          homeDir: home,
        });
        outputs.push(again.stdout, again.stderr);
        expect(again.exitCode, `${where}: the run after the kill\n${tail(again.stderr)}`).toBe(0);
        await expectPublishedExactly(e, where, plan.big ? bigRelease : RELEASE);
        // The re-run wrote only what was missing: at most one create per resource and one upload per file.
        const resumed = e.requestLog.records.filter((r) => WRITES.has(r.method)).slice(writesBefore);
        expect(
          resumed.filter((r) => r.method === 'PUT' && r.status === 200).length,
          where,
        ).toBeLessThanOrEqual(7);

        expectNoTokenOnLinks(e.requestLog.records, where);
        const secrets = emulatorSecrets(e);
        outputs.forEach((text, i) => expectNoSecretIn(text, secrets, `${where}: output ${i}`));
        expectNoSecretInFiles(home, secrets, `${where}: files`);
        expectNoSecretInFiles(dataDir, secrets, `${where}: emulator data`, emulatorStateFile);
      } finally {
        await e.close();
        // The seeds run concurrently: each frees its folders as it ends rather than when the file does.
        removeTempDirs(dataDir, home);
      }
    },
    60_000,
  );
});
