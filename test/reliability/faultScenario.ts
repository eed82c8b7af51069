/**
 * One randomized fault scenario, entirely determined by its seed: a few fault rules on random steps (5xx,
 * 429 with Retry-After, resets, answers slower than the client's timeout, lost answers after the request took
 * effect, refused upload links, reads that miss), late flags, short-lived links, a partial state left by an
 * earlier publisher, and random flags. `provider publish` runs through it in-process; it must complete, or
 * fail with a documented exit code and complete on the next run with the faults gone. The end state is then
 * checked byte for byte, and every output and written file is scanned for secrets.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultRule } from '../../src/emulator/faults.js';
import type { RequestRecord } from '../../src/emulator/requestLog.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import type { InProcessResult } from '../helpers/result.js';
import { publishFixture } from '../helpers/emulator/index.js';
import { PLATFORMS, publishArgs } from '../commands/publish/helpers.js';
import { removeTempDirs, tempDir } from '../helpers/tmp.js';
import {
  emulatorSecrets,
  emulatorStateFile,
  expectNoSecretIn,
  expectNoSecretInFiles,
  expectNoTokenOnLinks,
  expectPublishedExactly,
  forgetLinks,
  recordLinks,
  REPLAYING,
  report,
  seeded,
  seedsFor,
  tail,
  type Random,
} from './helpers.js';

interface Step {
  name: string;
  method: string;
  path: string;
  /** The request changes something (a create or an upload). */
  write?: boolean;
  /** A request to an archivist link. */
  link?: boolean;
  /** A read whose 404 means "absent" to the client. */
  read?: boolean;
}

const STEPS: Step[] = [
  {
    name: 'read the provider',
    method: 'GET',
    path: '/api/v2/organizations/*/registry-providers/private/*/example',
    read: true,
  },
  { name: 'read the key', method: 'GET', path: '/api/registry/private/v2/gpg-keys/**', read: true },
  { name: 'list the keys', method: 'GET', path: '/api/registry/private/v2/gpg-keys' },
  {
    name: 'create the provider',
    method: 'POST',
    path: '/api/v2/organizations/*/registry-providers',
    write: true,
  },
  { name: 'register the key', method: 'POST', path: '/api/registry/private/v2/gpg-keys', write: true },
  { name: 'create the version', method: 'POST', path: '/api/v2/**/versions', write: true },
  { name: 'read the version', method: 'GET', path: '/api/v2/**/versions/1.2.3', read: true },
  { name: 'create a platform', method: 'POST', path: '/api/v2/**/platforms', write: true },
  { name: 'list the platforms', method: 'GET', path: '/api/v2/**/platforms' },
  { name: 'read a platform', method: 'GET', path: '/api/v2/**/platforms/*/*', read: true },
  { name: 'upload a file', method: 'PUT', path: '/_archivist/**', write: true, link: true },
  { name: 'download a file', method: 'GET', path: '/_archivist/**', link: true },
  { name: 'any API call', method: '*', path: '/api/**' },
];

/** Everything a seed decides. */
export interface Scenario {
  seed: number;
  rules: FaultRule[];
  /** Labels of the rules, for the test name and failure messages. */
  labels: string[];
  flagDelayMs: number;
  linkTtlMs: number | undefined;
  /** The emulator's rate limit (requests per second per token on /api/), if any. */
  rateLimit: number | undefined;
  timeoutMs: number;
  retryDelayMs: number;
  concurrency: number;
  waitTimeout: string | undefined;
  json: boolean;
  verbose: boolean;
  github: boolean;
  /** What an earlier publisher left: platforms created, files uploaded (`sums`, `sig`, `os_arch`). */
  partial: { platforms: string[]; uploads: string[] } | undefined;
}

/** How a rule fires: a few times (after skipping some), or at random. */
function firing(r: Random): Pick<FaultRule, 'times' | 'skip' | 'probability'> {
  if (r.chance(0.6)) return { times: r.int(1, 3), ...(r.chance(0.4) ? { skip: r.int(1, 4) } : {}) };
  return {
    probability: Math.round((0.1 + r.next() * 0.4) * 100) / 100,
    ...(r.chance(0.5) ? { times: r.int(1, 4) } : {}),
  };
}

