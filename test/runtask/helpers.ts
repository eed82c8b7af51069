/**
 * Shared set-up of the run task tests: an integrator started in-process against the test platform, requests
 * built from the documented samples with their URLs pointed at the test platform, and signing as the
 * platform signs (lowercase hex HMAC-SHA512 of the raw bytes).
 */
import { createHmac } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { EventLog, type LogEvent } from '../../src/runtask/server/log.js';
import type { JobRecord } from '../../src/runtask/server/store.js';
import { PlatformOrigins } from '../../src/runtask/callback/origins.js';
import type { IntegratorOptions, RouteOptions } from '../../src/runtask/server/options.js';
import { startIntegrator, type Integrator } from '../../src/runtask/server/server.js';
import { Output } from '../../src/ui/output.js';
import { Capture } from '../helpers/cli.js';
import { DOCUMENTED_ORIGIN } from './documented-payloads.js';
import type { TestPlatform } from './platform.js';
import { tempDir } from '../helpers/tmp.js';

/** The HMAC key the tests configure. */
export const KEY = 'test-hmac-key-5d1f0c';

/** The test handler, run with this Node. */
export const HANDLER = fileURLToPath(new URL('./handler-fixture.mjs', import.meta.url));
export const HANDLER_COMMAND = `"${process.execPath}" "${HANDLER}"`;

/** Signs as the platform does (written out here rather than imported, so a bug in src/ cannot hide). */
export function sign(body: string | Buffer, key: string = KEY): string {
  return createHmac('sha512', key).update(body).digest('hex');
}

/**
 * The latest record of each job in a state dir's journal (`journal.jsonl`: one JSON record per line, the last one
 * of a job wins, blank lines are finished jobs), by job id; empty when there is no journal file. Read here rather
 * than through src/, so that a bug there cannot hide.
 */
export function journaled(stateDir: string): Map<string, JobRecord> {
  let text: string;
  try {
    text = readFileSync(join(stateDir, 'journal.jsonl'), 'utf8');
  } catch {
    return new Map();
  }
  const records = new Map<string, JobRecord>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const record = JSON.parse(line) as JobRecord;
    records.set(record.id, record);
  }
  return records;
}

/** The ids of the jobs in a state dir's journal, sorted. */
export function journaledIds(stateDir: string): string[] {
  return [...journaled(stateDir).keys()].sort();
}

let counter = 0;

/**
 * A documented sample pointed at the test platform: its `https://app.terraform.io` URLs rewritten, with a fresh
 * task result id, run id and callback URL so that every request in a test file is its own job.
 */
export function requestFor(
  sample: Record<string, unknown>,
  platform: TestPlatform,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> & { task_result_id: string; run_id: string } {
  const n = ++counter;
  const text = JSON.stringify(sample).split(DOCUMENTED_ORIGIN).join(platform.url);
  const request = JSON.parse(text) as Record<string, unknown>;
  const taskResultId = `taskrs-test${process.pid}x${n}`;
  return {
    ...request,
    task_result_id: taskResultId,
    run_id: `run-test${process.pid}x${n}`,
    task_result_callback_url: `${platform.url}/api/v2/task-results/${taskResultId}/callback`,
    ...overrides,
  };
}

/** The platform's POST: raw bytes as given, headers as the platform sends them. */
export async function post(
  url: string,
  body: string | Buffer,
  /** `null` sends no signature header at all. */
  signature: string | null = sign(body),
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'TFC/1.0 (+https://app.terraform.io; TFC)',
    ...extraHeaders,
  };
  if (signature !== null) headers['x-tfc-task-signature'] = signature;
  const response = await fetch(url, { method: 'POST', body, headers });
  return { status: response.status, text: await response.text() };
}

/** The platform's pretty-printed serialization of a request (the exact bytes are what get signed). */
export function bytesOf(request: Record<string, unknown>): string {
  return JSON.stringify(request, null, 2);
}

