/**
 * Fault rules (PRODUCT.md §6 "rehearsing bad days"): a status, a connection reset or a delay on matching
 * requests; `times`, `skip`, a seeded `probability`; `after: true` for a create that took effect but whose answer
 * was lost; `emulator.faults.fired` counts; `parseFaultFile` rejects bad files naming the rule.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { parseFaultFile, type FaultRule } from '../../src/emulator/faults.js';
import { UsageError } from '../../src/errors.js';
import {
  clients,
  createProvider,
  emulatorPerTest,
  expectErrorDocument,
  expectStatus,
  loadRelease,
  providerPaths,
  versionPayload,
  type Api,
} from '../helpers/emulator/index.js';
import { arr, str } from '../helpers/json.js';

const start = emulatorPerTest();
const release = loadRelease();
const LIST = '/api/v2/organizations/*/registry-providers';

async function statuses(api: Api, path: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) out.push((await api.get(path)).status);
  return out;
}

async function withRules(faults: FaultRule[], faultSeed?: number) {
  const emulator = await start({ faults, ...(faultSeed === undefined ? {} : { faultSeed }) });
  const { owner } = clients(emulator);
  return { emulator, owner, list: providerPaths(emulator.organization, 'example').providers };
}

describe('fault rules', () => {
  it('fire the configured number of times, with a JSON:API error document, then stop', async () => {
    const { emulator, owner, list } = await withRules([{ method: 'GET', path: LIST, status: 503, times: 2 }]);
    const first = await owner.get(list);
    expectErrorDocument(first, 503);
    expect(await statuses(owner, list, 3)).toEqual([503, 200, 200]);
    expect(emulator.faults.fired).toEqual([2]);
  });

  it('skip lets the first matching requests through', async () => {
    const { emulator, owner, list } = await withRules([{ path: LIST, status: 500, skip: 2, times: 1 }]);
    expect(await statuses(owner, list, 4)).toEqual([200, 200, 500, 200]);
    expect(emulator.faults.fired).toEqual([1]);
  });

  it('match only their method and path', async () => {
    const { emulator, owner, list } = await withRules([{ method: 'POST', path: LIST, status: 500 }]);
    expect(await statuses(owner, list, 2)).toEqual([200, 200]);
    expectStatus(await owner.get(providerPaths(emulator.organization, 'nope').provider), 404);
    expect(emulator.faults.fired).toEqual([0]);
    const created = await owner.post(list, {
      data: {
        type: 'registry-providers',
        attributes: { name: 'x', namespace: emulator.organization, 'registry-name': 'private' },
      },
    });
    expectStatus(created, 500);
    expect(emulator.faults.fired).toEqual([1]);
  });

  it('"**" matches across segments, "*" within one', async () => {
    const { emulator, owner } = await withRules([
      { path: '/api/v2/organizations/*/registry-providers/private/*/*/versions', status: 502 },
      { path: '/api/registry/**', status: 504 },
    ]);
    const org = emulator.organization;
    expectStatus(await owner.get(providerPaths(org, 'example').versions), 502);
    expectStatus(await owner.get(providerPaths(org, 'example').version('1.0.0')), 404);
    expectStatus(await owner.get(`/api/registry/private/v2/gpg-keys?filter%5Bnamespace%5D=${org}`), 504);
    expect(emulator.faults.fired).toEqual([1, 1]);
  });

  it('status with retryAfter sends Retry-After', async () => {
    const { owner, list } = await withRules([{ path: LIST, status: 429, retryAfter: 3, times: 1 }]);
    const reply = await owner.get(list);
    expectErrorDocument(reply, 429);
    expect(reply.headers.get('retry-after')).toBe('3');
    expectStatus(await owner.get(list), 200);
  });

  it("status with detail answers with those words as the error's detail", async () => {
    const detail = 'line one\n::add-mask::line two';
    const { owner, list } = await withRules([{ path: LIST, status: 422, detail, times: 1 }]);
    const reply = await owner.get(list);
    expectErrorDocument(reply, 422);
    expect(reply.json).toMatchObject({ errors: [{ status: '422', detail }] });
    expect(parseFaultFile('[{"status": 422, "detail": "x"}]', 'f.json').rules).toEqual([
      { status: 422, detail: 'x' },
    ]);
  });

  it('reset: true destroys the connection (fetch rejects); the next request is answered', async () => {
    const { emulator, owner, list } = await withRules([{ path: LIST, reset: true, times: 1 }]);
    await expect(owner.get(list)).rejects.toThrow();
    expectStatus(await owner.get(list), 200);
    expect(emulator.faults.fired).toEqual([1]);
  });

  it('delayMs delays the answer, which is otherwise normal', async () => {
    const { emulator, owner, list } = await withRules([{ path: LIST, delayMs: 150, times: 1 }]);
    const t0 = performance.now();
    const reply = await owner.get(list);
    const elapsed = performance.now() - t0;
    expectStatus(reply, 200);
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(emulator.faults.fired).toEqual([1]);
  });

  it('delayMs with a status: the status arrives after the delay', async () => {
    const { owner, list } = await withRules([{ path: LIST, delayMs: 100, status: 503, times: 1 }]);
    const t0 = performance.now();
    expectStatus(await owner.get(list), 503);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90);
  });

  it('after: true with a status: the create took effect but its answer was lost; a GET finds it', async () => {
    const { emulator, owner } = await withRules([
      { method: 'POST', path: '**/versions', status: 502, after: true, times: 1 },
    ]);
    const org = emulator.organization;
    await createProvider(owner, org, release.name);
    const paths = providerPaths(org, release.name);
    const lost = await owner.post(
      paths.versions,
      versionPayload({ version: '1.2.3', 'key-id': release.keyId, protocols: ['6.0'] }),
    );
    expectErrorDocument(lost, 502);
    const found = await owner.get(paths.version('1.2.3'));
    expectStatus(found, 200);
    expect(str(found.json, 'data.attributes.version')).toBe('1.2.3');
    // Creating it again is the "already taken" case a publisher must reconcile.
    const again = await owner.post(
      paths.versions,
      versionPayload({ version: '1.2.3', 'key-id': release.keyId, protocols: ['6.0'] }),
    );
    expectErrorDocument(again, 422, { pointer: '/data/attributes/version' });
    expect(emulator.faults.fired).toEqual([1]);
  });

  it('after: true with reset: fetch rejects, yet the create took effect', async () => {
    const { emulator, owner } = await withRules([
      { method: 'POST', path: LIST, reset: true, after: true, times: 1 },
    ]);
    const org = emulator.organization;
    await expect(
      owner.post(providerPaths(org, 'x').providers, {
        data: {
          type: 'registry-providers',
          attributes: { name: 'lost', namespace: org, 'registry-name': 'private' },
        },
      }),
    ).rejects.toThrow();
    expectStatus(await owner.get(providerPaths(org, 'lost').provider), 200);
  });

  it('probability with a seed is reproducible, and fired counts the faults', async () => {
    const rule: FaultRule = { path: LIST, status: 500, probability: 0.5 };
    const runs: number[][] = [];
    for (const seed of [42, 42, 7]) {
      const { emulator, owner, list } = await withRules([rule], seed);
      const run = await statuses(owner, list, 40);
      expect(emulator.faults.fired).toEqual([run.filter((s) => s === 500).length]);
      runs.push(run);
    }
    const [a, b, c] = runs;
    expect(a).toEqual(b);
    expect(a).toContain(200);
    expect(a).toContain(500);
    expect(c).not.toEqual(a);
  });

  it('the first matching rule that fires wins; each rule counts its own', async () => {
    const { emulator, owner, list } = await withRules([
      { path: LIST, status: 503, times: 1 },
      { path: LIST, status: 500, times: 1 },
    ]);
    expect(await statuses(owner, list, 3)).toEqual([503, 500, 200]);
    expect(emulator.faults.fired).toEqual([1, 1]);
  });

  it('the request log names the rule that fired', async () => {
    const { emulator, owner, list } = await withRules([{ path: LIST, status: 503, times: 1 }]);
    await statuses(owner, list, 2);
    await emulator.close();
    const records = emulator.requestLog.records.filter((r) => r.path.endsWith('/registry-providers'));
    expect(records.map((r) => r.status)).toEqual([503, 200]);
    expect(records[0]?.fault).toMatch(/rule 1/);
    expect(records[1]?.fault).toBeUndefined();
  });

  it('rules can be added and cleared on a running emulator', async () => {
    const { emulator, owner, list } = await withRules([]);
    emulator.faults.add({ path: LIST, status: 500 });
    expectStatus(await owner.get(list), 500);
    emulator.faults.clear();
    expectStatus(await owner.get(list), 200);
    expect(arr((await owner.get(list)).json, 'data')).toEqual([]);
  });
});