/** One fault on a random step. */
function randomRule(r: Random, timeoutMs: number): { rule: FaultRule; label: string } {
  const step = r.pick(STEPS);
  const where = { method: step.method, path: step.path };
  const kinds: [string, () => Omit<FaultRule, 'method' | 'path'>][] = [
    ['5xx', () => ({ status: r.pick([500, 502, 503, 504]) })],
    ['429', () => ({ status: 429, retryAfter: r.chance(0.1) ? 1 : 0 })],
    ['reset', () => ({ reset: true })],
    ['slow past the timeout', () => ({ delayMs: timeoutMs + r.int(40, 160) })],
    ['slow', () => ({ delayMs: r.int(5, 40) })],
  ];
  if (step.write) {
    kinds.push([
      'lost answer',
      () => ({ after: true, ...(r.chance(0.5) ? { reset: true } : { status: 503 }) }),
    ]);
  }
  if (step.link && step.method === 'PUT') {
    kinds.push(['refused link', () => ({ status: r.pick([401, 403, 404]) })]);
    kinds.push(['refused link', () => ({ status: 403 })]);
  }
  if (step.read) kinds.push(['a read that misses', () => ({ status: 404 })]);
  if (!step.link && r.chance(0.05)) kinds.push(['refused token', () => ({ status: r.pick([401, 403]) })]);
  const [kind, make] = r.pick(kinds);
  const fault = make();
  const fire = firing(r);
  // A 429 that waits a whole second is worth rehearsing, not worth repeating.
  if (fault.retryAfter === 1) {
    delete fire.probability;
    fire.times = 1;
  }
  const rule: FaultRule = { ...where, ...fault, ...fire };
  const how =
    fire.probability !== undefined
      ? `p=${fire.probability}${fire.times ? ` ≤${fire.times}×` : ''}`
      : `${fire.times}×${fire.skip ? ` after ${fire.skip}` : ''}`;
  return { rule, label: `${step.name}: ${kind}${fault.status ? ` ${fault.status}` : ''} (${how})` };
}

/** The scenario of a seed. */
export function scenarioFor(seed: number): Scenario {
  const r = seeded(seed);
  const timeoutMs = r.pick([150, 200, 300]);
  const count = r.int(2, 5);
  const made = Array.from({ length: count }, () => randomRule(r, timeoutMs));
  const flagDelayMs = r.chance(0.35) ? r.int(10, 150) : 0;
  const linkTtlMs = r.chance(0.2) ? r.int(80, 400) : undefined;
  const rateLimit = r.chance(0.1) ? r.int(20, 60) : undefined;
  let partial: Scenario['partial'];
  if (r.chance(0.3)) {
    const platforms = PLATFORMS.filter(() => r.chance(0.5));
    const uploads = [
      ...(r.chance(0.6) ? ['sums'] : []),
      ...(r.chance(0.5) ? ['sig'] : []),
      ...platforms.filter(() => r.chance(0.5)),
    ];
    partial = { platforms, uploads };
  }
  return {
    seed,
    rules: made.map((m) => m.rule),
    labels: made.map((m) => m.label),
    flagDelayMs,
    linkTtlMs,
    rateLimit,
    timeoutMs,
    retryDelayMs: r.int(1, 4),
    concurrency: r.int(1, 6),
    waitTimeout: flagDelayMs > 40 && r.chance(0.25) ? '20ms' : undefined,
    json: r.chance(0.3),
    verbose: r.chance(0.3),
    github: r.chance(0.3),
    partial,
  };
}

/** A one-line description of a scenario (the test name carries the seed; this carries the rest). */
export function describeScenario(s: Scenario): string {
  const extras = [
    s.flagDelayMs ? `flags +${s.flagDelayMs}ms` : '',
    s.linkTtlMs ? `links live ${s.linkTtlMs}ms` : '',
    s.rateLimit ? `rate limit ${s.rateLimit}/s` : '',
    s.partial ? 'partial state' : '',
    s.waitTimeout ? `--wait-timeout ${s.waitTimeout}` : '',
  ].filter(Boolean);
  return [s.labels.join('; '), ...extras].join(' | ');
}

