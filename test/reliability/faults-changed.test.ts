/**
 * Release files that change between verification and upload, one seeded scenario per platform of the fixture
 * release and kind of change: the zip rewritten with the same size, shrunk, or grown, at a seeded moment that
 * is always after `publish` verified it and before its upload could have read it — at its first write (the
 * registry's side is read while the files are hashed, so reads come sooner; an upload running beside that write
 * may have read the file already, so the zip's first upload is answered 503 and its retry reads the changed
 * file), as its platform's create takes effect (before the answer leaves), or between two
 * attempts of its upload (the first is answered 503). The emulator runs in this process, so the change is made
 * synchronously inside its request handling: no test switch in the program, no timing.
 *
 * Every scenario must exit 3 naming the file, leave that platform's zip never uploaded complete (no PUT of it
 * answered 200, no stored object; what the run created removed again), never serve the changed bytes to consumers (everything the registry
 * protocol serves is the release's), and finish with a run after the file is restored. Seeds 90 001…; replay
 * one with PROVIDER_SEED.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/emulator/requestLog.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import type { CliResult } from '../helpers/result.js';
import { loadRelease, onRequestStart, publishFixture, trackRequests } from '../helpers/emulator/index.js';
import { PLATFORMS, publishArgs, servedToConsumers, watchPlatformId } from '../commands/publish/helpers.js';
import { copyRelease } from '../release/helpers.js';
import { removeTempDirs, tempDir } from '../helpers/tmp.js';
import {
  REPLAYING,
  emulatorSecrets,
  emulatorStateFile,
  expectNoSecretIn,
  expectNoSecretInFiles,
  expectNoTokenOnLinks,
  expectPublishedExactly,
  forgetLinks,
  recordLinks,
  report,
  seeded,
  seedsFor,
  tail,
  type Random,
} from './helpers.js';

const FIRST_SEED = 90_001;
const KINDS = ['rewritten with the same size', 'shrunk', 'grown'] as const;
const SEEDS = seedsFor(FIRST_SEED, PLATFORMS.length * KINDS.length);
const fixture = loadRelease();

type Kind = (typeof KINDS)[number];
type Moment = 'at the first write' | 'as its platform is created' | 'between two attempts of its upload';

/** Everything a seed decides. */
interface Scenario {
  seed: number;
  platform: string;
  kind: Kind;
  moment: Moment;
  /** Same size: the byte positions flipped; shrunk: the new size; grown: the bytes appended. */
  positions: number[];
  newSize: number;
  appended: number;
  /** An earlier publisher created the platform (and uploaded some other files): its action is `upload`. */
  partial: { platforms: string[]; uploads: string[] } | undefined;
  concurrency: number;
  json: boolean;
  verbose: boolean;
}

/** The scenario of a seed: its platform and kind from its place in the sequence, the rest drawn. */
function scenarioFor(seed: number): Scenario {
  const index = seed - FIRST_SEED;
  const platform = PLATFORMS[index % PLATFORMS.length]!;
  const kind = KINDS[Math.floor(index / PLATFORMS.length) % KINDS.length]!;
  const r: Random = seeded(seed);
  const size = zipOf(platform).bytes.length;
  let partial: Scenario['partial'];
  if (r.chance(0.3)) {
    const others = PLATFORMS.filter((p) => p !== platform && r.chance(0.5));
    partial = {
      platforms: [platform, ...others],
      uploads: [
        ...(r.chance(0.5) ? ['sums'] : []),
        ...(r.chance(0.5) ? ['sig'] : []),
        ...others.filter(() => r.chance(0.5)),
      ],
    };
  }
  const moments: Moment[] = ['at the first write', 'between two attempts of its upload'];
  // A platform created by an earlier publisher is not created again: that moment does not exist then.
  if (partial === undefined) moments.push('as its platform is created');
  return {
    seed,
    platform,
    kind,
    moment: r.pick(moments),
    positions: Array.from({ length: r.int(1, 16) }, () => r.int(0, size - 1)),
    newSize: r.int(0, size - 1),
    appended: r.int(1, 5000),
    partial,
    concurrency: r.int(1, 6),
    json: r.chance(0.3),
    verbose: r.chance(0.3),
  };
}

function zipOf(platform: string) {
  const [os = '', arch = ''] = platform.split('_');
  return fixture.zip(os, arch);
}