describe('parseFaultFile', () => {
  const source = '/tmp/faults.json';

  function failure(text: string): UsageError {
    try {
      parseFaultFile(text, source);
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return error as UsageError;
    }
    throw new Error('parseFaultFile accepted a bad file');
  }

  it('reads a list of rules, or {seed, rules}', () => {
    expect(parseFaultFile('[{"path": "/x", "status": 500}]', source)).toEqual({
      seed: 1,
      rules: [{ path: '/x', status: 500 }],
    });
    expect(parseFaultFile('{"seed": 9, "rules": [{"reset": true, "times": 2}]}', source)).toEqual({
      seed: 9,
      rules: [{ reset: true, times: 2 }],
    });
  });

  it.each([
    ['not JSON', '[{"status": 500', /not valid JSON/],
    ['neither a list nor {rules}', '{"status": 500}', /expected an array of rules/],
    ['a non-numeric seed', '{"seed": "x", "rules": []}', /"seed" must be a number/],
  ])('rejects a file that is %s, naming the file', (_name, text, message) => {
    const error = failure(text);
    expect(error.message).toContain(source);
    expect(error.message).toMatch(message);
  });

  it.each([
    ['a rule that is not an object', '[{"status": 500}, 3]', 'rule 2', /must be an object/],
    [
      'an unknown field',
      '[{"status": 500}, {"status": 500, "statsu": 1}]',
      'rule 2',
      /unknown field "statsu"/,
    ],
    ['a rule that does nothing', '[{"path": "/x"}]', 'rule 1', /does nothing/],
    [
      'withoutKeys other than true',
      '[{"path": "/x", "withoutKeys": false}]',
      'rule 1',
      /"withoutKeys" must be true/,
    ],
    ['a status out of range', '[{"status": 99}]', 'rule 1', /"status" must be a number between 100 and 599/],
    ['a status as a string', '[{"status": "500"}]', 'rule 1', /"status"/],
    ['a probability above 1', '[{"status": 500, "probability": 2}]', 'rule 1', /"probability"/],
    ['a negative times', '[{"status": 500, "times": -1}]', 'rule 1', /"times"/],
    ['a path that is not a string', '[{"status": 500, "path": 5}]', 'rule 1', /"path" must be a string/],
    [
      'a detail that is not a string',
      '[{"status": 500, "detail": 5}]',
      'rule 1',
      /"detail" must be a string/,
    ],
    [
      'an invalid regular expression',
      '[{"status": 500}, {"status": 500}, {"status": 500, "path": "^(("}]',
      'rule 3',
      /regular expression/,
    ],
  ])('rejects %s, naming the rule', (_name, text, rule, message) => {
    const error = failure(text);
    expect(error.message).toContain(`${source}: ${rule}`);
    expect(error.message).toMatch(message);
  });
});