/**
 * Exit codes a faulty first run may end with, and what its message must then say. Never 5: nothing here puts
 * other content under the version, so a conflict would be a bug (a create reconciled wrongly).
 */
const DOCUMENTED_FAILURES: Record<number, RegExp> = {
  // The API refused, or could not be reached after the retries; the hint says to run again.
  4: /error: .+\n\s+hint: .*(again|token|Check)/s,
  // The registry did not flip its flags in time.
  6: /error: The registry had not processed .+ after .+\n\s+hint: .*run the same command again to resume/s,
};

/**
 * Links that expire before the server looks at them, twice over: a fresh link replaces a refused one once, so an
 * exit 3 here means that the download link and its replacement were both refused as expired — the server (a
 * delay rule on downloads, or this machine pausing) is slower than the lifetime it gives its links (80–400 ms
 * here; 25 hours on the platform). `terraform init` would fail the same way, and the consumer check says so.
 */
const LINKS_OUTLIVED =
  /error: terraform init would refuse .+\n\s+SHA256SUMS(\.sig)?: the download link of .+ answered 403; consumers cannot download it/;

function outlivedLinks(s: Scenario, records: readonly RequestRecord[]): boolean {
  const expired = records.filter(
    (r) => r.method === 'GET' && r.path.startsWith('/_archivist/') && r.status === 403,
  );
  return s.linkTtlMs !== undefined && expired.length >= 2;
}

interface Run {
  result: InProcessResult;
  summary: string;
}

async function publishOnce(
  e: Emulator,
  s: Scenario,
  work: string,
  options: { faulty: boolean },
): Promise<Run> {
  const summaryFile = path.join(work, 'summary.md');
  const extra = [
    '--concurrency',
    String(s.concurrency),
    ...(options.faulty && s.waitTimeout ? ['--wait-timeout', s.waitTimeout] : []),
    ...(s.json ? ['--json'] : []),
    ...(s.verbose ? ['--verbose'] : []),
  ];
  const env: Record<string, string> = {
    TFE_TOKEN: e.ownerToken,
    NO_COLOR: '1',
    PROVIDER_POLL_INTERVAL: '5ms',
    PROVIDER_RETRY_DELAY: options.faulty ? `${s.retryDelayMs}ms` : '2ms',
    PROVIDER_HTTP_TIMEOUT: options.faulty ? `${s.timeoutMs}ms` : '10s',
    ...(s.github ? { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summaryFile } : {}),
  };
  const cwd = path.join(work, 'cwd');
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(cwd, 'go.mod'), 'module example.com/test\n');
  const result = await runCli(publishArgs(e, extra), { env, cwd, homeDir: path.join(work, 'home') });
  const summary = fs.existsSync(summaryFile) ? fs.readFileSync(summaryFile, 'utf8') : '';
  return { result, summary };
}

