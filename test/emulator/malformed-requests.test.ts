/**
 * Malformed requests, sent as raw bytes (HTTP clients refuse to send them): a target that is not a URL, a bad
 * percent-escape in the path or the query, a Host that is not a host. Each gets a 400 error document, the
 * handlers never see it (no "unexpected error"), the request log records it, and the emulator keeps serving.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, emulatorPerTest, expectStatus } from '../helpers/emulator/index.js';
import { MALFORMED_REQUESTS, acceptable, preview, rawExchange } from '../helpers/raw-http.js';
import { tempDir } from '../helpers/tmp.js';

const start = emulatorPerTest();
let dir: string;
beforeAll(() => {
  dir = tempDir();
});
const request = (target: string, method = 'GET', headers = 'Host: 127.0.0.1\r\n'): string =>
  `${method} ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`;

describe('malformed requests to the emulator', () => {
  it.each([
    ['a target that is not a URL', request('//[')],
    ['a bad escape in a path parameter', request('/api/v2/organizations/%ZZ/registry-providers')],
    ['a truncated UTF-8 escape', request('/api/v2/organizations/%E0%A4%A/registry-providers')],
    ['a bad escape in the query', request('/api/v2/ping?page%5Bnumber%5D=%ZZ')],
    ['a Host that is not a host', request('/api/v2/ping', 'GET', 'Host: [[[\r\n')],
  ])(
    '%s: 400 with an error document, no unexpected error, and the next request is served',
    async (_name, raw) => {
      const errors: unknown[] = [];
      const emulator = await start({ onError: (error) => errors.push(error) });
      const answer = await rawExchange(emulator.url, raw);
      expect(answer.status).toBe(400);
      expect(answer.text).toMatch(/"title":"bad request"/);
      expect(errors).toEqual([]);
      expectStatus(await call(emulator.url, 'GET', '/api/v2/ping'), 204);
    },
  );

  it('the request log records each of them, one JSON line per request, with the secret of a link redacted', async () => {
    const logPath = join(dir, 'requests.jsonl');
    const emulator = await start({ requestLogPath: logPath });
    await rawExchange(emulator.url, request('//['));
    await rawExchange(emulator.url, request('/_archivist/v1/object/c2VjcmV0.mac%ZZ'));
    await rawExchange(emulator.url, request(`/${'%ZZ'.repeat(1_000)}`));
    expectStatus(await call(emulator.url, 'GET', '/api/v2/ping'), 204);

    const lines = readFileSync(logPath, 'utf8').trimEnd().split('\n');
    const records = lines.map((line) => JSON.parse(line) as { method: string; path: string; status: number });
    expect(records.map((r) => [r.method, r.status])).toEqual([
      ['GET', 400],
      ['GET', 400],
      ['GET', 400],
      ['GET', 204],
    ]);
    expect(records[0]!.path).toBe('//[');
    expect(records[1]!.path).toBe('/_archivist/v1/object/[secret]');
    expect(emulator.requestLog.records).toHaveLength(4);
  });

  it('every request of the corpus: a 4xx or a refusal by the parser, and the emulator keeps serving', async () => {
    const errors: unknown[] = [];
    const emulator = await start({ onError: (error) => errors.push(error) });
    for (const malformed of MALFORMED_REQUESTS) {
      const answer = await rawExchange(emulator.url, malformed.bytes);
      expect(acceptable(malformed, answer), `${malformed.name}: ${preview(answer.text)}`).toBe(true);
      expectStatus(await call(emulator.url, 'GET', '/api/v2/ping'), 204);
    }
    expect(errors).toEqual([]);
  });
});