function describeScenario(s: Scenario): string {
  const change =
    s.kind === 'shrunk'
      ? `shrunk to ${s.newSize} bytes`
      : s.kind === 'grown'
        ? `grown by ${s.appended} bytes`
        : `${new Set(s.positions).size} byte(s) flipped`;
  return [
    `${s.platform} ${change} ${s.moment}`,
    s.partial ? 'platform created earlier' : '',
    `--concurrency ${s.concurrency}`,
    s.json ? '--json' : '',
    s.verbose ? '--verbose' : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** Makes the scenario's change to the zip (synchronously: it runs inside the emulator's request handling). */
function change(s: Scenario, file: string): void {
  const original = zipOf(s.platform).bytes;
  if (s.kind === 'shrunk') fs.truncateSync(file, s.newSize);
  else if (s.kind === 'grown') fs.appendFileSync(file, Buffer.alloc(s.appended, 0x5a));
  else {
    const bytes = Buffer.from(original);
    for (const at of new Set(s.positions)) bytes[at] = bytes[at]! ^ 0xff;
    fs.writeFileSync(file, bytes);
  }
}

/** What the message must say about the change. */
function expectedMessage(s: Scenario): RegExp {
  const size = zipOf(s.platform).bytes.length;
  const how =
    s.kind === 'shrunk'
      ? `it now has ${s.newSize} bytes, not ${size}`
      : s.kind === 'grown'
        ? `it now has more than ${size} bytes`
        : 'it now hashes to [0-9a-f]{64}, not [0-9a-f]{64}';
  return new RegExp(
    `^${zipOf(s.platform).filename.replaceAll('.', '\\.')} changed since it was verified: ${how}$`,
  );
}

/** Installs the change at the scenario's moment; resolves `changed` to true once it is made. */
function arm(e: Emulator, s: Scenario, file: string): { changed: () => boolean } {
  let done = false;
  const once = (): void => {
    if (done) return;
    done = true;
    change(s, file);
  };
  const objectKey = (): string | undefined =>
    e.store.data.platforms.find((p) => `${p.os}_${p.arch}` === s.platform)?.binary.key;
  if (s.moment === 'at the first write') {
    let refused = false;
    onRequestStart(e, (request) => {
      if (request.method === 'GET') return;
      once();
      // Its first upload may have read the file before the change: answered 503, its retry reads the change.
      if (!refused && request.method === 'PUT' && request.objectKey === objectKey()) {
        refused = true;
        return { status: 503 };
      }
    });
  } else if (s.moment === 'between two attempts of its upload') {
    onRequestStart(e, (request) => {
      if (done || request.method !== 'PUT' || request.objectKey !== objectKey()) return;
      once();
      return { status: 503 };
    });
  } else {
    // Every request's end is logged as its answer is complete and before it leaves: the first end after the
    // platform exists is at the latest its own create's, so the client has not seen the answer yet.
    const add = e.requestLog.add.bind(e.requestLog);
    e.requestLog.add = (record: RequestRecord) => {
      if (objectKey() !== undefined) once();
      add(record);
    };
  }
  return { changed: () => done };
}

async function publishRun(e: Emulator, s: Scenario, dist: string, work: string): Promise<CliResult> {
  const extra = [
    '--concurrency',
    String(s.concurrency),
    ...(s.json ? ['--json'] : []),
    ...(s.verbose ? ['--verbose'] : []),
  ];
  const cwd = path.join(work, 'cwd');
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(cwd, 'go.mod'), 'module example.com/test\n');
  return runCli(publishArgs(e, extra, dist), {
    env: {
      TFE_TOKEN: e.ownerToken,
      NO_COLOR: '1',
      PROVIDER_POLL_INTERVAL: '5ms',
      PROVIDER_RETRY_DELAY: '2ms',
      PROVIDER_HTTP_TIMEOUT: '10s',
    },
    cwd,
    homeDir: path.join(work, 'home'),
  });
}

/** The error a failed run reports: from the JSON document with --json, else from stderr. */
function reportedError(result: CliResult, json: boolean): { message: string; file: unknown; hint: string } {
  if (json) {
    const doc = JSON.parse(result.stdout) as {
      ok: boolean;
      error: { code: string; message: string; hint: string; details: { file?: unknown } | null };
    };
    expect(doc.ok).toBe(false);
    expect(doc.error.code).toBe('verification');
    return { message: doc.error.message, file: doc.error.details?.file, hint: doc.error.hint };
  }
  const match = /^error: (.+)\n\s+hint: (.+)$/m.exec(result.stderr);
  const message = match?.[1] ?? '';
  return { message, file: /^(\S+) changed/.exec(message)?.[1], hint: match?.[2] ?? '' };
}

/** The suite's figures: scenarios by moment, and the PUTs of changed zips by how the emulator logged them. */
const figures = {
  byMoment: new Map<string, number>(),
  putsStarted: 0,
  putStatuses: new Map<number, number>(),
};

