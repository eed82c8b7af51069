/**
 * `provider runtask serve` under abuse, run as the command (in-process) against the test platform: bad
 * signatures, malformed and oversized bodies, a client that lies about its length, slowloris clients (a byte
 * per 100 ms), a flood of 500 requests at once, handlers that are killed by a signal, exit non-zero, print
 * garbage or too much, leave children behind, and callbacks the platform fails for a while. Throughout,
 * `/healthz` answers; afterwards every accepted job has exactly one final result at the platform, nothing is
 * left in the journal, and neither the HMAC key nor any access token appears in the integrator's output or files.
 */
import { randomBytes, createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import { Capture, LineCapture } from '../helpers/cli.js';
import { PRE_PLAN_REQUEST, POST_PLAN_REQUEST, VERIFICATION_REQUEST } from '../runtask/documented-payloads.js';
import { bytesOf, journaledIds, requestFor } from '../runtask/helpers.js';
import { TestPlatform, statusOf, type Recorded } from '../runtask/platform.js';
import { tempDir } from '../helpers/tmp.js';
import { SOAK, expectNoSecretIn, expectNoSecretInFiles, filesUnder, report, seeded } from './helpers.js';

const HANDLER = fileURLToPath(new URL('./abuse-handler.sh', import.meta.url));
const KEY = `abuse-hmac-${randomBytes(16).toString('hex')}`;
const FLOOD = 500 * Math.min(SOAK, 4);

let platform: TestPlatform;
let root: string;
let stateDir: string;
let url: string;
let stop: AbortController;
let exit: Promise<number>;
const stdout = new LineCapture();
const stderr = new Capture();
const savedTmp = process.env.TMPDIR;

/** Every job the integrator accepted (answered 200 to a job request), by task result id. */
const accepted = new Map<string, { behaviour: string; token: string }>();
/** Task result ids of requests that were refused or were verification requests: they must never see a callback. */
const refused = new Set<string>();
/** Every access token sent, for the secret scans. */
const tokens = new Set<string>();
/** Every /healthz answer seen while abuse was going on. */
const health: number[] = [];

const sign = (body: string | Buffer, key = KEY): string =>
  createHmac('sha512', key).update(body).digest('hex');

/** A job request whose handler does `behaviour`, with its own access token. */
function job(
  behaviour: string,
  sample: Record<string, unknown> = PRE_PLAN_REQUEST,
): Record<string, unknown> & {
  task_result_id: string;
} {
  const token = `abuse-token-${randomBytes(12).toString('hex')}`;
  tokens.add(token);
  const request = requestFor(sample, platform, { access_token: token });
  return { ...request, run_id: `run-${behaviour}-${request.run_id}` };
}

/** POSTs raw bytes with the platform's headers (and `signature`, unless null). */
async function post(body: string | Buffer, signature: string | null): Promise<number> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'TFC/1.0 (+https://app.terraform.io; TFC)',
  };
  if (signature !== null) headers['x-tfc-task-signature'] = signature;
  try {
    const response = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(30_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0; // the connection was cut (an oversized body)
  }
}

/** Sends a job request, signed; remembers it as accepted when the answer is 200. */
async function sendJob(request: ReturnType<typeof job>): Promise<number> {
  const body = bytesOf(request);
  const status = await post(body, sign(body));
  if (status === 200)
    accepted.set(request.task_result_id, {
      behaviour: String(request.run_id).split('-')[1]!,
      token: String(request.access_token),
    });
  else refused.add(request.task_result_id);
  return status;
}

async function healthz(): Promise<number> {
  const response = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return response.status;
}

/** Polls /healthz every 50 ms until `done` settles; every answer is kept. */
async function pollHealthWhile<T>(done: Promise<T>): Promise<T> {
  let finished = false;
  const poller = (async () => {
    while (!finished) {
      health.push(await healthz().catch(() => -1));
      await sleep(50);
    }
  })();
  try {
    return await done;
  } finally {
    finished = true;
    await poller;
  }
}

/**
 * A raw TCP client that sends `head` at once, then `bytes` one at a time `everyMs` apart, then ends; resolves
 * with whatever answer came back ('' for none).
 */
