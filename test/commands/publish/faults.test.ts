/**
 * Bad days: a fault on each step in turn (500, 503, 429 with Retry-After, a reset connection, an answer too
 * slow for the client's timeout, a lost answer on a create, a refused upload link) and the same command
 * still completes — without duplicating anything.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/emulator/server.js';
import { globToRegExp, type FaultRule } from '../../../src/emulator/faults.js';
import { emulatorPerTest } from '../../helpers/emulator/index.js';
import { FULL_PUBLISH, expectComplete, expectNoSecrets, publish, writes } from './helpers.js';

const emulator = emulatorPerTest();

const STEPS: Record<string, Pick<FaultRule, 'method' | 'path'>> = {
  'read the provider': {
    method: 'GET',
    path: '/api/v2/organizations/*/registry-providers/private/*/example',
  },
  'read the key': { method: 'GET', path: '/api/registry/private/v2/gpg-keys/**' },
  'create the provider': { method: 'POST', path: '/api/v2/organizations/*/registry-providers' },
  'register the key': { method: 'POST', path: '/api/registry/private/v2/gpg-keys' },
  'create the version': { method: 'POST', path: '/api/v2/**/versions' },
  'read the version': { method: 'GET', path: '/api/v2/**/versions/1.2.3' },
  'create a platform': { method: 'POST', path: '/api/v2/**/platforms' },
  'list the platforms': { method: 'GET', path: '/api/v2/**/platforms' },
  'upload a file': { method: 'PUT', path: '/_archivist/**' },
};
const CREATES = ['create the provider', 'register the key', 'create the version', 'create a platform'];
/** How `writes()` names each create. */
const NAMES: Record<string, string> = {
  'create the provider': 'create provider',
  'register the key': 'register key',
  'create the version': 'create version',
  'create a platform': 'create platform',
};

function matches(glob: string, path: string): boolean {
  return globToRegExp(glob).test(path);
}

const KINDS: Record<string, FaultRule> = {
  '500': { status: 500, times: 1 },
  '503 twice': { status: 503, times: 2 },
  '429 with Retry-After': { status: 429, retryAfter: 0, times: 1 },
  'a reset connection': { reset: true, times: 1 },
  'an answer past the timeout': { delayMs: 2500, times: 1 },
};

/** Nothing stored twice: one provider, one key, one version, five platforms. */
function expectNoDuplicates(e: Emulator): void {
  const { providers, gpgKeys, versions, platforms } = e.store.data;
  expect([providers.length, gpgKeys.length, versions.length, platforms.length]).toEqual([1, 1, 1, 5]);
}

// The fault matrix runs its tests concurrently, so its emulators are closed when the file is done.
const started: Emulator[] = [];
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
});

async function publishThrough(rule: FaultRule): Promise<Emulator> {
  const e = await startEmulator({ faults: [rule] });
  started.push(e);
  // A short client timeout only where the fault is a slow answer: elsewhere it could fire by itself. Even
  // there it is 1 s, not less: every request of the publish has it, and the file's publishes run five at once
  // beside other files, so a busy machine answers slower than 100 ms (two tests failed that way).
  const env: Record<string, string> = rule.delayMs === undefined ? {} : { PROVIDER_HTTP_TIMEOUT: '1s' };
  const result = await publish(e, [], { env });
  expect(result.exitCode, result.stderr).toBe(0);
  expect(e.faults.fired[0], 'the fault fired').toBeGreaterThan(0);
  if (rule.delayMs !== undefined) {
    // A slow answer is one the client gave up on: the request log has it closed without an answer (status 0).
    const slowed = e.requestLog.records.filter((r) => r.fault !== undefined);
    expect(
      slowed.map((r) => r.status),
      'the slowed request was given up on',
    ).toContain(0);
  }
  expectComplete(e);
  expectNoDuplicates(e);
  expectNoSecrets(result.stdout + result.stderr, e, 'output');
  return e;
}

describe.concurrent('provider publish through a fault on each step', () => {
  for (const [step, where] of Object.entries(STEPS)) {
    it.each(Object.entries(KINDS))(`completes when "${step}" meets %s`, async (_kind, fault) => {
      await publishThrough({ ...where, ...fault });
    });
  }

  for (const step of CREATES) {
    it.each([
      ['status 500', { status: 500 }],
      ['a reset', { reset: true }],
    ] as const)(
      `reconciles a lost answer (%s) to "${step}" by reading, without creating twice`,
      async (_kind, fault) => {
        const e = await publishThrough({ ...STEPS[step], ...fault, after: true, times: 1 });
        // The lost create took effect, the read found it, so it was never sent again.
        const posts = e.requestLog.records.filter(
          (r) => r.method === 'POST' && matches(STEPS[step]!.path!, r.path),
        );
        expect(posts).toHaveLength(step === 'create a platform' ? 5 : 1);
        const lost = FULL_PUBLISH.indexOf(NAMES[step]!);
        expect(writes(e)).toEqual(FULL_PUBLISH.filter((_, i) => i !== lost));
      },
    );
  }
});