/** Runs one scenario to its end; every failure message starts with the seed and the scenario. */
async function runScenario(seed: number): Promise<void> {
  const s = scenarioFor(seed);
  const where = `seed ${seed} [${describeScenario(s)}]`;
  const work = tempDir('changed-work');
  const dataDir = tempDir('changed-data');
  const dist = copyRelease(work);
  const zip = zipOf(s.platform);
  const file = path.join(dist, zip.filename);
  const e = await startEmulator({ dataDir, requestLogPath: path.join(work, 'requests.jsonl') });
  const outputs: string[] = [];
  try {
    if (s.partial) await publishFixture(e, s.partial);
    const armed = arm(e, s, file);
    const requests = trackRequests(e);
    const [os = '', arch = ''] = s.platform.split('_');
    const platformId = watchPlatformId(e, os, arch);
    let starts = 0;
    onRequestStart(e, (request) => {
      const key = e.store.data.platforms.find((p) => `${p.os}_${p.arch}` === s.platform)?.binary.key;
      if (request.method === 'PUT' && request.objectKey === key) starts++;
    });
    const first = await publishRun(e, s, dist, work);
    outputs.push(first.stdout, first.stderr);
    // A PUT the client abandoned is logged when its connection closes, which can come after the client's exit.
    await requests.settled();
    const story = `${where}\nfirst run exit ${first.exitCode}:\n${tail(first.stderr)}`;
    expect(armed.changed(), `${story}\n→ the change was never made`).toBe(true);
    expect(first.exitCode, story).toBe(3);
    const error = reportedError(first, s.json);
    expect(error.message, story).toMatch(expectedMessage(s));
    expect(error.file, story).toBe(zip.filename);
    expect(error.hint, story).toMatch(/run the same command again/);

    // Its zip never arrived complete: no PUT of it answered 200, nothing stored, every PUT of it cut short.
    // What the run created is removed again: the platform stays only when an earlier publisher made it.
    const platform = e.store.data.platforms.find((p) => `${p.os}_${p.arch}` === s.platform);
    if (s.partial) {
      expect(platform, `${where}: the platform exists`).toBeDefined();
      expect(platform!.binary.uploadedAt, `${where}: ${s.platform} flagged uploaded`).toBeNull();
      expect(fs.existsSync(e.store.objectPath(platform!.binary.key)), `${where}: object stored`).toBe(false);
    } else {
      expect(platform, `${where}: the platform this run created is removed`).toBeUndefined();
      expect(e.store.data.versions, `${where}: the version this run created is removed`).toEqual([]);
    }
    const puts = e.requestLog.records.filter((r) => r.method === 'PUT' && r.owner === platformId());
    expect(
      puts.filter((r) => r.status === 200),
      `${where}: PUTs of ${zip.filename} answered 200`,
    ).toEqual([]);
    expect(platformId(), `${where}: the platform was created`).toBeDefined();
    for (const put of puts.filter((r) => r.status !== 503)) {
      expect(put.bytes, `${where}: a PUT of ${zip.filename} received the whole body`).toBeLessThan(
        put.contentLength ?? 0,
      );
    }
    figures.byMoment.set(s.moment, (figures.byMoment.get(s.moment) ?? 0) + 1);
    figures.putsStarted += starts;
    for (const put of puts)
      figures.putStatuses.set(put.status, (figures.putStatuses.get(put.status) ?? 0) + 1);

    // Consumers are never served the changed bytes: whatever the registry protocol serves is the release's.
    const served = await servedToConsumers(e);
    expect(served.has(s.platform), `${where}: ${s.platform} served after the failed run`).toBe(false);
    for (const [name, bytes] of served) {
      expect(bytes.equals(zipOf(name).bytes), `${where}: ${name} served with other bytes`).toBe(true);
    }

    // Restored, the same command finishes the job.
    fs.writeFileSync(file, zip.bytes);
    const again = await publishRun(e, s, dist, work);
    outputs.push(again.stdout, again.stderr);
    expect(again.exitCode, `${where}: the run after restoring the file\n${tail(again.stderr)}`).toBe(0);
    await expectPublishedExactly(e, where, dist);
    const servedAfter = await servedToConsumers(e);
    expect([...servedAfter.keys()].sort(), `${where}: served after the re-run`).toEqual(PLATFORMS);
    for (const [name, bytes] of servedAfter) {
      expect(bytes.equals(zipOf(name).bytes), `${where}: ${name} served with other bytes`).toBe(true);
    }

    expectNoTokenOnLinks(e.requestLog.records, where);
    const secrets = emulatorSecrets(e);
    outputs.forEach((text, i) => expectNoSecretIn(text, secrets, `${where}: output ${i}`));
    expectNoSecretInFiles(work, secrets, `${where}: written files`);
    expectNoSecretInFiles(dataDir, secrets, `${where}: emulator data`, emulatorStateFile);
  } finally {
    await e.close();
    forgetLinks(e.url);
    // The scenarios run concurrently: each frees its folders as it ends rather than when the file does.
    removeTempDirs(work, dataDir);
  }
}

beforeAll(() => recordLinks());

afterAll(() => {
  if (SEEDS.length > 1 && !REPLAYING) {
    report(
      `changed files: ${SEEDS.length} scenarios (seeds ${SEEDS[0]}–${SEEDS.at(-1)}), all exit 3, all finished after the restore; ` +
        `moments ${JSON.stringify(Object.fromEntries(figures.byMoment))}; ${figures.putsStarted} PUTs of a changed zip reached the emulator; ` +
        `those it attributes to the zip (not answered by an injected 503), by logged status: ${JSON.stringify(Object.fromEntries(figures.putStatuses))}`,
    );
  }
});

describe.concurrent('provider publish when a zip changes between verification and upload', () => {
  it.each(SEEDS)('seed %i', (seed) => runScenario(seed), 60_000);
});
