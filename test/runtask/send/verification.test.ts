/**
 * `provider runtask send --verification` spawned exactly as a user runs it, against integrators that are real
 * processes or servers on loopback: a closed port, a server that resets the connection, one that answers 500,
 * `provider runtask serve` (spawned too) holding another HMAC key (401) and holding the same key (200). Only a
 * 200 verifies: the platform creates the run task after nothing else. An integrator that is not there, refuses
 * or fails did not break the contract, it did not accept the request: exit 4, named as such, with the hint the
 * run request gets too. The request is sent once, so no retry is announced. And the run request and the
 * verification request are judged by one rule: the same answers give the same verdict.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/paths.js';
import type { CliResult } from '../../helpers/result.js';
import { HANDLER, KEY, freePort, normaliseTimeline, sendFast } from './helpers.js';
import { tempDir } from '../../helpers/tmp.js';

const BIN = join(REPO_ROOT, 'bin', 'provider.cjs');
const WRONG_KEY = 'not-the-key-the-integrator-holds-91c4';

/** A spawned `provider` process with its output collected. */
interface Spawned {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The first stdout line; rejects if the process ends before printing one. */
  firstLine: Promise<string>;
  exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
let dir: string;

function start(args: string[], env: Record<string, string> = {}): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (err += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    void exit.then((code) => reject(new Error(`exited with ${code} before a line; stderr: ${err}`)));
  });
  firstLine.catch(() => undefined);
  return { child, stdout: () => out, stderr: () => err, firstLine, exit };
}

/** Runs `provider runtask send <url> --verification [args]` to its end. */
async function verify(url: string, args: string[] = [], key: string = KEY): Promise<CliResult> {
  const run = start(['runtask', 'send', url, '--verification', ...args], { RUNTASK_HMAC_KEY: key });
  const exitCode = await run.exit;
  const result: CliResult = { exitCode, stdout: run.stdout(), stderr: run.stderr() };
  // Neither key ever shows, whatever the outcome.
  for (const secret of [KEY, WRONG_KEY]) expect(result.stdout + result.stderr).not.toContain(secret);
  return result;
}

async function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/**
 * A port that was free a moment ago and is closed now: nothing listens there. freePort picks it below the
 * ephemeral range, so no other test's server on port 0 can land on it in between.
 */
