/**
 * The local platform of `runtask send` against malformed requests sent as raw bytes: a target that is not a
 * URL, a bad percent-escape in the callback path or in a blob link. Each gets a 400 error document (the routes
 * never see it, so no "unexpected error"), no callback is recorded, and the platform keeps serving: the
 * integrator's real callback afterwards is taken and judged as usual.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startRunTaskPlatform, type RunTaskPlatform } from '../../../src/emulator/runtask/platform.js';
import { defaultConfigurationVersion, defaultPlanJson } from '../../../src/runtask/send/defaults.js';
import { MALFORMED_REQUESTS, acceptable, preview, rawExchange } from '../../helpers/raw-http.js';

let platform: RunTaskPlatform | undefined;
let errors: unknown[] = [];
afterEach(async () => {
  await platform?.close();
  platform = undefined;
  errors = [];
});

async function started(): Promise<{ platform: RunTaskPlatform; callback: string; token: string }> {
  platform = await startRunTaskPlatform({
    progressWindowMs: 60_000,
    maxDurationMs: 60_000,
    onError: (error) => errors.push(error),
  });
  const now = new Date();
  const task = platform.issueRun({
    stage: 'post_plan',
    enforcement: 'mandatory',
    outcomesOffered: true,
    organization: 'org',
    workspace: 'ws',
    planJson: defaultPlanJson(now),
    configurationVersion: await defaultConfigurationVersion(now),
  });
  return { platform, callback: task.issued.callbackUrl, token: task.issued.accessToken };
}

const request = (target: string, method = 'GET', headers = 'Host: 127.0.0.1\r\n'): string =>
  `${method} ${target} HTTP/1.1\r\n${headers}Content-Length: 0\r\nConnection: close\r\n\r\n`;

/** The integrator's first progress callback, as the platform must still take it. */
async function running(callback: string, token: string): Promise<number> {
  const answer = await fetch(callback, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' },
    body: JSON.stringify({ data: { type: 'task-results', attributes: { status: 'running' } } }),
  });
  await answer.arrayBuffer();
  return answer.status;
}

describe("malformed requests to runtask send's platform", () => {
  it.each([
    ['a target that is not a URL', request('//[', 'PATCH')],
    ['a bad escape in the callback path', request('/api/v2/task-results/%ZZ/callback', 'PATCH')],
    [
      'a truncated UTF-8 escape in the callback path',
      request('/api/v2/task-results/%E0%A4%A/callback', 'PATCH'),
    ],
    ['a bad escape in a blob link', request('/_archivist/v1/object/%ZZ')],
    ['a bad escape in the query', request('/api/v2/ping?x=%ZZ')],
  ])(
    '%s: 400, no unexpected error, no callback recorded, and the next callback is taken',
    async (_name, raw) => {
      const { platform: p, callback, token } = await started();
      const answer = await rawExchange(p.url, raw);
      expect(answer.status).toBe(400);
      expect(answer.text).toMatch(/"title":"bad request"/);
      expect(errors).toEqual([]);
      expect(p.events.list.filter((e) => e.kind === 'callback')).toEqual([]);
      expect(await running(callback, token)).toBe(200);
    },
  );

  it('every request of the corpus: a 4xx or a refusal by the parser, and the platform keeps serving', async () => {
    const { platform: p } = await started();
    for (const malformed of MALFORMED_REQUESTS) {
      const answer = await rawExchange(p.url, malformed.bytes);
      expect(acceptable(malformed, answer), `${malformed.name}: ${preview(answer.text)}`).toBe(true);
      const ping = await fetch(`${p.url}/api/v2/ping`);
      expect(ping.status).toBe(204);
    }
    expect(errors).toEqual([]);
  });
});
