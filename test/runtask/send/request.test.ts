/**
 * The request side and the windows: 503 then 200 is retried and fine; an integrator that never answers 200 did
 * not accept the request (exit 4, not a contract violation), named with every answer (and a hint for 401 and
 * 422); a silent integrator is errored after the progress window and an endless one after the maximum duration
 * (exit 6); a failing timeline reads well.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KEY, freePort, sendCli, sendFast, startServe } from './helpers.js';
import { doc, fakeIntegrators, type FakeIntegrator } from './integrators.js';

const integrator = fakeIntegrators();

type Report = { result: string; violations: unknown[]; callbacks: unknown[]; timeout: unknown };

async function judge(
  fake: FakeIntegrator,
  args: string[],
): Promise<{ exitCode: number; report: Report; stderr: string }> {
  const result = await sendCli(fake.url, 0, ['--json', ...args]);
  return { exitCode: result.exitCode, report: JSON.parse(result.stdout) as Report, stderr: result.stderr };
}

describe.concurrent('timeouts → exit 6', () => {
  it('never calling back: errored after the progress window', async () => {
    const fake = await integrator(() => undefined);
    const { exitCode, report, stderr } = await judge(fake, ['--progress-window', '300ms']);
    expect(exitCode).toBe(6);
    expect(report).toMatchObject({
      result: 'errored',
      timeout: { window: 'progress-window' },
      violations: [],
    });
    expect(stderr).toContain('timed out: no progress update within 300ms (the progress window)');
  });

  it('running updates forever: errored after the maximum duration', async () => {
    const fake = await integrator(async (_r, tools) => {
      for (;;) {
        const answer = await tools.patch(doc('running', { message: 'still working' })).catch(() => undefined);
        if (answer?.status !== 200) return;
        await sleep(40);
      }
    });
    // A progress window far above the 40 ms between updates: a busy machine must not make it the one to end.
    const { exitCode, report } = await judge(fake, ['--progress-window', '2s', '--max-duration', '3s']);
    expect(exitCode).toBe(6);
    expect(report).toMatchObject({ result: 'errored', timeout: { window: 'max-duration' }, violations: [] });
    expect(report.callbacks.length).toBeGreaterThan(3);
  });
});

describe('the request', () => {
  it('503 then 200 is retried like the platform and is no violation', async () => {
    let posts = 0;
    const fake = await integrator(
      (_r, tools) => void (++posts === 2 && tools.patch(doc('passed'))),
      (n) => (n === 1 ? 503 : 200),
    );
    const result = await sendFast(fake.url, {}, { json: true });
    expect(result.exitCode).toBe(0);
    expect(result.report).toMatchObject({
      request: { attempts: [{ http: 503 }, { http: 200 }] },
      violations: [],
    });
  });

  it('never answering 200: 4 attempts, then not accepted (exit 4, no violation)', async () => {
    const fake = await integrator(() => undefined, 500);
    const result = await sendFast(fake.url, {}, { json: true });
    expect(result.exitCode).toBe(4);
    expect(fake.received).toHaveLength(4);
    expect(result.report).toMatchObject({
      result: 'unreachable',
      violations: [],
      notAccepted: {
        reason: 'failing',
        message: 'the integrator never answered 200 to the run task request (4 attempts: 500, 500, 500, 500)',
      },
      error: { code: 'api' },
    });
  });

  it('nothing listening: the network error is named', async () => {
    const port = await freePort();
    const result = await sendFast(`http://127.0.0.1:${port}/`, {}, { tuning: { retryDelaysMs: [10] } });
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toContain('no answer after');
    expect(result.stdout).toContain('ECONNREFUSED');
    expect(result.stdout).toMatch(/gave up {4}after 2 attempts: the task result is unreachable\n/);
    expect(result.stderr).toContain(
      'no answer from the integrator to the run task request (2 attempts: ECONNREFUSED, ECONNREFUSED): the task result is unreachable',
    );
  });

  it('runtask serve with another HMAC key answers 401: the hint names the key', async () => {
    const port = await freePort();
    const serve = await startServe(port, { key: KEY });
    try {
      const result = await sendFast(
        serve.url,
        { port: String(port) },
        { env: { RUNTASK_HMAC_KEY: 'another key' } },
      );
      expect(result.exitCode).toBe(4);
      expect(result.stdout).toMatch(
        /answer {5}401 after \d+ms: "unauthorized: the X-TFC-Task-Signature header is missing or does not match the body"/,
      );
      expect(result.stderr).toContain(
        'error: the integrator refused the run task request (4 attempts: 401, 401, 401, 401): the task result is unreachable',
      );
      expect(result.stderr).toContain('(401/403: do both sides use the same HMAC key?)');
      expect(result.stderr).not.toContain('contract');
    } finally {
      await serve.stop();
    }
  });

  it('an integrator without a key answers a signed request 400 "Unexpected x-tfc-task-signature header": the hint names the key (issue 33)', async () => {
    // As an integrator whose HMAC key is unset answers a request that carries a signature.
    const server = createServer((req, res) => {
      req.resume();
      const signed = (req.headers['x-tfc-task-signature'] ?? '') !== '';
      res.writeHead(signed ? 400 : 200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(signed ? 'Unexpected x-tfc-task-signature header\n' : '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const result = await sendFast(url, { verification: true }, { env: { RUNTASK_HMAC_KEY: KEY } });
      expect(result.exitCode).toBe(4);
      expect(result.stdout).toMatch(/answer {5}400 after \d+ms: "Unexpected x-tfc-task-signature header"/);
      expect(result.stderr).toContain('the integrator refused the verification request (1 attempt: 400)');
      expect(result.stderr).toContain(
        "The integrator refused the request's signature (400, naming the signature header): the HMAC key is the likely cause.",
      );
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('runtask serve refusing this platform (422): its words once, then a hint naming --platform-host', async () => {
    const serve = await startServe(await freePort());
    try {
      const result = await sendFast(serve.url);
      expect(result.exitCode).toBe(4);
      const answers = result.stdout.split('\n').filter((l) => l.includes('answer '));
      expect(answers).toHaveLength(4);
      expect(answers[0]).toMatch(
        /422 after \d+ms: "cannot report a result: the callback URL .* is not on an allowed platform host/,
      );
      expect(answers.slice(1).every((l) => /422 after \d+ms$/.test(l))).toBe(true);
      expect(result.stderr).toMatch(
        /422: does the integrator accept callbacks to http:\/\/127\.0\.0\.1:\d+\? runtask serve needs --platform-host/,
      );
    } finally {
      await serve.stop();
    }
  });

  it('a readable failing timeline: the VIOLATION under its callback, the error on stderr', async () => {
    const fake = await integrator(async (_r, tools) => {
      await tools.patch(doc('running'), { contentType: 'application/json' });
      await tools.patch(doc('passed'));
    });
    const result = await sendCli(fake.url, 0);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toMatch(
      /callback {3}PATCH → 415 {2}running\n {11}VIOLATION {2}the callback's Content-Type is "application\/json"; the platform takes application\/vnd\.api\+json\n/,
    );
    expect(result.stdout).toMatch(/result {5}passed\nFAIL {2}1 contract violation; result passed\n$/);
    expect(result.stderr).toMatch(
      /^error: the integrator broke the run task contract: the callback's Content-Type/,
    );
  });
});
