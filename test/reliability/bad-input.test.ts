/**
 * The bad input corpus (badInputCorpus.ts) through `provider publish`, in-process, one case after another:
 * every case exits 2 or 3 with a short message naming what is wrong, costs under a second of CPU, changes
 * nothing in the registry, prints no secret, and leaves no file behind anywhere but in the folder the case built.
 * Each case runs twice. With the human output, in publish's default order, where a zip is proven by the read
 * that uploads it: the registry ends as it was (what a run created before a zip failed is removed again). With
 * --json and --verify-first, where every zip is read before the first write: the emulator's request log holds no
 * POST/PUT/PATCH/DELETE at all.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import type { CliResult } from '../helpers/result.js';
import { copyRelease, publicKeyPath, R } from '../release/helpers.js';
import { emulatorWithKeys } from '../commands/verify/helpers.js';
import { badInputCorpus, type BadCase } from './badInputCorpus.js';
import { tempDir, tempRoot } from '../helpers/tmp.js';
import {
  REPLAYING,
  report,
  SOAK,
  emulatorSecrets,
  emulatorStateFile,
  expectNoSecretIn,
  expectNoSecretInFiles,
} from './helpers.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Longest acceptable error message: enough to name a file, a line and the problem, never a dump. */
const MAX_MESSAGE = 2000;
const CPU_LIMIT_MS = 1000;

const CORPUS = badInputCorpus();
// The corpus is fixed; soak mode runs it several times over (each run is a fresh copy, so results must agree).
const ROUNDS = Math.min(SOAK, 3);
const only = process.env.PROVIDER_CASE;
const SELECTED = only === undefined ? CORPUS : CORPUS.filter((c) => c.name === only);

let emulator: Emulator;
let work: string;
const cpu: { name: string; ms: number }[] = [];
/** The cases whose default-order run wrote (and then removed what it created). */
const writtenCases = new Set<string>();

beforeAll(async () => {
  work = tempDir();
  emulator = await emulatorWithKeys(['signer'], { dataDir: path.join(work, 'emulator') });
  // Warm-up: the first run loads the lazily imported command code; it is not a case and is not measured.
  await runOne(
    { name: 'warm-up', names: [], build: (d) => fs.rmSync(path.join(d, `${R}_SHA256SUMS`)) },
    true,
  );
  emulator.requestLog.clear();
});

afterAll(async () => {
  await emulator.close();
  // The corpus's byte flips inside zips are found by the reads that upload them: the default order wrote for
  // those, and undid it (checked above, case by case).
  if (SELECTED === CORPUS) expect(writtenCases.size).toBeGreaterThan(0);
  expectNoSecretInFiles(work, emulatorSecrets(emulator), 'files left by the corpus', emulatorStateFile);
  if (!REPLAYING && cpu.length > 1) {
    const sorted = [...cpu].sort((a, b) => b.ms - a.ms);
    const total = cpu.reduce((sum, c) => sum + c.ms, 0);
    report(
      `bad input corpus: ${cpu.length} runs, CPU ${Math.round(total)} ms in all, most ${sorted
        .slice(0, 3)
        .map((c) => `${c.name} ${Math.round(c.ms)} ms`)
        .join(', ')}; ${writtenCases.size} cases found wrong while uploading, each undone`,
    );
  }
});

async function runOne(c: BadCase, json: boolean): Promise<CliResult & { cpuMs: number }> {
  // Under `work` and kept to the end: afterAll scans every file the corpus left for secrets.
  const root = tempRoot('case', { parent: work, until: 'file' });
  const dist = copyRelease(root);
  const outside = tempDir('outside', { parent: work, until: 'file' });
  await c.build?.(dist, outside);
  const dir = c.dir?.(dist, outside) ?? dist;
  const args = (c.args ?? []).map((a) => (a === 'CONFIG' ? path.join(outside, 'config.json') : a));
  const hasKey = c.keyless === true || args.includes('--key');

  // The case's own flags come last, so that they win over the defaults (commander keeps the last value).
  const argv = [
    'publish',
    dir,
    '--hostname',
    emulator.url,
    '--organization',
    emulator.organization,
    ...(hasKey ? [] : ['--key', publicKeyPath('signer')]),
    ...(json ? ['--json', '--verify-first'] : []),
    ...args,
  ];
  const env = {
    NO_COLOR: '1',
    PROVIDER_RETRY_DELAY: '2ms',
    ...(c.noToken ? {} : { TFE_TOKEN: emulator.ownerToken }),
    ...c.env,
  };
  const before = process.cpuUsage();
  const result = await runCli(argv, { env, cwd: root, homeDir: root });
  const used = process.cpuUsage(before);
  return { ...result, cpuMs: (used.user + used.system) / 1000 };
}

