/** The upload transport and the small pieces of the executor, each on its own. */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { ApiError, InterruptedError, VerificationError } from '../../src/errors.js';
import { runUploadTasks } from '../../src/publish/pool.js';
import { createOrAdopt } from '../../src/publish/reconcile.js';
import { LinkRefusedError, uploadFile } from '../../src/registry/uploads.js';
import { HashingSession } from '../../src/release/hashing/hashing.js';
import { captureOutput } from '../release/helpers.js';
import {
  emulatorPerTest,
  linkOf,
  loadRelease,
  loggedRequest,
  onRequestStart,
  publishFixture,
} from '../helpers/emulator/index.js';
import { RELEASE, expectNoSecrets } from '../commands/publish/helpers.js';
import { tempRoot } from '../helpers/tmp.js';

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
      body: {
        path: path.join(RELEASE, file.filename),
        bytes: file.bytes.length,
        sha256: file.shasum,
        source: new HashingSession(),
      },
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
    // The whole file once, last, whether the host's answer or the request's last write callback came first; never
    // a count that goes back or repeats.
    expect(seen.at(-1)).toBe(file.bytes.length);
    expect(seen.filter((n) => n === file.bytes.length)).toHaveLength(1);
    expect(seen.every((n, i) => i === 0 || n > seen[i - 1]!)).toBe(true);
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