async function closedPort(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/`;
}

let serve: Spawned;
let serveUrl: string;
let resets = 0;
let resetUrl: string;
let errors = 0;
let errorUrl: string;
const servers: Array<Server | ReturnType<typeof createHttpServer>> = [];

beforeAll(async () => {
  if (!existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js')))
    execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'ignore' });
  dir = tempDir();
  // The real integrator, as a user starts it.
  serve = start(['runtask', 'serve', '--port', '0', '--exec', HANDLER, '--state-dir', join(dir, 'state')], {
    RUNTASK_HMAC_KEY: KEY,
  });
  serveUrl = /listening on (\S+)/.exec(await serve.firstLine)![1]!;
  // A server that takes the connection and the request, then resets it (TCP RST) without an answer.
  const reset = createNetServer((socket) => {
    socket.once('data', () => {
      resets++;
      socket.resetAndDestroy();
    });
  });
  resetUrl = await listen(reset);
  const failing = createHttpServer((req, res) => {
    errors++;
    req.resume();
    req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end('database is down'));
  });
  errorUrl = await listen(failing);
  servers.push(reset, failing);
}, 120_000);

afterAll(async () => {
  for (const server of servers) {
    if ('closeAllConnections' in server) server.closeAllConnections();
    server.close();
  }
  serve?.child.kill('SIGTERM');
  if (serve) expect(await serve.exit).toBe(0);
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

type Report = {
  ok: boolean;
  result: string;
  exitCode: number;
  summary: string;
  verification: boolean;
  request: { accepted: boolean; attempts: Array<{ http: number | null; error: string | null }> };
  notAccepted: { reason: string; message: string; hint: string } | null;
  violations: unknown[];
  callbacks: unknown[];
  error?: { code: string; message: string; hint: string | null };
};

const NOT_CREATED = 'the platform would not create the run task';
const SENT_ONCE = `+T  gave up    after 1 attempt (the verification request is sent once): ${NOT_CREATED}`;

describe.concurrent('runtask send --verification (spawned) against', () => {
  it('a closed port: not accepted, exit 4, never "PASS"', async () => {
    const url = await closedPort();
    const text = await verify(url);
    expect(text.exitCode).toBe(4);
    const message = 'no answer from the integrator to the verification request (1 attempt: ECONNREFUSED)';
    expect(normaliseTimeline(text.stdout)).toBe(
      [
        '+T  platform   listening on http://127.0.0.1:<port>; sending the verification request',
        '+T  request    POST http://127.0.0.1:<port>/: N bytes, signed',
        '+T  answer     no answer after <duration>: ECONNREFUSED',
        SENT_ONCE,
        '+T  result     refused',
        `NOT ACCEPTED  ${message}; result refused`,
        '',
      ].join('\n'),
    );
    expect(text.stderr).toBe(
      `error: ${message}: ${NOT_CREATED}\n  hint: Is the integrator listening at ${url}? Start it first, then check the host and port in the URL.\n`,
    );

    const json = await verify(url, ['--json']);
    expect(json.exitCode).toBe(4);
    expect(json.stdout.trim().split('\n')).toHaveLength(1);
    const report = JSON.parse(json.stdout) as Report;
    expect(report).toMatchObject({
      ok: false,
      result: 'refused',
      exitCode: 4,
      verification: true,
      request: { accepted: false, attempts: [{ http: null, error: 'ECONNREFUSED' }] },
      notAccepted: { reason: 'unreachable', message },
      violations: [],
      callbacks: [],
      error: { code: 'api', message: `${message}: ${NOT_CREATED}` },
    });
  });

  it('a server that resets the connection: not accepted, exit 4, sent once', async () => {
    const before = resets;
    const text = await verify(resetUrl);
    expect(text.exitCode).toBe(4);
    const lines = normaliseTimeline(text.stdout).split('\n');
    expect(lines[2]).toBe('+T  answer     no answer after <duration>: ECONNRESET');
    expect(lines.slice(3)).toEqual([
      SENT_ONCE,
      '+T  result     refused',
      'NOT ACCEPTED  no answer from the integrator to the verification request (1 attempt: ECONNRESET); result refused',
      '',
    ]);
    expect(text.stderr).toMatch(/^error: no answer from the integrator to the verification request/);

    const json = await verify(resetUrl, ['--json']);
    expect(json.exitCode).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      exitCode: 4,
      request: { accepted: false, attempts: [{ http: null, error: 'ECONNRESET' }] },
      notAccepted: { reason: 'unreachable' },
      violations: [],
    });
    expect(resets - before).toBe(2);
  });

  it('a server that answers 500: not accepted, exit 4, sent once and no retry announced', async () => {
    const before = errors;
    const text = await verify(errorUrl);
    expect(text.exitCode).toBe(4);
    expect(text.stdout).not.toMatch(/retry|VIOLATION/);
    const message = 'the integrator never answered 200 to the verification request (1 attempt: 500)';
    expect(normaliseTimeline(text.stdout).split('\n').slice(2)).toEqual([
      '+T  answer     500 after <duration>: "database is down"',
      SENT_ONCE,
      '+T  result     refused',
      `NOT ACCEPTED  ${message}; result refused`,
      '',
    ]);
    expect(text.stderr).toContain(`error: ${message}: ${NOT_CREATED}\n  hint: `);
    expect(text.stderr).not.toContain('broke the run task contract');

    const json = await verify(errorUrl, ['--json']);
    expect(json.exitCode).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      result: 'refused',
      exitCode: 4,
      request: { accepted: false, attempts: [{ http: 500 }] },
      notAccepted: { reason: 'failing', message },
      violations: [],
      error: { code: 'api' },
    });
    expect(errors - before).toBe(2);
  });

  it('runtask serve holding another HMAC key (401): refused, not a broken contract, with the HMAC hint', async () => {
    const text = await verify(serveUrl, [], WRONG_KEY);
    expect(text.exitCode).toBe(4);
    const message = 'the integrator refused the verification request (1 attempt: 401)';
    expect(normaliseTimeline(text.stdout).split('\n').slice(2)).toEqual([
      '+T  answer     401 after <duration>: "unauthorized: the X-TFC-Task-Signature header is missing or does not match the body"',
      SENT_ONCE,
      '+T  result     refused',
      `NOT ACCEPTED  ${message}; result refused`,
      '',
    ]);
    expect(text.stderr).toContain(`error: ${message}: ${NOT_CREATED}\n`);
    expect(text.stderr).toContain('(401/403: do both sides use the same HMAC key?)');
    expect(text.stderr).not.toContain('contract');

    const json = await verify(serveUrl, ['--json'], WRONG_KEY);
    expect(json.exitCode).toBe(4);
    const report = JSON.parse(json.stdout) as Report;
    expect(report).toMatchObject({
      ok: false,
      result: 'refused',
      exitCode: 4,
      request: { accepted: false, attempts: [{ http: 401 }] },
      notAccepted: { reason: 'refused', message },
      violations: [],
      error: { code: 'api' },
    });
    expect(report.error!.hint).toContain('(401/403: do both sides use the same HMAC key?)');
  });

  it('runtask serve holding the same key (200): verified, exit 0', async () => {
    const text = await verify(serveUrl);
    expect(text.exitCode).toBe(0);
    expect(text.stderr).toBe('');
    expect(normaliseTimeline(text.stdout).split('\n').slice(1)).toEqual([
      `+T  request    POST ${normaliseTimeline(serveUrl)}: N bytes, signed`,
      '+T  answer     200 after <duration>',
      '+T  result     verified',
      'PASS  the integrator answered the verification request with 200 and did not call back',
      '',
    ]);

    const json = await verify(serveUrl, ['--json']);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      result: 'verified',
      exitCode: 0,
      request: { accepted: true, attempts: [{ http: 200, error: null }] },
      notAccepted: null,
      violations: [],
      callbacks: [],
    });
  });
});

describe('the run request and the verification request are judged alike', () => {
  it.each([
    ['nothing listening', () => closedPort(), 'unreachable', KEY],
    ['a reset', () => Promise.resolve(resetUrl), 'unreachable', KEY],
    ['500', () => Promise.resolve(errorUrl), 'failing', KEY],
    ['401 from runtask serve (another key)', () => Promise.resolve(serveUrl), 'refused', WRONG_KEY],
  ] as const)('%s', async (_name, target, reason, key) => {
    const url = await target();
    const env = { RUNTASK_HMAC_KEY: key };
    const run = await sendFast(url, {}, { json: true, env });
    const verification = await sendFast(url, { verification: true }, { json: true, env });
    for (const { report } of [run, verification]) {
      expect(report).toMatchObject({
        ok: false,
        exitCode: 4,
        notAccepted: { reason },
        violations: [],
        error: { code: 'api' },
      });
    }
    expect(run.exitCode).toBe(4);
    expect(verification.exitCode).toBe(4);
    expect((run.report!.request as Report['request']).attempts).toHaveLength(4);
    expect((verification.report!.request as Report['request']).attempts).toHaveLength(1);
    // The same hint for the same answers: only the request's name and what the platform does differ.
    const hint = (r: typeof run): string => String((r.report!.error as { hint: string }).hint);
    expect(hint(verification)).toBe(hint(run));
  });

  it('a server that takes the connection and never answers: the same verdict, the hint says to answer at once', async () => {
    const silent = createNetServer((socket) => socket.on('data', () => undefined));
    const url = await listen(silent);
    servers.push(silent);
    const tuning = { attemptTimeoutMs: 150 };
    const run = await sendFast(url, {}, { json: true, tuning });
    const verification = await sendFast(url, { verification: true }, { json: true, tuning });
    for (const { exitCode, report } of [run, verification]) {
      expect(exitCode).toBe(4);
      expect(report).toMatchObject({
        notAccepted: {
          reason: 'unreachable',
          hint: 'The integrator took the connection but did not answer in time: answer 200 at once and do the work afterwards.',
        },
      });
    }
    expect((verification.report!.notAccepted as { message: string }).message).toBe(
      'no answer from the integrator to the verification request (1 attempt: no answer within 150 ms)',
    );
  });
});
