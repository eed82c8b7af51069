/**
 * Malformed request targets against every server the product runs, each started as a real process the way a
 * user starts it: `provider emulate`, `provider runtask serve`, and the local platform of `provider runtask
 * send`. Raw bytes over a socket (HTTP clients refuse to send such targets): the fixed corpus of
 * `test/helpers/raw-http.ts`, then seeded random targets and Host headers built from the pieces that break
 * parsers, then the whole corpus at once. Every fixed case must get a 4xx (or a closed connection for what
 * Node's parser refuses), no random one a 5xx; the server must answer its health request after each, print no
 * stack trace, write a request log of whole JSON lines (the emulator), and stop (or finish) with exit 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import {
  MALFORMED_REQUESTS,
  STACK_TRACE,
  acceptable,
  preview,
  rawExchange,
  type MalformedRequest,
} from '../helpers/raw-http.js';
import { doc, fakeIntegrators, type IntegratorTools } from '../runtask/send/integrators.js';
import { tempDir } from '../helpers/tmp.js';
import { SOAK, report, seeded, type Random } from './helpers.js';

const BIN = join(REPO_ROOT, 'bin', 'provider.cjs');
const KEY = 'malformed-suite-hmac-key-3c9e';
const RANDOM_CASES = 80 * SOAK;
const SEED = 910_001;

let dir: string;
const children: ChildProcess[] = [];
const startIntegrator = fakeIntegrators();
const figures: string[] = [];

beforeAll(() => {
  expect(
    readFileSync(join(REPO_ROOT, 'dist', 'cli', 'main.js')).length,
    'npm run build first',
  ).toBeGreaterThan(0);
  dir = tempDir();
});
afterEach(() => {
  // A test that failed half-way must not leave its server running.
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});
afterAll(() => {
  report(`malformed requests: ${figures.join('; ')}`);
});

/** A spawned `provider` command with its output. */
interface Spawned {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` on stdout. */
  line(pattern: RegExp): Promise<RegExpExecArray>;
  exit: Promise<number | null>;
}

function provider(args: string[]): Spawned {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ...{ NO_COLOR: '1', CI: 'true', RUNTASK_HMAC_KEY: KEY },
  };
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const w of [...waiters]) {
      const match = w.pattern.exec(out);
      if (!match) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(match);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => `${out}\n${err}`,
    line: (pattern) =>
      new Promise((resolve, reject) => {
        const match = pattern.exec(out);
        if (match) return resolve(match);
        waiters.push({ pattern, resolve });
        void exit.then((code) => reject(new Error(`exited with ${code} before ${pattern}: ${out}\n${err}`)));
      }),
    exit,
  };
}

const PIECES = [
  '/',
  '//',
  '[',
  ']',
  '[::1]',
  '%',
  '%Z',
  '%ZZ',
  '%E0',
  '%A4',
  '%E0%A4%A',
  '%C0%AF',
  '%00',
  '%2f',
  '%2e%2e',
  '..',
  '?',
  '&',
  '=',
  '#',
  '@',
  ':',
  '\\',
  '*',
  'api',
  'v2',
  'ping',
  'healthz',
  'http://',
  'x',
  '%25',
  '+',
  '_archivist',
  'object',
  'task-results',
  'callback',
  '\u00e9',
  '~',
  ';',
  '|',
  '^',
  '{',
  '}',
];
const HOSTS = ['127.0.0.1', '[::1]:80', 'x:1', '[[[', '../x', 'a@b', 'a b', 'x:port', '', '%zz', 'h\u00e9'];

/** A random request target, Host and method from the seeded generator. */
function randomRequest(r: Random, n: number): MalformedRequest {
  const parts = Array.from({ length: r.int(1, 12) }, () => r.pick(PIECES));
  const target = (r.chance(0.8) ? '/' : '') + parts.join('');
  const method = r.pick(['GET', 'GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD']);
  const host = r.chance(0.8) ? '127.0.0.1' : r.pick(HOSTS);
  return {
    name: `random ${n}: ${method} ${JSON.stringify(target)} Host ${JSON.stringify(host)}`,
    bytes: Buffer.from(
      `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      'latin1',
    ),
    // Random pieces can make a target Node refuses (a space, a raw byte it does not take).
    parser: true,
  };
}