/** A copy of the fixture's linux_amd64 zip to change, with the digest it was verified with. */
function verifiedCopy(bytes: Buffer = fixture.zip('linux', 'amd64').bytes) {
  const file = path.join(tempRoot(), 'terraform-provider-example_1.2.3_linux_amd64.zip');
  fs.writeFileSync(file, bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { file, body: { path: file, bytes: bytes.length, sha256 } };
}

/** The linux_amd64 zip's stored object: uploaded or not, and the PUTs that carried it (by status and bytes). */
function zipObject(e: Emulator) {
  const platform = e.store.data.platforms.find((p) => p.os === 'linux' && p.arch === 'amd64')!;
  const puts = e.requestLog.records.filter((r) => r.method === 'PUT' && r.owner === platform.id);
  return {
    key: platform.binary.key,
    uploaded: platform.binary.uploadedAt !== null,
    completed: puts.filter((r) => r.status === 200),
    puts,
  };
}

/** The same bytes with every byte of `from`..`to` changed (same size). */
function flipped(bytes: Buffer, from = 0, to = bytes.length): Buffer {
  const out = Buffer.from(bytes);
  for (let i = from; i < to; i++) out[i] = out[i]! ^ 0xff;
  return out;
}

describe('uploadFile of a file that changed since it was verified', () => {
  const FILE = 'terraform-provider-example_1.2.3_linux_amd64.zip';
  const CHANGED = `${FILE} changed since it was verified`;

  async function attempt(e: Emulator, zip: string, body: { path: string; bytes: number; sha256: string }) {
    const { output, stdout, stderr } = captureOutput({ verbose: true });
    const retries: string[] = [];
    const failure = await uploadFile({
      url: zip,
      filename: FILE,
      body: { ...body, source: new HashingSession() },
      output,
      retry,
      timeoutMs: 1000,
      onRetry: (_n, why) => retries.push(why),
    }).catch((x: unknown) => x);
    expectNoSecrets(stdout() + stderr(), e, 'the upload output');
    return { failure, retries, object: zipObject(e) };
  }

  function expectChanged(failure: unknown, how: RegExp): VerificationError {
    expect(failure).toBeInstanceOf(VerificationError);
    const error = failure as VerificationError;
    expect(error.message).toContain(CHANGED);
    expect(error.message).toMatch(how);
    expect(error.details).toMatchObject({ file: FILE });
    expect(error.hint).toMatch(/run the same command again/);
    expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain('_archivist');
    return error;
  }

  it('refuses a file rewritten with the same size: exit 3 naming it, no retry, nothing stored', async () => {
    const { e, zip } = await uploadLinks();
    const { file, body } = verifiedCopy();
    fs.writeFileSync(file, flipped(fixture.zip('linux', 'amd64').bytes, 100, 110));
    const { failure, retries, object } = await attempt(e, zip, body);
    expectChanged(failure, /it now hashes to [0-9a-f]{64}, not [0-9a-f]{64}/);
    expect(retries).toEqual([]);
    expect(object.completed).toEqual([]);
    expect(object.uploaded).toBe(false);
  });

  it('fails at once when the file shrank, instead of stalling until the transfer times out', async () => {
    const { e, zip } = await uploadLinks();
    const { file, body } = verifiedCopy();
    fs.truncateSync(file, body.bytes - 1);
    const { failure, retries, object } = await attempt(e, zip, body);
    expectChanged(failure, new RegExp(`it now has ${body.bytes - 1} bytes, not ${body.bytes}`));
    expect(retries).toEqual([]);
    expect(object.completed).toEqual([]);
    expect(object.uploaded).toBe(false);
  });

  it('fails at once when the file grew, even by bytes appended to the verified ones', async () => {
    const { e, zip } = await uploadLinks();
    const { file, body } = verifiedCopy();
    fs.appendFileSync(file, 'more');
    const { failure, retries, object } = await attempt(e, zip, body);
    expectChanged(failure, new RegExp(`it now has more than ${body.bytes} bytes`));
    expect(retries).toEqual([]);
    expect(object.completed).toEqual([]);
    expect(object.uploaded).toBe(false);
  });

  it('names a file that is gone as changed, and does not blame the network', async () => {
    const { e, zip } = await uploadLinks();
    const { file, body } = verifiedCopy();
    fs.rmSync(file);
    const { failure, retries } = await attempt(e, zip, body);
    expectChanged(failure, /it cannot be read any more \(ENOENT\)/);
    expect(retries).toEqual([]);
    expect(zipObject(e).puts.filter((r) => r.status === 200)).toEqual([]);
  });

  it('never lets the host receive the complete body of a file rewritten while it streams', async () => {
    const { e, zip } = await uploadLinks();
    // Larger than everything that can be in flight before the host sees the request (socket buffers), so
    // the client has not read the end of the file when the test rewrites it.
    const size = 32 * 1024 * 1024;
    const { file, body } = verifiedCopy(randomBytes(size));
    const key = zipObject(e).key;
    onRequestStart(e, (request) => {
      if (request.method !== 'PUT' || request.objectKey !== key) return;
      const fd = fs.openSync(file, 'r+');
      fs.writeSync(fd, randomBytes(1024 * 1024), 0, 1024 * 1024, size - 1024 * 1024);
      fs.closeSync(fd);
    });
    const { failure, retries } = await attempt(e, zip, body);
    expectChanged(failure, /it now hashes to/);
    expect(retries).toEqual([]);
    // The host saw the request begin and end without its last bytes (logged when the connection closed).
    const put = await loggedRequest(e, (r) => r.method === 'PUT');
    expect(put).toMatchObject({ object: 'provider-binary', contentLength: size });
    expect(put.status).not.toBe(200);
    expect(put.bytes).toBeLessThan(size);
    const object = zipObject(e);
    expect(object.puts).toHaveLength(1);
    expect(object.uploaded).toBe(false);
    expect(fs.existsSync(e.store.objectPath(key))).toBe(false);
  });

  it('reads and hashes the file again on every attempt: a change between two attempts is caught, and final', async () => {
    const { e, zip } = await uploadLinks();
    const { file, body } = verifiedCopy();
    const key = zipObject(e).key;
    let first = true;
    onRequestStart(e, (request) => {
      if (request.method !== 'PUT' || request.objectKey !== key || !first) return;
      first = false;
      // The first attempt is answered 503 whatever it sent; the file changes before the retry reads it.
      fs.writeFileSync(file, flipped(fixture.zip('linux', 'amd64').bytes, 0, 1));
      return { status: 503 };
    });
    const { failure, retries, object } = await attempt(e, zip, body);
    expectChanged(failure, /it now hashes to/);
    expect(retries).toEqual(['status 503']);
    expect(object.completed).toEqual([]);
    expect(object.uploaded).toBe(false);
  });

  it('uploads the verified bytes when the file was changed and changed back before its upload', async () => {
    const { e, zip } = await uploadLinks();
    const original = fixture.zip('linux', 'amd64').bytes;
    const { file, body } = verifiedCopy();
    fs.writeFileSync(file, flipped(original));
    fs.writeFileSync(file, original);
    const { failure, object } = await attempt(e, zip, body);
    expect(failure).toBeUndefined();
    expect(object.completed).toHaveLength(1);
    expect(fs.readFileSync(e.store.objectPath(object.key)).equals(original)).toBe(true);
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
        throw answers.shift() ?? new Error('no answer left');
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

describe('runUploadTasks', () => {
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
    await runUploadTasks(tasks, 3);
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
    await expect(runUploadTasks(tasks, 2)).rejects.toBeInstanceOf(InterruptedError);
    expect(started).toEqual([0, 1]);
  });
});