function trickle(head: Buffer, bytes: Buffer, everyMs: number): Promise<string> {
  const address = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(address.port), address.hostname);
    let answer = '';
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (timer) clearInterval(timer);
      resolve(answer);
    });
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (i >= bytes.length) {
          clearInterval(timer);
          timer = undefined;
          socket.end();
          return;
        }
        socket.write(bytes.subarray(i, i + 1));
        i++;
      }, everyMs);
    });
  });
}

function finals(taskResultId: string): Recorded[] {
  return platform.callbacks(taskResultId).filter((r) => ['passed', 'failed'].includes(statusOf(r) ?? ''));
}

beforeAll(async () => {
  root = tempDir();
  stateDir = path.join(root, 'state');
  // Handlers get their working folders under the temp folder: this one, so that the scan below finds them.
  process.env.TMPDIR = path.join(root, 'tmp');
  fs.mkdirSync(process.env.TMPDIR);
  platform = await TestPlatform.start();
  stop = new AbortController();
  exit = run({
    argv: [
      'runtask',
      'serve',
      '--json',
      '--port',
      '0',
      '--exec',
      `sh '${HANDLER}'`,
      '--platform-host',
      platform.url,
      '--state-dir',
      stateDir,
      '--timeout',
      '10s',
      '--grace',
      '5s',
      '--callback-timeout',
      '30s',
    ],
    env: { PATH: process.env.PATH, RUNTASK_HMAC_KEY: KEY },
    cwd: root,
    homeDir: root,
    stdout,
    stderr,
    stdinIsTTY: false,
    signal: stop.signal,
  });
  url = (JSON.parse(await stdout.firstLine) as { url: string }).url;
  expect(await healthz()).toBe(200);
});

afterAll(async () => {
  if (!stop.signal.aborted) stop.abort('SIGTERM');
  await exit.catch(() => undefined);
  await platform.close();
  process.env.TMPDIR = savedTmp;
  if (savedTmp === undefined) delete process.env.TMPDIR;
});

