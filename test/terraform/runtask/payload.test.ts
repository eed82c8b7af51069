/**
 * The shared wire module against the documented samples: requests parse with every field optional, the
 * verification request is recognised in each documented form, results build exactly the documented callback
 * documents and read back from them, limits are checked and trimmed, and the signature matches openssl's.
 */
import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from '../../../src/terraform/runtask/hmac.js';
import {
  RESULT_LIMITS,
  acceptsOutcomes,
  callbackDocument,
  checkTaskResult,
  isVerificationRequest,
  parseRunTaskRequest,
  resultFromCallbackDocument,
  trimTaskResult,
  withoutAccessToken,
  type TaskResult,
} from '../../../src/terraform/runtask/payload.js';
import {
  COMPLETE_CALLBACK,
  GUIDE_PROJECT_FIELDS,
  MINIMAL_CALLBACK,
  POST_PLAN_REQUEST,
  PRE_PLAN_REQUEST,
  SIGNATURE_VECTOR,
  VERIFICATION_REQUEST,
  VERIFICATION_REQUEST_MINIMAL,
} from '../../runtask/documented-payloads.js';

describe('parseRunTaskRequest', () => {
  it('reads the documented post_plan sample (with the guide’s project fields) into the typed view', () => {
    const parsed = parseRunTaskRequest(JSON.stringify({ ...POST_PLAN_REQUEST, ...GUIDE_PROJECT_FIELDS }));
    expect(parsed.kind).toBe('request');
    if (parsed.kind !== 'request') return;
    expect(parsed.request).toEqual({ ...POST_PLAN_REQUEST, ...GUIDE_PROJECT_FIELDS });
    expect(parsed.ignored).toEqual([]);
    expect(acceptsOutcomes(parsed.request)).toBe(true);
    expect(isVerificationRequest(parsed.request)).toBe(false);
  });

  it('reads the captured pre_plan request: no capabilities means no outcomes', () => {
    const parsed = parseRunTaskRequest(JSON.stringify(PRE_PLAN_REQUEST));
    if (parsed.kind !== 'request') throw new Error('expected a request');
    expect(parsed.request.plan_json_api_url).toBeUndefined();
    expect(acceptsOutcomes(parsed.request)).toBe(false);
  });

  it('keeps unknown fields in raw, drops mistyped known fields from the typed view, and names them', () => {
    const parsed = parseRunTaskRequest(
      '{"payload_version":"1","run_id":7,"new_field":{"a":1},"stage":"post_plan"}',
    );
    if (parsed.kind !== 'request') throw new Error('expected a request');
    expect(parsed.request).toEqual({ stage: 'post_plan' });
    expect(parsed.ignored).toEqual(['payload_version', 'run_id']);
    expect(parsed.raw.new_field).toEqual({ a: 1 });
  });

  it('calls only non-JSON and non-objects malformed', () => {
    expect(parseRunTaskRequest('{').kind).toBe('malformed');
    expect(parseRunTaskRequest('[]').kind).toBe('malformed');
    expect(parseRunTaskRequest('{}').kind).toBe('request');
  });

  it('recognises the verification request by token, stage or enforcement level', () => {
    for (const body of [
      VERIFICATION_REQUEST,
      VERIFICATION_REQUEST_MINIMAL,
      { access_token: 'test-token' },
      { stage: 'test' },
      { task_result_enforcement_level: 'test' },
    ]) {
      const parsed = parseRunTaskRequest(JSON.stringify(body));
      if (parsed.kind !== 'request') throw new Error('expected a request');
      expect(isVerificationRequest(parsed.request), JSON.stringify(body)).toBe(true);
    }
  });

  it('gives handlers the request without its access token', () => {
    expect(withoutAccessToken({ ...POST_PLAN_REQUEST })).not.toHaveProperty('access_token');
  });
});

describe('callback documents', () => {
  const complete: TaskResult = {
    status: 'failed',
    message: COMPLETE_CALLBACK.data.attributes.message,
    url: COMPLETE_CALLBACK.data.attributes.url,
    outcomes: COMPLETE_CALLBACK.data.relationships.outcomes.data.map(({ attributes: a }) => ({
      id: a['outcome-id'],
      description: a.description,
      tags: a.tags as unknown as Record<string, Array<{ label: string }>>,
      body: a.body,
      url: a.url,
    })),
  };

  it('builds the documented minimal and complete examples exactly', () => {
    expect(callbackDocument({ ...MINIMAL_CALLBACK.data.attributes })).toEqual(MINIMAL_CALLBACK);
    expect(callbackDocument(complete)).toEqual(COMPLETE_CALLBACK);
  });

  it('reads the documented examples back without a problem', () => {
    expect(resultFromCallbackDocument(COMPLETE_CALLBACK)).toEqual({ result: complete, problems: [] });
    expect(resultFromCallbackDocument(MINIMAL_CALLBACK).problems).toEqual([]);
    expect(resultFromCallbackDocument({ data: { type: 'tasks' } }).problems[0]).toMatchObject({
      path: 'data.type',
    });
  });

  it('flags invalid values and over-the-limit values separately', () => {
    const checked = checkTaskResult({
      status: 'errored',
      message: 'x'.repeat(1001),
      outcomes: [{ id: 'a'.repeat(65), description: '', tags: { S: [{ label: 'l', level: 'fatal' }] } }],
    });
    expect(checked.result).toBeUndefined();
    expect(checked.problems.map((p) => `${p.kind} ${p.path}`)).toEqual([
      'invalid status',
      'limit message',
      'limit outcomes[0].id',
      'invalid outcomes[0].description',
      'invalid outcomes[0].tags["S"][0].level',
    ]);
  });

  it('trims to the limits and notes it; leaves a result within the limits alone', () => {
    expect(trimTaskResult(complete)).toEqual({ result: complete, notes: [] });
    const trimmed = trimTaskResult({
      status: 'failed',
      message: 'm'.repeat(1200),
      url: `https://x.example/${'p'.repeat(600)}`,
      outcomes: [{ id: 'i'.repeat(70), description: 'd', body: '😀'.repeat(10_050) }],
    });
    expect([...trimmed.result.message!].length).toBe(RESULT_LIMITS.message);
    expect(trimmed.result.message).toMatch(/\[trimmed to the run task limits: message cut.*\]$/);
    expect(trimmed.result.url).toBeUndefined();
    expect(trimmed.result.outcomes![0]!.id).toHaveLength(RESULT_LIMITS.outcomeId);
    // Code points, not UTF-16 units; no surrogate pair split.
    expect([...trimmed.result.outcomes![0]!.body!].length).toBeLessThanOrEqual(RESULT_LIMITS.body);
    expect(trimmed.result.outcomes![0]!.body).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(checkTaskResult(trimmed.result).problems).toEqual([]);
  });
});

describe('signatures', () => {
  it('matches the openssl vector: lowercase hex HMAC-SHA512 of the raw bytes', () => {
    const { key, body, signature } = SIGNATURE_VECTOR;
    expect(signBody(key, body)).toBe(signature);
    expect(verifySignature(key, Buffer.from(body), signature)).toBe(true);
    expect(verifySignature(key, Buffer.from(body), signature.toUpperCase())).toBe(false);
    expect(verifySignature(key, Buffer.from(body), undefined)).toBe(false);
    expect(verifySignature(key, Buffer.from(body), [signature])).toBe(false);
    expect(verifySignature(key, Buffer.from(`${body} `), signature)).toBe(false);
  });
});
