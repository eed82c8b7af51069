/**
 * The integrator (`runtask serve`) against malformed requests sent as raw bytes: a target that is not a URL,
 * bad percent-escapes in the path or the query, a Host that is not a host. Each gets a 400 (not a 500 "the
 * integrator failed"), nothing is logged as an error, no job starts, and the integrator keeps serving.
 */
import { describe, expect, it } from 'vitest';
import { MALFORMED_REQUESTS, acceptable, preview, rawExchange } from '../../helpers/raw-http.js';
import { integratorsPerTest } from '../helpers.js';
import { TestPlatform } from '../platform.js';

const platform = TestPlatform.perFile();
const startIntegrator = integratorsPerTest(platform);

const request = (target: string, method = 'GET', headers = 'Host: 127.0.0.1\r\n'): string =>
  `${method} ${target} HTTP/1.1\r\n${headers}Content-Length: 0\r\nConnection: close\r\n\r\n`;

async function healthy(url: string): Promise<void> {
  const answer = await fetch(new URL('/healthz', url));
  expect(answer.status).toBe(200);
}

describe('malformed requests to the integrator', () => {
  it.each([
    ['a target that is not a URL', request('//[', 'POST')],
    ['a target that is not a URL, with GET', request('//[')],
    ['a bad escape in the query of the POST', request('/?x=%ZZ', 'POST')],
    ['a truncated UTF-8 escape in the path', request('/%E0%A4%A', 'POST')],
    ['a Host that is not a host', request('/healthz', 'GET', 'Host: [[[\r\n')],
  ])('%s: 400, no error logged, no job, and the next request is served', async (_name, raw) => {
    const t = await startIntegrator();
    const answer = await rawExchange(t.integrator.url, raw);
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(/"title":"bad request"/);
    expect(t.events.filter((e) => e.level === 'error')).toEqual([]);
    expect(t.integrator.jobs.counts()).toEqual({ queued: 0, running: 0, reporting: 0 });
    await healthy(t.integrator.url);
  });

  it('every request of the corpus: a 4xx or a refusal by the parser, and the integrator keeps serving', async () => {
    const t = await startIntegrator();
    for (const malformed of MALFORMED_REQUESTS) {
      const answer = await rawExchange(t.integrator.url, malformed.bytes);
      expect(acceptable(malformed, answer), `${malformed.name}: ${preview(answer.text)}`).toBe(true);
      await healthy(t.integrator.url);
    }
    expect(t.events.filter((e) => e.level === 'error')).toEqual([]);
    expect(t.stderr.text).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  });
});