describe.sequential('runtask serve under abuse', () => {
  it('refuses bad signatures with 401 and nothing else', async () => {
    const r = seeded(4242);
    const statuses: number[] = [];
    const request = (): ReturnType<typeof job> => job('pass');
    const forged: [string, (body: string) => string | null][] = [
      ['none', () => null],
      ['empty', () => ''],
      ['another key', (b) => sign(b, 'not-the-key')],
      ['upper-case hex', (b) => sign(b).toUpperCase()],
      ['base64', (b) => Buffer.from(sign(b), 'hex').toString('base64')],
      ['sha512= prefix', (b) => `sha512=${sign(b)}`],
      ['one digit off', (b) => sign(b).replace(/^./, (c) => (c === '0' ? '1' : '0'))],
      ['truncated', (b) => sign(b).slice(0, 64)],
      ['of other bytes', (b) => sign(`${b} `)],
      ['HMAC-SHA256', (b) => createHmac('sha256', KEY).update(b).digest('hex')],
      ['random', () => randomBytes(64).toString('hex')],
      ['very long', () => 'a'.repeat(100_000)],
    ];
    for (let i = 0; i < 5 * forged.length; i++) {
      const [, make] = forged[i % forged.length]!;
      const req = request();
      const body = bytesOf(req);
      // Some bodies re-serialised (compact): the signature must be over the raw bytes as sent.
      const sent = r.chance(0.3) ? JSON.stringify(req) : body;
      statuses.push(await post(sent, make(body)));
      refused.add(req.task_result_id);
    }
    // 431: a 100 000-character header is refused by Node before it reaches us; either way nothing happens.
    expect(statuses.filter((x) => x !== 401 && x !== 431)).toEqual([]);
    expect(statuses.filter((x) => x === 401).length).toBeGreaterThan(50);
    expect(await healthz()).toBe(200);
  });

  it('refuses malformed, odd and oversized bodies, and survives a client that lies about its length', async () => {
    const signed = async (body: string | Buffer): Promise<number> => post(body, sign(body));
    const cases: [string, () => Promise<number>, number[]][] = [
      ['not JSON', () => signed('{"payload_version": 1,'), [400]],
      ['a JSON array', () => signed('[1,2,3]'), [400]],
      ['a JSON string', () => signed('"hello"'), [400]],
      ['invalid UTF-8', () => signed(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), [400]],
      ['deeply nested JSON', () => signed(`${'['.repeat(200_000)}${']'.repeat(200_000)}`), [400]],
      ['payload_version 2', () => sendJob({ ...job('pass'), payload_version: 2 }), [422]],
      [
        'a callback URL on another host',
        () => sendJob({ ...job('pass'), task_result_callback_url: 'https://evil.example/cb' }),
        [422],
      ],
      ['no access token', () => sendJob({ ...job('pass'), access_token: '' }), [422]],
      [
        'a plan URL on another host',
        () => sendJob({ ...job('pass', POST_PLAN_REQUEST), plan_json_api_url: 'https://evil.example/plan' }),
        [422],
      ],
      ['an empty body (verification)', () => signed(''), [200]],
      [
        'the verification request',
        () => signed(bytesOf({ ...VERIFICATION_REQUEST, access_token: 'test-token' })),
        [200],
      ],
      ['2 MB', () => signed(Buffer.alloc(2 * 1024 * 1024, 0x20)), [413]],
      ['40 MB', () => signed(Buffer.alloc(40 * 1024 * 1024, 0x20)), [413, 0]],
    ];
    for (const [name, send, expected] of cases) {
      expect(expected, `${name}`).toContain(await send());
    }
    // Says 100 000 bytes, sends 10, then goes away.
    const address = new URL(url);
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(address.port), address.hostname, () => {
        socket.write(
          `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"payload`,
        );
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on('close', () => resolve());
      socket.on('error', () => undefined);
    });
    expect(await healthz()).toBe(200);
  });

  it('keeps answering /healthz and taking jobs while slowloris clients send a byte per 100 ms', async () => {
    const slowBody = Buffer.from('{"payload_version":1}');
    const slowHead = Buffer.from(
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${slowBody.length}\r\n\r\n`,
    );
    // Headers at once, then the body a byte per 100 ms.
    const clients = Array.from({ length: 20 }, () => trickle(slowHead, slowBody, 100));
    // Headers a byte per 100 ms, then the client gives up half-way.
    const headerCrawlers = Array.from({ length: 20 }, () =>
      trickle(Buffer.alloc(0), slowHead.subarray(0, 22), 100),
    );
    const during = (async () => {
      const jobs = Array.from({ length: 8 }, () => job('pass'));
      for (const j of jobs) expect(await sendJob(j)).toBe(200);
      await Promise.all(
        jobs.map((j) => platform.waitFor((r) => r.method === 'PATCH' && finals(j.task_result_id).length > 0)),
      );
    })();
    await pollHealthWhile(during);
    const answers = await pollHealthWhile(Promise.all([...clients, ...headerCrawlers]));
    // Unsigned slow bodies end in 401; header crawlers end with any answer or none — but the server lived.
    expect(answers.slice(0, 20).every((a) => a.startsWith('HTTP/1.1 401'))).toBe(true);
    expect(await healthz()).toBe(200);
  }, 60_000);

  it(`answers a flood of ${FLOOD} requests at once, /healthz included`, async () => {
    const r = seeded(5150);
    const sends: Promise<number>[] = [];
    const jobs = Math.floor(FLOOD / 5);
    for (let i = 0; i < FLOOD; i++) {
      const kind =
        i < jobs ? 'job' : r.pick(['bad signature', 'bad signature', 'malformed', 'verification'] as const);
      if (kind === 'job') sends.push(sendJob(job(r.chance(0.8) ? 'pass' : 'fail')));
      else if (kind === 'bad signature') {
        const j = job('pass');
        refused.add(j.task_result_id);
        sends.push(post(bytesOf(j), sign('something else')));
      } else if (kind === 'malformed') {
        const body = `{"payload_version":1,${'x'.repeat(r.int(0, 2000))}`;
        sends.push(post(body, sign(body)));
      } else {
        const body = bytesOf({ ...VERIFICATION_REQUEST });
        sends.push(post(body, sign(body)));
      }
    }
    const statuses = await pollHealthWhile(Promise.all(sends));
    const counts = statuses.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {});
    expect(Object.keys(counts).map(Number).sort(), JSON.stringify(counts)).toEqual(
      [200, 400, 401].filter((s) => counts[s] !== undefined),
    );
    expect(counts[0], 'no connection was refused or cut').toBeUndefined();
    expect(await healthz()).toBe(200);
  }, 60_000);

  it('runs a request the platform sends several times at once as one job', async () => {
    const requests = Array.from({ length: 10 }, () => job('pass'));
    const statuses = await pollHealthWhile(
      Promise.all(requests.flatMap((j) => Array.from({ length: 5 }, () => sendJob(j)))),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    for (const j of requests) {
      await platform.waitFor((r) => r.method === 'PATCH' && finals(j.task_result_id).length > 0);
    }
    await sleep(300);
    for (const j of requests) {
      expect(
        platform.callbacks(j.task_result_id).map((r) => statusOf(r)),
        `callbacks of ${j.task_result_id}`,
      ).toEqual(['running', 'passed']);
    }
  });

  it('reports every crashed, killed or babbling handler, and retries callbacks the platform fails', async () => {
    const behaviours = [
      ...Array<string>(3).fill('killed'),
      ...Array<string>(2).fill('term'),
      ...Array<string>(2).fill('segv'),
      ...Array<string>(3).fill('fail'),
      ...Array<string>(3).fill('garbage'),
      ...Array<string>(3).fill('brokenjson'),
      ...Array<string>(2).fill('huge'),
      ...Array<string>(3).fill('stderr'),
      ...Array<string>(2).fill('orphan'),
    ];
    const requests = behaviours.map((b) => job(b));
    // The platform fails some callbacks for a while: 503, then a reset, then it takes them.
    for (const request of requests.filter((_, i) => i % 4 === 0)) {
      platform.script(request.task_result_id, [{ status: 503 }, { reset: true }]);
    }
    const statuses = await pollHealthWhile(Promise.all(requests.map((j) => sendJob(j))));
    expect(new Set(statuses)).toEqual(new Set([200]));
  });

  it('gives every accepted job exactly one final result, and nothing to the rest', async () => {
    const deadline = Date.now() + 45_000;
    const missing = (): string[] => [...accepted.keys()].filter((id) => finals(id).length === 0);
    while (missing().length > 0 && Date.now() < deadline) await sleep(100);
    expect(missing(), 'accepted jobs without a final callback').toEqual([]);
    for (const [id, { behaviour }] of accepted) {
      const results = finals(id);
      // Retries of a refused callback carry the same result; there is never a second, different verdict.
      const verdicts = new Set(results.map((r) => JSON.stringify(r.json)));
      expect(verdicts.size, `${behaviour} ${id}: ${[...verdicts].join(' | ')}`).toBe(1);
      const result = results[0]!;
      const status = statusOf(result);
      if (['killed', 'term', 'segv', 'fail', 'stderr'].includes(behaviour))
        expect(status, behaviour).toBe('failed');
      if (behaviour === 'pass') expect(status, behaviour).toBe('passed');
      const message =
        (result.json as { data: { attributes: { message?: string } } }).data.attributes.message ?? '';
      expect([...message].length, `${behaviour}: message length`).toBeLessThanOrEqual(1000);
      expect(result.headers.authorization).toBe(`Bearer ${accepted.get(id)!.token}`);
    }
    for (const id of refused) expect(platform.callbacks(id), `refused ${id}`).toEqual([]);
    expect(accepted.size).toBeGreaterThanOrEqual(FLOOD / 5 + 8 + 23);
    expect(health.length).toBeGreaterThan(10);
    expect(
      health.filter((s) => s !== 200),
      '/healthz answers other than 200',
    ).toEqual([]);
  }, 60_000);

  it('stops cleanly, with an empty journal and no secret in its output or files', async () => {
    expect(await healthz()).toBe(200);
    stop.abort('SIGTERM');
    expect(await exit).toBe(0);
    expect(journaledIds(stateDir)).toEqual([]);
    const secrets = [KEY, ...tokens];
    expectNoSecretIn(stdout.text, secrets, 'runtask serve stdout');
    expectNoSecretIn(stderr.text, secrets, 'runtask serve log');
    const lines = stderr.text.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line.slice(0, 200)).not.toThrow();
    expectNoSecretInFiles(root, secrets, 'files under the integrator state and work folders');
    // Handlers' working folders are gone.
    expect(filesUnder(process.env.TMPDIR!).length).toBe(0);
    report(
      `integrator abuse: ${accepted.size} jobs accepted and finished, ${refused.size} requests refused, ` +
        `${health.length} /healthz answers during the abuse, ${lines.length} log lines scanned`,
    );
  });
});