/**
 * Sends the corpus, the random requests and the corpus at once to `url`; after each request, `healthy` must
 * hold. Returns how many requests were sent.
 */
async function assault(url: string, healthy: () => Promise<void>): Promise<number> {
  for (const malformed of MALFORMED_REQUESTS) {
    const answer = await rawExchange(url, malformed.bytes);
    expect(acceptable(malformed, answer), `${malformed.name}: ${preview(answer.text)}`).toBe(true);
    await healthy();
  }
  const r = seeded(SEED);
  for (let n = 1; n <= RANDOM_CASES; n++) {
    const malformed = randomRequest(r, n);
    const answer = await rawExchange(url, malformed.bytes);
    expect(answer.status ?? 0, `seed ${SEED}, ${malformed.name}: ${preview(answer.text)}`).toBeLessThan(500);
    await healthy();
  }
  const all = await Promise.all(MALFORMED_REQUESTS.map((m) => rawExchange(url, m.bytes)));
  all.forEach((answer, i) =>
    expect(acceptable(MALFORMED_REQUESTS[i]!, answer), MALFORMED_REQUESTS[i]!.name).toBe(true),
  );
  await healthy();
  return MALFORMED_REQUESTS.length * 2 + RANDOM_CASES;
}

async function expectStatus(url: string, status: number): Promise<void> {
  const answer = await fetch(url);
  await answer.arrayBuffer();
  expect(answer.status, url).toBe(status);
}

describe('malformed request targets against every server the product runs', () => {
  it('provider emulate: 4xx for each, serving throughout, a whole request log, exit 0 on SIGTERM', async () => {
    const log = join(dir, 'requests.jsonl');
    const emulate = provider(['emulate', '--port', '0', '--json', '--request-log', log]);
    const [line] = await emulate.line(/^\{.*\}\n/);
    const url = (JSON.parse(line) as { url: string }).url;
    const sent = await assault(url, () => expectStatus(`${url}/api/v2/ping`, 204));
    emulate.child.kill('SIGTERM');
    expect(await emulate.exit).toBe(0);
    expect(emulate.output()).not.toMatch(STACK_TRACE);
    expect(emulate.output()).not.toMatch(/unexpected error/);
    const records = readFileSync(log, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: number; path: string });
    expect(records.filter((rec) => rec.status >= 500)).toEqual([]);
    expect(records.filter((rec) => rec.status === 400).length).toBeGreaterThan(20);
    figures.push(`emulate ${sent} requests, ${records.length} logged`);
  });

  it('provider runtask serve: 4xx for each, /healthz throughout, no error logged, exit 0 on SIGTERM', async () => {
    const serve = provider([
      'runtask',
      'serve',
      '--port',
      '0',
      '--exec',
      'true',
      '--state-dir',
      join(dir, 'state'),
    ]);
    const [, url] = await serve.line(/listening on (http:\/\/\S+)\n/);
    const sent = await assault(url!, () => expectStatus(new URL('/healthz', url).href, 200));
    serve.child.kill('SIGTERM');
    expect(await serve.exit).toBe(0);
    expect(serve.output()).not.toMatch(STACK_TRACE);
    expect(serve.output()).not.toMatch(/"level":"error"/);
    figures.push(`runtask serve ${sent} requests`);
  });

  it("runtask send's platform: 4xx for each, serving throughout, then the real callback passes (exit 0)", async () => {
    let tools: IntegratorTools | undefined;
    const integrator = await startIntegrator((_request, t) => {
      tools = t;
    });
    const send = provider([
      'runtask',
      'send',
      integrator.url,
      '--progress-window',
      '1m',
      '--expect',
      'passed',
    ]);
    const [, url] = await send.line(/platform +listening on (http:\/\/[^\s;]+)/);
    const sent = await assault(url!, () => expectStatus(`${url}/api/v2/ping`, 204));
    expect(tools, 'the platform sent its request to the integrator').toBeDefined();
    expect((await tools!.patch(doc('passed', { message: 'ok' }))).status).toBe(200);
    expect(await send.exit, send.output()).toBe(0);
    expect(send.output()).toMatch(/PASS/);
    expect(send.output()).not.toMatch(STACK_TRACE);
    figures.push(`runtask send's platform ${sent} requests`);
  });
});
