/**
 * What the integrator refuses, and that refusing changes nothing: every wrong signature → 401 with no job,
 * no callback and no handler; malformed JSON → 400; payload_version 2 → 422; a 2 MiB body → 413. Afterwards
 * the server still serves /healthz and a good request. Uppercase hex is refused: the docs define the signature
 * as `openssl dgst` output (lowercase) and the reference integrators compare bytes against lowercase hex.
 */
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST_PLAN_REQUEST } from '../../runtask/documented-payloads.js';
import {
  KEY,
  bytesOf,
  journaledIds,
  post,
  requestFor,
  sign,
  startTestIntegrator,
  type TestIntegrator,
} from '../../runtask/helpers.js';
import { TestPlatform } from '../../runtask/platform.js';

let platform: TestPlatform;
let t: TestIntegrator;

beforeAll(async () => {
  platform = await TestPlatform.start();
  t = await startTestIntegrator(platform);
});
afterAll(async () => {
  await t.cleanup();
  await platform.close();
});

/** Each case: the body sent and the signature header (null: no header at all). */
function badSignatures(): Array<[string, string, string | null]> {
  const request = requestFor(POST_PLAN_REQUEST, platform);
  const body = bytesOf(request);
  const good = sign(body);
  const flipped = Buffer.from(body);
  flipped[40] = flipped[40]! ^ 0x01;
  return [
    ['no signature header', body, null],
    ['an empty signature header', body, ''],
    ['signed with another key', body, sign(body, 'not-the-key')],
    ['the key with a trailing newline', body, sign(body, `${KEY}\n`)],
    ['the body re-serialized (compact) after signing', JSON.stringify(request), good],
    ['a truncated signature', body, good.slice(0, 64)],
    ['a signature with one extra character', body, `${good}0`],
    ['one byte of the body changed after signing', flipped.toString('latin1'), good],
    ['HMAC-SHA256 instead of HMAC-SHA512', body, createHmac('sha256', KEY).update(body).digest('hex')],
    ['a plain SHA-512 of the body (no key)', body, createHash('sha512').update(body).digest('hex')],
    ['the right signature in uppercase hex', body, good.toUpperCase()],
    ['the right digest in base64', body, createHmac('sha512', KEY).update(body).digest('base64')],
    ['the right signature with a "sha512=" prefix', body, `sha512=${good}`],
    ['the signature of a different body', body, sign(bytesOf({ ...request, run_message: 'other' }))],
    [
      'the signature of the body without its access token',
      body,
      sign(bytesOf({ ...request, access_token: '' })),
    ],
  ];
}

describe('signatures', () => {
  it('accepts the documented signature vector (openssl dgst -sha512 -hmac)', async () => {
    const { SIGNATURE_VECTOR } = await import('../../runtask/documented-payloads.js');
    expect(sign(SIGNATURE_VECTOR.body, SIGNATURE_VECTOR.key)).toBe(SIGNATURE_VECTOR.signature);
  });

  it('answers 401 to 15 bad-signature variants and does nothing else', async () => {
    const cases = badSignatures();
    expect(cases).toHaveLength(15);
    const before = platform.requests.length;
    for (const [name, body, signature] of cases) {
      const answer = await post(t.integrator.url, body, signature);
      expect(answer.status, name).toBe(401);
      expect(JSON.parse(answer.text), name).toMatchObject({ errors: [{ status: '401' }] });
    }
    expect(platform.requests.slice(before)).toEqual([]);
    expect(t.integrator.jobs.counts()).toEqual({ queued: 0, running: 0, reporting: 0 });
    expect(t.events.filter((e) => e.event === 'job.accepted')).toEqual([]);
    expect(journaledIds(t.stateDir)).toEqual([]);
    // The log says why, but never echoes a signature or the key.
    expect(t.events.filter((e) => e.event === 'request.rejected')).toHaveLength(cases.length);
    expect(t.stderr.text).not.toContain(KEY);
  });

  it('refuses the verification request too when it is not signed (it is signed when a key is set)', async () => {
    const answer = await post(
      t.integrator.url,
      JSON.stringify({ access_token: 'test-token', stage: 'test' }),
      '',
    );
    expect(answer.status).toBe(401);
  });
});

describe('bad bodies', () => {
  it('answers 400 to malformed JSON and to JSON that is not an object', async () => {
    for (const body of ['{"payload_version": 1,', 'not json', '[1,2,3]', '"a string"', 'null']) {
      const answer = await post(t.integrator.url, body);
      expect(answer.status, body).toBe(400);
    }
  });

  it('answers 422 to payload_version 2 (and to a missing one)', async () => {
    const two = bytesOf(requestFor(POST_PLAN_REQUEST, platform, { payload_version: 2 }));
    expect((await post(t.integrator.url, two)).status).toBe(422);
    const { payload_version: _v, ...rest } = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(t.integrator.url, bytesOf(rest))).status).toBe(422);
  });

  it('answers 422 to a request without a callback URL or token (no result could ever be reported)', async () => {
    const { task_result_callback_url: _u, ...noUrl } = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(t.integrator.url, bytesOf(noUrl))).status).toBe(422);
    const { access_token: _a, ...noToken } = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(t.integrator.url, bytesOf(noToken))).status).toBe(422);
  });

  it('answers 413 to a 2 MiB body, signed or not', async () => {
    const request = requestFor(POST_PLAN_REQUEST, platform, { run_message: 'x'.repeat(2 * 1024 * 1024) });
    const body = bytesOf(request);
    expect((await post(t.integrator.url, body)).status).toBe(413);
    expect((await post(t.integrator.url, body, null)).status).toBe(413);
  });

  it('answers 404 elsewhere and 405 to other methods on the path', async () => {
    expect((await fetch(new URL('/other', t.integrator.url))).status).toBe(404);
    expect((await fetch(t.integrator.url)).status).toBe(405);
  });

  it('keeps serving afterwards: /healthz and a good request work', async () => {
    const health = await fetch(new URL('/healthz', t.integrator.url));
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    const request = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(t.integrator.url, bytesOf(request))).status).toBe(200);
    platform.release(request.run_id, { stdout: 'ok\n' });
    await platform.waitForCallbacks(request.task_result_id, 'passed');
    await t.integrator.jobs.idle();
    expect(t.events.filter((e) => e.event === 'job.accepted')).toHaveLength(1);
  });
});