/** Runs a scenario to its end; fails with the seed and the scenario in every message. */
export async function runScenario(seed: number): Promise<{ firstExit: number; fired: number }> {
  const s = scenarioFor(seed);
  const where = `seed ${seed} [${describeScenario(s)}]`;
  const dataDir = tempDir('faults-data');
  const work = tempDir('faults-work');
  const requestLogPath = path.join(work, 'requests.jsonl');
  const records: RequestRecord[] = [];
  const secrets = new Set<string>();
  let e = await startEmulator({
    dataDir,
    requestLogPath,
    faultSeed: seed,
    flagDelayMs: s.flagDelayMs,
    ...(s.linkTtlMs === undefined ? {} : { linkTtlMs: s.linkTtlMs }),
    ...(s.rateLimit === undefined ? {} : { rateLimit: s.rateLimit }),
  });
  const outputs: string[] = [];
  try {
    if (s.partial) await publishFixture(e, s.partial);
    for (const rule of s.rules) e.faults.add(rule);

    const first = await publishOnce(e, s, work, { faulty: true });
    outputs.push(first.result.stdout, first.result.stderr, first.summary);
    const firstExit = first.result.exitCode;
    const fired = e.faults.fired.reduce((sum, n) => sum + n, 0);
    const story = `${where}\nfirst run exit ${firstExit}, faults fired ${JSON.stringify(e.faults.fired)}:\n${tail(first.result.stderr)}`;
    if (firstExit !== 0) {
      const expected =
        DOCUMENTED_FAILURES[firstExit] ??
        (outlivedLinks(s, e.requestLog.records) ? LINKS_OUTLIVED : undefined);
      expect(
        expected,
        `${story}\n→ exit ${firstExit} is not a documented failure of a faulty run`,
      ).toBeDefined();
      expect(first.result.stderr, story).toMatch(expected!);
      if (s.json) {
        const doc = JSON.parse(first.result.stdout) as { ok: boolean; error?: { code: string } };
        expect(doc.ok, story).toBe(false);
      }
    }

    // A request slowed past the client's timeout may still be running in the emulator: let it land before
    // the emulator goes, so that no straggler writes into the next one's state.
    const slowest = Math.max(0, ...s.rules.map((r) => r.delayMs ?? 0));
    if (slowest > 0) await sleep(slowest + 100);
    records.push(...e.requestLog.records);
    emulatorSecrets(e).forEach((x) => secrets.add(x));
    await e.close();
    forgetLinks(e.url);

    // The faults are gone (a fresh emulator on the same data: also a restart of the platform).
    e = await startEmulator({ dataDir, requestLogPath });
    if (firstExit !== 0 || s.seed % 4 === 0) {
      const second = await publishOnce(e, s, work, { faulty: false });
      outputs.push(second.result.stdout, second.result.stderr, second.summary);
      expect(second.result.exitCode, `${story}\nsecond run:\n${tail(second.result.stderr)}`).toBe(0);
      if (firstExit === 0) {
        const writes = e.requestLog.records.filter((r) => r.method !== 'GET' && r.method !== 'HEAD');
        expect(
          writes.map((r) => `${r.method} ${r.path}`),
          `${where}: a run after a complete one writes nothing`,
        ).toEqual([]);
      }
    }
    await expectPublishedExactly(e, where);

    records.push(...e.requestLog.records);
    emulatorSecrets(e).forEach((x) => secrets.add(x));
    expectNoTokenOnLinks(records, where);
    outputs.forEach((text, i) => expectNoSecretIn(text, secrets, `${where}: output ${i}`));
    const all = [...secrets];
    expectNoSecretInFiles(work, all, `${where}: written files`);
    expectNoSecretInFiles(dataDir, all, `${where}: emulator data`, emulatorStateFile);
    return { firstExit, fired };
  } finally {
    await e.close();
    forgetLinks(e.url);
    // The scenarios run concurrently: each frees its folders as it ends rather than when the file does.
    removeTempDirs(dataDir, work);
  }
}

/** Declares the scenarios of one part of the suite (the seeds from `first`), with their figures reported. */
export function faultSuite(part: number, first: number): void {
  const seeds = seedsFor(first, 100);
  const exits = new Map<number, number>();
  let faultsFired = 0;
  let quiet = 0;
  beforeAll(() => recordLinks());
  afterAll(() => {
    if (seeds.length > 1 && !REPLAYING) {
      report(
        `fault scenarios part ${part} (seeds ${seeds[0]}–${seeds.at(-1)}): first-run exits ${JSON.stringify(Object.fromEntries(exits))}, ` +
          `${faultsFired} faults fired, ${quiet} scenarios where no rule fired`,
      );
    }
  });
  describe.concurrent(`provider publish through randomized faults (${part})`, () => {
    it.each(seeds)(
      'seed %i',
      async (seed) => {
        const { firstExit, fired } = await runScenario(seed);
        exits.set(firstExit, (exits.get(firstExit) ?? 0) + 1);
        faultsFired += fired;
        if (fired === 0) quiet++;
      },
      60_000,
    );
  });
}