/** A started integrator with its log and temp folders. */
/** A route of the tests' integrators: 20 s handler timeout, 2 slots, callbacks only to `platformUrl`. */
export function testRoute(platformUrl: string, path: string, hmacKey: string, exec: string): RouteOptions {
  return {
    path,
    hmacKey,
    exec,
    timeoutMs: 20_000,
    timeoutText: '20s',
    maxJobs: 2,
    allowed: new PlatformOrigins([platformUrl]),
  };
}

export interface TestIntegrator {
  integrator: Integrator;
  events: LogEvent[];
  log: EventLog;
  stderr: Capture;
  stateDir: string;
  workRoot: string;
  /** Resolves with the first event (already logged or to come) that matches. */
  waitForEvent(name: string, match?: (e: LogEvent) => boolean): Promise<LogEvent>;
  /** Job folders left in the work root (should be none once jobs finish). */
  leftovers(): string[];
  /** Stops the integrator; its folders (from tempDir) go when the test ends. */
  cleanup(): Promise<void>;
}

/** Starts an integrator against the test platform with short, test-friendly timings. */
export async function startTestIntegrator(
  platform: TestPlatform,
  overrides: Partial<IntegratorOptions> = {},
): Promise<TestIntegrator> {
  const stateDir = overrides.stateDir ?? tempDir('state');
  const workRoot = tempDir('work');
  const stderr = new Capture();
  const output = new Output({ stdout: new Capture(), stderr, env: {} });
  output.addSecret(KEY);
  const log = EventLog.for(output);
  const events: LogEvent[] = [];
  const waiters: Array<{ name: string; match: (e: LogEvent) => boolean; resolve: (e: LogEvent) => void }> =
    [];
  log.subscribe((event) => {
    events.push(event);
    for (const w of [...waiters]) {
      if (w.name === event.event && w.match(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  });
  const started = await startIntegrator({
    host: '127.0.0.1',
    port: 0,
    path: '/',
    exec: HANDLER_COMMAND,
    hmacKey: KEY,
    allowed: new PlatformOrigins([platform.url]),
    heartbeatMs: 60_000,
    timeoutMs: 20_000,
    timeoutText: '20s',
    maxJobs: 4,
    callbackTimeoutMs: 10_000,
    shutdownCallbackTimeoutMs: 2_000,
    planTimeoutMs: 5_000,
    killGraceMs: 500,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    workRoot,
    env: {
      PATH: process.env.PATH,
      TEST_PLATFORM_URL: platform.url,
      RUNTASK_HMAC_KEY: KEY,
      SOME_OTHER_VARIABLE_WITH_THE_KEY: `key=${KEY}`,
    },
    secretEnvNames: ['RUNTASK_HMAC_KEY', 'RUNTASK_ACCESS_TOKEN'],
    log,
    ...overrides,
    stateDir,
  });
  // Destroyed once, by the test (a crash) or by the cleanup after it: a database pool ended twice throws.
  let destroyed: Promise<void> | undefined;
  const integrator: Integrator = { ...started, destroy: () => (destroyed ??= started.destroy()) };
  return {
    integrator,
    events,
    log,
    stderr,
    stateDir,
    workRoot,
    waitForEvent(name, match = () => true) {
      const found = events.find((e) => e.event === name && match(e));
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ name, match, resolve }));
    },
    leftovers: () => readdirSync(workRoot),
    async cleanup() {
      await integrator.destroy();
    },
  };
}

/**
 * Starts integrators against `platform` as `startTestIntegrator` does, each stopped after the test of the calling
 * file that started it: a test that failed half-way leaves none running.
 */
export function integratorsPerTest(
  platform: TestPlatform,
): (overrides?: Partial<IntegratorOptions>) => Promise<TestIntegrator> {
  const started: TestIntegrator[] = [];
  afterEach(async () => {
    for (const t of started.splice(0)) await t.cleanup();
  });
  return async (overrides = {}) => {
    const t = await startTestIntegrator(platform, overrides);
    started.push(t);
    return t;
  };
}