/** The error message: from the JSON document with --json, else the `error:` line on stderr. */
function messageOf(result: { stdout: string; stderr: string }): { message: string; hint: string } {
  const trimmed = result.stdout.trim();
  if (trimmed.startsWith('{')) {
    const doc = JSON.parse(trimmed) as { ok: boolean; error?: { message: string; hint?: string } };
    expect(doc.ok).toBe(false);
    return { message: doc.error?.message ?? '', hint: doc.error?.hint ?? '' };
  }
  const start = result.stderr.indexOf('error: ');
  expect(start, `an "error:" line on stderr:\n${result.stderr.slice(0, 2000)}`).toBeGreaterThanOrEqual(0);
  const rest = result.stderr.slice(start + 'error: '.length);
  const hintAt = rest.indexOf('\n  hint: ');
  return {
    message: hintAt === -1 ? rest.trim() : rest.slice(0, hintAt),
    hint: hintAt === -1 ? '' : rest.slice(hintAt),
  };
}

describe('provider publish on the bad input corpus', () => {
  it('has at least 100 cases, each named once', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(100);
    expect(new Set(CORPUS.map((c) => c.name)).size).toBe(CORPUS.length);
  });

  const rounds = Array.from({ length: ROUNDS }, (_, i) => i);
  for (const round of rounds) {
    it.each(SELECTED.map((c) => [c.name, c] as const))(
      `%s${ROUNDS > 1 ? ` (round ${round + 1})` : ''}`,
      async (name, c) => {
        // Each case twice: with the human output and with --json (whose error document carries the details)
        // and --verify-first.
        for (const json of [false, true]) {
          const how = json ? ' with --json --verify-first' : '';
          const where = `case "${name}"${how} (replay: PROVIDER_CASE='${name}')`;
          await checkCase(c, json, where);
        }
      },
    );
  }
});

/** What the registry holds: a run that fails must leave it as it found it. */
function registryState(): string {
  const { providers, versions, platforms, gpgKeys } = emulator.store.data;
  return JSON.stringify({ providers, versions, platforms, gpgKeys });
}

async function checkCase(c: BadCase, json: boolean, where: string): Promise<void> {
  const seen = emulator.requestLog.records.length;
  const state = registryState();
  const result = await runOne(c, json);
  const { message, hint } = messageOf(result);
  const shown = message.length > 300 ? `${message.slice(0, 300)}… (${message.length} characters)` : message;
  expect([2, 3], `${where}: exit ${result.exitCode}: ${shown}`).toContain(result.exitCode);
  if (c.code !== undefined) expect(result.exitCode, `${where}: ${shown}`).toBe(c.code);
  expect(
    c.names.some((n) => (typeof n === 'string' ? message.includes(n) : n.test(message))),
    `${where}: the message names ${c.names.map(String).join(' or ')}: ${shown}`,
  ).toBe(true);
  expect(message.length, `${where}: a short message: ${shown}`).toBeLessThanOrEqual(MAX_MESSAGE);
  expect(result.stdout.length + result.stderr.length, `${where}: short output`).toBeLessThanOrEqual(
    4 * MAX_MESSAGE + 4000,
  );
  // Every error of ours has a hint; commander's own (an unknown flag) points at --help instead.
  if (!result.stderr.includes('(run with --help for usage)')) {
    expect(hint.length, `${where}: a hint`).toBeGreaterThan(0);
  }
  expect(result.cpuMs, `${where}: CPU time`).toBeLessThan(CPU_LIMIT_MS);
  cpu.push({ name: where, ms: result.cpuMs });
  const requests = emulator.requestLog.records.slice(seen);
  expect(registryState(), `${where}: the registry as it was`).toBe(state);
  const written = requests.filter((r) => WRITES.has(r.method));
  if (json)
    expect(
      written.map((r) => `${r.method} ${r.path}`),
      `${where}: write requests`,
    ).toEqual([]);
  // A zip proven wrong by the read that uploads it: the run wrote, then removed what it created.
  else if (written.length > 0) writtenCases.add(c.name);
  expectNoSecretIn(result.stdout + result.stderr, emulatorSecrets(emulator), where);
}
