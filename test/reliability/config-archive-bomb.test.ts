/**
 * A configuration version that inflates to 40 GiB (a small valid `.tar.gz`, then 640 gzip members of 64 MiB of
 * zeros: 42 MB on the wire, under the 50 MiB download cap), handed to a real `runtask serve --with-configuration`
 * process while it runs a healthy check, on the journal and on PostgreSQL (two instances on one database, a
 * short lease). /healthz is asked every 50 ms, so that several asks fall inside the bomb's download and unpacking
 * (under a second): none asked then is answered more than a second late, and every ask, before and after too, is
 * answered 200 (how fast does not count outside the bomb's window, where a loaded machine may be slow for reasons
 * of its own); the job fails with a refusal naming the cap, sent as its one final; the healthy check keeps its
 * lease (the other instance takes nothing over) and gets its one final, `passed`.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA } from '../../src/runtask/server/postgres/postgres.js';
import { tarGz } from '../../src/runtask/send/defaults.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { POST_PLAN_REQUEST } from '../runtask/documented-payloads.js';
import { HANDLER_COMMAND, KEY, bytesOf, post, requestFor } from '../runtask/helpers.js';
import { TestPlatform, statusOf, type Recorded } from '../runtask/platform.js';
import { ensureBuilt, spawnServe, type ServeProcess } from '../runtask/serveProcess.js';

/** 640 members of 64 MiB of zeros: 40 GiB once inflated. */
const MEMBERS = 640;
const MEMBER_ZEROS = 64 * 1024 * 1024;
/** What the integrator unpacks at most (unpack.ts), as its refusal says. */
const CAP = '134217728 bytes';

let platform: TestPlatform;
let archives: Server;
let archivesUrl: string;
let bomb: string;
let good: Buffer;
let server: TestPostgres;
const running: ServeProcess[] = [];