describe('provider publish through other faults', () => {
  it('reads and continues on 422 "already taken" (the read after a lost answer missed it)', async () => {
    const f = await emulator({
      faults: [
        { ...STEPS['create the version'], status: 500, after: true, times: 1 },
        // The read that reconciles the lost answer is made to miss the version.
        { ...STEPS['read the version'], status: 404, times: 1 },
      ],
    });
    const result = await publish(f);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(
      f.requestLog.records
        .filter((r) => r.method === 'POST' && r.path.endsWith('/versions'))
        .map((r) => r.status),
    ).toEqual([500, 422]);
    expect(result.stderr).toContain('version 1.2.3 already exists (422 "already taken"); reading it');
    expectComplete(f);
    expectNoDuplicates(f);
  });

  it.each([401, 403, 404])(
    're-fetches an upload link that answers %s by reading the resource again',
    async (status) => {
      const e = await publishThrough({ method: 'PUT', path: '/_archivist/**', status, times: 1 });
      const log = e.requestLog.records.map(
        (r) =>
          `${r.method} ${r.path.startsWith('/_archivist/') ? 'archivist' : r.path.split('/').slice(-2).join('/')} ${r.status}`,
      );
      const refused = log.indexOf(`PUT archivist ${status}`);
      expect(refused).toBeGreaterThanOrEqual(0);
      expect(log.slice(refused + 1).some((line) => line.startsWith('GET '))).toBe(true);
      expect(writes(e).filter((w) => w.startsWith('upload'))).toHaveLength(7);
    },
  );

  it('honours Retry-After on uploads (reads honour it in the HTTP layer)', async () => {
    const e = await publishThrough({
      method: 'PUT',
      path: '/_archivist/**',
      status: 429,
      retryAfter: 1,
      times: 1,
    });
    const log = e.requestLog.records;
    const limited = log.findIndex((r) => r.method === 'PUT' && r.status === 429);
    const retried = log.slice(limited + 1).filter((r) => r.method === 'PUT');
    // The refused file went again no sooner than a second later (others kept going meanwhile).
    const late = retried.filter((r) => Date.parse(r.time) - Date.parse(log[limited]!.time) >= 950);
    expect(late.length).toBeGreaterThanOrEqual(1);
    expect(writes(e).filter((w) => w.startsWith('upload'))).toHaveLength(7);
  });

  // Found by test/reliability (seed 50087): a download link that kept answering 429 in the consumer check was
  // reported as "terraform init would refuse" (exit 3) with a hint to delete the version that was just published.
  it.each([429, 503])(
    'exits 4, not 3, when a download link keeps answering %s in the consumer check; a re-run completes',
    async (status) => {
      const e = await emulator({ faults: [{ method: 'GET', path: '/_archivist/**', status }] });
      const failed = await publish(e);
      expect(failed.exitCode, failed.stderr).toBe(4);
      expect(failed.stderr).toMatch(
        /error: Downloading SHA256SUMS(\.sig)? of example-org\/example 1\.2\.3 failed: /,
      );
      expect(failed.stderr).not.toContain('provider delete');
      e.faults.clear();
      const again = await publish(e);
      expect(again.exitCode, again.stderr).toBe(0);
      expectComplete(e);
    },
  );

  it('gives up on an upload that keeps failing, naming the file (never the link), and a re-run completes', async () => {
    const e = await emulator({ faults: [{ method: 'PUT', path: '/_archivist/**', status: 502 }] });
    const failed = await publish(e, ['--concurrency', '1']);
    expect(failed.exitCode).toBe(4);
    expect(failed.stderr).toMatch(/error: Uploading terraform-provider-example_1\.2\.3_\S+ failed: 502/);
    expect(failed.stderr).toContain('run the same command again later to resume');
    expectNoSecrets(failed.stdout + failed.stderr, e, 'output');
    e.faults.clear();
    const again = await publish(e);
    expect(again.exitCode, again.stderr).toBe(0);
    expectComplete(e);
    expectNoDuplicates(e);
  });
});
