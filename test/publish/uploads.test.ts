/** The upload transport and the small pieces of the executor, each on its own. */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, InterruptedError } from '../../src/errors.js';
import { runPool } from '../../src/publish/pool.js';
import { createOrAdopt } from '../../src/publish/reconcile.js';
import { LinkRefusedError, uploadFile } from '../../src/registry/uploads.js';
import { captureOutput } from '../release/helpers.js';
import { emulatorPerTest, linkOf, loadRelease, publishFixture } from '../helpers/emulator-api.js';
import { RELEASE } from './helpers.js';

const emulator = emulatorPerTest();
const fixture = loadRelease();
const retry = { limit: 2, baseDelayMs: 1, maxDelayMs: 2 };

async function uploadLinks() {
  const e = await emulator();
  const published = await publishFixture(e, { platforms: ['linux_amd64'] });
  e.requestLog.clear();
  return {
    e,
    sums: linkOf(published.version, 'shasums-upload'),
    zip: linkOf(published.platforms.get('linux_amd64'), 'provider-binary-upload'),
  };
}

describe('uploadFile', () => {
  it('streams a file as octet-stream with a Content-Length and no Authorization, reporting progress', async () => {
    const { e, zip } = await uploadLinks();
    const file = fixture.zip('linux', 'amd64');
    const { output } = captureOutput();
    const seen: number[] = [];
    await uploadFile({
      url: zip,
      filename: file.filename,
      body: { path: path.join(RELEASE, file.filename), bytes: file.bytes.length },
      output,
      retry,
      onProgress: (p) => seen.push(p.transferred),
    });
    expect(e.requestLog.records).toEqual([
      expect.objectContaining({
        method: 'PUT',
        status: 200,
        authorization: false,
        contentType: 'application/octet-stream',
        contentLength: file.bytes.length,
        bytes: file.bytes.length,
        object: 'provider-binary',
      }),
    ]);
    expect(seen.at(-1)).toBe(file.bytes.length);
    // The link is a secret from now on.
    expect(output.redact(`see ${zip}`)).toBe('see [redacted]');
  });

  it('retries resets and 5xx, then gives up naming the file, never the link', async () => {
    const { e, sums } = await uploadLinks();
    e.faults.add({ method: 'PUT', path: '/_archivist/**', reset: true, times: 1 });
    e.faults.add({ method: 'PUT', path: '/_archivist/**', status: 503, times: 1 });
    const { output } = captureOutput();
    const retries: string[] = [];
    const body = { data: fixture.sums };
    await uploadFile({
      url: sums,
      filename: 'SHA256SUMS',
      body,
      output,
      retry,
      onRetry: (_n, why) => retries.push(why),
    });
    expect(retries).toEqual(['ECONNRESET', 'status 503']);
    e.faults.add({ method: 'PUT', path: '/_archivist/**', status: 500 });
    const failure = await uploadFile({ url: sums, filename: 'SHA256SUMS', body, output, retry }).catch(
      (x: unknown) => x,
    );
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).message).toBe('Uploading SHA256SUMS failed: 500');
    expect(JSON.stringify(failure)).not.toContain('_archivist');
  });

  it('raises LinkRefusedError for a refused link, without retrying it', async () => {
    const { e, sums } = await uploadLinks();
    e.faults.add({ method: 'PUT', path: '/_archivist/**', status: 403 });
    const { output } = captureOutput();
    const failure = await uploadFile({
      url: sums,
      filename: 'SHA256SUMS',
      body: { data: fixture.sums },
      output,
      retry,
    }).catch((x: unknown) => x);
    expect(failure).toBeInstanceOf(LinkRefusedError);
    expect((failure as LinkRefusedError).status).toBe(403);
    expect(e.requestLog.records).toHaveLength(1);
  });

  it('stops at once when the signal is aborted', async () => {
    const { e, sums } = await uploadLinks();
    e.faults.add({ method: 'PUT', path: '/_archivist/**', delayMs: 2000 });
    const controller = new AbortController();
    const { output } = captureOutput();
    setTimeout(() => controller.abort('SIGINT'), 20);
    const failure = await uploadFile({
      url: sums,
      filename: 'SHA256SUMS',
      body: { data: fixture.sums },
      output,
      retry,
      signal: controller.signal,
    }).catch((x: unknown) => x);
    expect(failure).toBeInstanceOf(InterruptedError);
    expect((failure as Error).message).toBe('Interrupted while uploading SHA256SUMS');
  });
});

describe('createOrAdopt', () => {
  const lost = new ApiError('POST failed: ECONNRESET', { status: 0, details: { reason: 'ECONNRESET' } });
  const taken = new ApiError('refused', {
    status: 422,
    serverDetail: 'invalid attribute: Version has already been taken',
  });

  it('reads after a lost answer and adopts what it finds', async () => {
    const notes: string[] = [];
    let creates = 0;
    const result = await createOrAdopt({
      label: 'version 1.2.3',
      create: async () => {
        creates++;
        throw lost;
      },
      read: async () => 'found',
      retry,
      note: (n) => notes.push(n),
    });
    expect(result).toEqual({ resource: 'found', adopted: true });
    expect(creates).toBe(1);
    expect(notes).toEqual(['creating version 1.2.3: no answer (ECONNRESET); reading before creating again']);
  });

  it('creates again when the read finds nothing, and reads on 422 "already taken"', async () => {
    const answers = [lost, taken];
    let reads = 0;
    const result = await createOrAdopt({
      label: 'version 1.2.3',
      create: async () => {
        throw answers.shift();
      },
      read: async () => (++reads === 1 ? undefined : 'found'),
      retry,
      note: () => undefined,
    });
    expect(result).toEqual({ resource: 'found', adopted: true });
    expect(reads).toBe(2);
  });

  it('passes other refusals through, and gives up after the retry limit', async () => {
    const refused = new ApiError('refused', { status: 422, serverDetail: 'Version is not valid' });
    const once = createOrAdopt({
      label: 'v',
      create: () => Promise.reject(refused),
      read: async () => undefined,
      retry,
      note: () => undefined,
    });
    await expect(once).rejects.toBe(refused);
    let creates = 0;
    const always = createOrAdopt({
      label: 'v',
      create: () => (creates++, Promise.reject(lost)),
      read: async () => undefined,
      retry,
      note: () => undefined,
    });
    await expect(always).rejects.toBe(lost);
    expect(creates).toBe(retry.limit + 1);
  });
});

describe('runPool', () => {
  it('keeps at most `limit` tasks in flight and runs them all', async () => {
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    const tasks = Array.from({ length: 9 }, (_, i) => async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 2));
      running--;
      done.push(i);
    });
    await runPool(tasks, 3);
    expect(peak).toBe(3);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('starts nothing new after a failure, lets the others finish, and prefers an interruption', async () => {
    const started: number[] = [];
    const tasks = [0, 1, 2, 3].map((i) => async () => {
      started.push(i);
      if (i === 0) throw new Error('boom');
      if (i === 1) throw new InterruptedError('Interrupted');
    });
    await expect(runPool(tasks, 2)).rejects.toBeInstanceOf(InterruptedError);
    expect(started).toEqual([0, 1]);
  });
});