/** The bomb, written once: a good archive, then the same precomputed member over and over. */
async function writeBomb(file: string): Promise<void> {
  const member = gzipSync(Buffer.alloc(MEMBER_ZEROS), { level: 9 });
  const out = createWriteStream(file);
  out.write(good);
  for (let i = 0; i < MEMBERS; i++) if (!out.write(member)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

/** Serves the configuration versions as the platform does: the API URL redirects (302) to the blob. */
async function startArchives(): Promise<void> {
  archives = createServer((req, res) => {
    const api = /^\/api\/v2\/configuration-versions\/(bomb|good)\/download$/.exec(req.url ?? '');
    if (api) return void res.writeHead(302, { location: `/_archivist/v1/object/${api[1]}` }).end();
    if (req.url === '/_archivist/v1/object/good') return void res.writeHead(200).end(good);
    if (req.url === '/_archivist/v1/object/bomb') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void createReadStream(bomb)
        .on('error', () => res.destroy())
        .pipe(res);
    }
    res.writeHead(404).end();
  });
  archives.listen(0, '127.0.0.1');
  await once(archives, 'listening');
  archivesUrl = `http://127.0.0.1:${(archives.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  ensureBuilt();
  good = await tarGz([{ name: 'main.tf', content: Buffer.from('terraform {}\n') }], new Date(0));
  bomb = join(tempDir('bomb', { until: 'file' }), 'bomb.tar.gz');
  [platform, server] = await Promise.all([
    TestPlatform.start(),
    startPostgres(),
    writeBomb(bomb),
    startArchives(),
  ]);
}, 300_000);
afterEach(async () => {
  for (const serve of running.splice(0)) await serve.stop();
});
afterAll(async () => {
  await platform?.close();
  await new Promise((resolve) => archives?.close(resolve));
  await server?.stop();
});

async function serve(args: string[]): Promise<ServeProcess> {
  const dir = tempDir('serve');
  const started = await spawnServe({
    platform,
    stateDir: join(dir, 'state'),
    exec: HANDLER_COMMAND,
    key: KEY,
    args: ['--with-configuration', '--platform-host', archivesUrl, ...args],
    cwd: dir,
  });
  running.push(started);
  return started;
}

/** How late an answer to /healthz may be while the bomb is downloaded and unpacked. */
const LATE_MS = 1000;

/**
 * One /healthz asked: when (ms since the epoch), and its status and how long it took, or why it got none (an ask
 * is given up after 30 s, so that a process that hangs for good ends the test).
 */
type Probe = { at: number } & ({ status: number; tookMs: number } | { failed: string });

/** Asks /healthz every 50 ms until stopped, each ask on its own (a stall finds several waiting). */
function probe(target: ServeProcess): { stop: () => Promise<Probe[]> } {
  const asked: Array<Promise<Probe>> = [];
  const ask = (): void => {
    const at = Date.now();
    const answer = fetch(new URL('/healthz', target.url), { signal: AbortSignal.timeout(30_000) }).then(
      async (response) => {
        await response.arrayBuffer();
        return { at, status: response.status, tookMs: Date.now() - at };
      },
      (error: unknown) => ({ at, failed: String(error) }),
    );
    asked.push(answer);
  };
  ask();
  const timer = setInterval(ask, 50);
  return {
    async stop() {
      clearInterval(timer);
      return Promise.all(asked);
    },
  };
}

function finals(taskResultId: string): Recorded[] {
  return platform.callbacks(taskResultId).filter((c) => ['passed', 'failed'].includes(statusOf(c) ?? ''));
}

function messageOf(callback: Recorded): string {
  return String((callback.json as { data: { attributes: { message?: string } } }).data.attributes.message);
}

/** What a scenario saw: its two jobs, the /healthz asked, and when the bomb was posted and refused. */
interface Outcome {
  bombId: string;
  healthyId: string;
  answers: Probe[];
  /** From the bomb's POST to its final (ms since the epoch): its download and its unpacking. */
  bombFrom: number;
  bombTo: number;
}

/**
 * The scenario on `busy`: a healthy check is running (its handler waits), the bomb comes in; /healthz is probed
 * until the bomb's final is in and then for three seconds more; the healthy check is let finish.
 */
async function scenario(busy: ServeProcess): Promise<Outcome> {
  const healthy = requestFor(POST_PLAN_REQUEST, platform, {
    configuration_version_download_url: `${archivesUrl}/api/v2/configuration-versions/good/download`,
  });
  const bombRequest = requestFor(POST_PLAN_REQUEST, platform, {
    configuration_version_download_url: `${archivesUrl}/api/v2/configuration-versions/bomb/download`,
  });
  expect((await post(busy.url, bytesOf(healthy))).status).toBe(200);
  await busy.orExit(platform.waitForHandler(healthy.run_id));
  const probes = probe(busy);
  const bombFrom = Date.now();
  expect((await post(busy.url, bytesOf(bombRequest))).status).toBe(200);
  await busy.orExit(platform.waitForCallbacks(bombRequest.task_result_id, 'failed'));
  const bombTo = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const answers = await probes.stop();
  platform.release(healthy.run_id, { stdout: 'checked\n', exitCode: 0 });
  await busy.orExit(platform.waitForCallbacks(healthy.task_result_id, 'passed'));
  return { bombId: bombRequest.task_result_id, healthyId: healthy.task_result_id, answers, bombFrom, bombTo };
}

function expectOneFinalEach(outcome: Outcome, busy: ServeProcess) {
  // Asked while the bomb was downloaded and unpacked, not only before and after it.
  const during = outcome.answers.filter((a) => a.at >= outcome.bombFrom && a.at <= outcome.bombTo);
  expect(during.length).toBeGreaterThanOrEqual(3);
  const late = during.filter((answer) => !('status' in answer) || answer.tookMs > LATE_MS);
  expect(
    late,
    `of ${during.length} /healthz asked while the bomb was unpacked, these were answered more than ${LATE_MS} ms late`,
  ).toEqual([]);
  const unanswered = outcome.answers.filter((answer) => !('status' in answer) || answer.status !== 200);
  expect(unanswered, `of ${outcome.answers.length} /healthz asked, these were not answered 200`).toEqual([]);
  const refused = finals(outcome.bombId);
  expect(refused.map(statusOf)).toEqual(['failed']);
  const message = messageOf(refused[0]!);
  expect(message).toContain('The check could not start: the configuration version was refused');
  expect(message).toContain(CAP);
  // The job's folder is the integrator's business, not the platform's.
  expect(message).not.toContain(busy.stateDir);
  expect(message).not.toMatch(/provider-runtask-job-|\/tmp\//);
  expect(finals(outcome.healthyId).map(statusOf)).toEqual(['passed']);
}

describe('a configuration version that inflates to 40 GiB', () => {
  it('on the journal: /healthz answers throughout, the job fails naming the cap, one final each', async () => {
    const busy = await serve([]);
    const outcome = await scenario(busy);
    await busy.stop();
    expectOneFinalEach(outcome, busy);
  }, 240_000);

  it('on PostgreSQL: the busy instance keeps its leases, the other takes nothing over; one final each', async () => {
    await server.createDatabase('bomb');
    const url = server.urlOf('bomb');
    const flags = ['--database-url', url, '--lease', '3s', '--database-timeout', '3s'];
    const busy = await serve(flags);
    const other = await serve(flags);
    const outcome = await scenario(busy);
    // Both jobs completed in the database: nobody can take one over any more.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (;;) {
        const { rows } = await client.query<{ state: string }>(`SELECT state FROM ${SCHEMA}.jobs`);
        if (rows.length === 2 && rows.every((row) => row.state === 'completed')) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await client.end();
    }
    await Promise.all([busy.stop(), other.stop()]);
    expect(other.events().filter((e) => e.event === 'store.took_over')).toEqual([]);
    expectOneFinalEach(outcome, busy);
  }, 240_000);
});
