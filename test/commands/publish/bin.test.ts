/**
 * End to end: the built `bin/provider.cjs publish`, spawned as a user runs it, against an emulator in this
 * process (so the child is spawned asynchronously: a synchronous spawn would starve the emulator).
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import {
  addGpgKey,
  clients,
  emulatorPerTest,
  keyIdOf,
  onRequestStart,
} from '../../helpers/emulator/index.js';
import type { FaultRule } from '../../../src/emulator/faults.js';
import type { CliResult } from '../../helpers/result.js';
import { FAST, FULL_PUBLISH, expectComplete, expectNoSecrets, writeRequests, writes } from './helpers.js';
import { tempRoot } from '../../helpers/tmp.js';
import { copyRelease } from '../../release/helpers.js';

const BIN = path.join(REPO_ROOT, 'bin', 'provider.cjs');
const emulator = emulatorPerTest();

/** Spawns `node bin/provider.cjs publish fixtures/release --key … --hostname … --organization …` plus `extra`. */
function provider(
  e: Emulator,
  extra: string[] = [],
  nodeArgs: string[] = [],
  release = 'fixtures/release',
  env: Record<string, string> = {},
  key: 'flag' | 'registry' = 'flag',
): { child: ReturnType<typeof spawn>; done: Promise<CliResult> } {
  const home = tempRoot();
  const args = [
    'publish',
    release,
    ...(key === 'flag' ? ['--key', 'fixtures/keys/signer.pub.asc'] : []),
    '--hostname',
    e.url,
    '--organization',
    e.organization,
    ...extra,
  ];
  const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: home, TFE_TOKEN: e.ownerToken, ...FAST, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => {
      expectNoSecrets(stdout + stderr, e, 'the output of bin/provider.cjs');
      resolve({ exitCode: code, signal, stdout, stderr });
    }),
  );
  return { child, done };
}

describe('provider publish (built bin)', () => {
  beforeAll(() => {
    if (!fs.existsSync(path.join(REPO_ROOT, 'dist/bundle/provider.js'))) {
      spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'ignore' });
    }
  }, 120_000);

  it('publishes the fixture release and prints the summary', async () => {
    const e = await emulator();
    const result = await provider(e).done;
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(`key        ${keyIdOf('signer')}: registered`);
    expect(result.stdout).toMatch(
      /linux_amd64 +terraform-provider-example_1\.2\.3_linux_amd64\.zip +2\.2 KiB +bd7aeba4436e +created, uploaded/,
    );
    expect(result.stdout).toMatch(
      /✓ example 1\.2\.3 published: 5 platforms \(5 created, 5 uploaded\) in .*; consumer check passed/,
    );
    expect(writes(e)).toEqual(FULL_PUBLISH);
    expectComplete(e);
    expectNoSecrets(result.stdout + result.stderr, e, 'output');
  });

  it('prints exactly one JSON document with --json, and writes nothing the second time', async () => {
    const e = await emulator();
    expect((await provider(e).done).exitCode).toBe(0);
    e.requestLog.clear();
    const result = await provider(e, ['--json']).done;
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      ok: true,
      dryRun: false,
      version: { version: '1.2.3', created: false },
    });
    expect(writeRequests(e)).toEqual([]);
  });

  it('makes no Intl formatter or collator and calls no localeCompare but got’s two list formats (ICU data is memory for nothing)', async () => {
    // Each of them pages in its part of ICU's data on first use, several MB of resident memory each (bench/).
    // got's argument checks (@sindresorhus/is) make two Intl.ListFormats as they load: a dependency's code, which
    // the build no longer rewrites (docs/node.md). Nothing else may.
    const trap = path.join(tempRoot('trap'), 'trap.cjs');
    fs.writeFileSync(
      trap,
      [
        'const seen = (what) => process.stderr.write(`ICU USED: ${what}\\n${new Error().stack}\\n`);',
        "for (const name of ['Collator', 'DateTimeFormat', 'DisplayNames', 'ListFormat', 'NumberFormat', 'PluralRules', 'RelativeTimeFormat', 'Segmenter']) {",
        '  const real = Intl[name];',
        '  Intl[name] = new Proxy(real, {',
        '    construct: (target, args, newTarget) => (seen(`Intl.${name}`), Reflect.construct(target, args, newTarget)),',
        '    apply: (target, self, args) => (seen(`Intl.${name}`), Reflect.apply(target, self, args)),',
        '  });',
        '}',
        "for (const [proto, name] of [[String.prototype, 'localeCompare'], [Number.prototype, 'toLocaleString'], [Date.prototype, 'toLocaleString'], [Date.prototype, 'toLocaleDateString'], [Date.prototype, 'toLocaleTimeString']]) {",
        '  const real = proto[name];',
        '  proto[name] = function (...args) { seen(name); return real.apply(this, args); };',
        '}',
      ].join('\n'),
    );
    const e = await emulator();
    const result = await provider(e, [], ['--require', trap]).done;
    expect(result.exitCode, result.stderr).toBe(0);
    const used = [...result.stderr.matchAll(/^ICU USED: (.*)$/gm)].map((m) => m[1]);
    expect(used.filter((what) => what !== 'Intl.ListFormat')).toEqual([]);
    expect(used.length).toBeLessThanOrEqual(2);
    expectComplete(e);
  });

  // publish reads the registry's side of the release while its files are hashed (reads only). A release that
  // then fails verification must end as before: its own error and exit code, nothing written, and no read left
  // running to hold the process open. To be sure the reads are under way when the verification fails, these
  // runs take the signing key from the registry, and its lookup — part of the verification — is held 2 s: the
  // reads go first (tens of milliseconds on loopback), and each test checks that they did. They run with
  // --verify-first, where every zip is hashed during the verification (by default a zip is hashed by the read
  // that uploads it: test/commands/publish/streamed.test.ts).
  describe('a release that fails verification while the registry is read', () => {
    /** A copy of the fixture release with one zip's byte flipped: SHA256SUMS and its signature still verify. */
    function tampered(): string {
      const dist = copyRelease();
      const zip = path.join(dist, 'terraform-provider-example_1.2.3_linux_amd64.zip');
      const bytes = fs.readFileSync(zip);
      bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
      fs.writeFileSync(zip, bytes);
      return dist;
    }
    const HOLD_KEY_LOOKUP: FaultRule = { method: 'GET', path: '/api/registry/**', delayMs: 2000 };
    /** The GETs the emulator received whose path starts with `prefix`, in order. */
    function seen(e: Emulator, prefix: string): () => string[] {
      const paths: string[] = [];
      onRequestStart(e, ({ method, path: at }) => {
        if (method === 'GET' && at.startsWith(prefix)) paths.push(at);
      });
      return () => paths;
    }
    // Requests wait up to 10 minutes here (the small files' downloads up to their own 60 s), past this test's
    // own limit: only dropping the reads ends the run in time.
    const PATIENT = { PROVIDER_HTTP_TIMEOUT: '10m' };

    it('a registry that does not answer its reads: the hash error, exit 3, nothing written, the process ends', async () => {
      const e = await emulator({
        faults: [HOLD_KEY_LOOKUP, { method: 'GET', path: '/api/v2/**', delayMs: 600_000 }],
      });
      await addGpgKey(clients(e).owner, e.organization, 'signer');
      e.requestLog.clear();
      const reads = seen(e, '/api/v2/');
      const result = await provider(e, ['--verify-first'], [], tampered(), PATIENT, 'registry').done;
      expect(result.exitCode, result.stderr).toBe(3);
      expect(result.stderr).toMatch(/terraform-provider-example_1\.2\.3_linux_amd64\.zip/);
      expect(result.stderr).toMatch(/SHA-?256/i);
      expect(reads(), 'the provider read was sent during the verification').not.toEqual([]);
      expect(writeRequests(e)).toEqual([]);
    }, 30_000);

    it('a version already published whose small files download slowly: the same, the downloads dropped too', async () => {
      const e = await emulator();
      expect((await provider(e).done).exitCode).toBe(0);
      e.requestLog.clear();
      e.faults.add(HOLD_KEY_LOOKUP);
      e.faults.add({ method: 'GET', path: '/_archivist/**', delayMs: 600_000 });
      const downloads = seen(e, '/_archivist/');
      const result = await provider(e, ['--verify-first'], [], tampered(), PATIENT, 'registry').done;
      expect(result.exitCode, result.stderr).toBe(3);
      expect(result.stderr).toMatch(/terraform-provider-example_1\.2\.3_linux_amd64\.zip/);
      expect(downloads(), 'a small file was being downloaded during the verification').not.toEqual([]);
      expect(writeRequests(e)).toEqual([]);
    }, 30_000);

    it('a registry that refuses its reads (403): the hash error is the one reported, exit 3, nothing written', async () => {
      const e = await emulator({
        faults: [HOLD_KEY_LOOKUP, { method: 'GET', path: '/api/v2/**', status: 403 }],
      });
      await addGpgKey(clients(e).owner, e.organization, 'signer');
      e.requestLog.clear();
      // Patient, as above: the held key lookup must not time out (FAST's 2 s) before a loaded machine hashes.
      const result = await provider(e, ['--verify-first'], [], tampered(), PATIENT, 'registry').done;
      expect(result.exitCode, result.stderr).toBe(3);
      expect(result.stderr).toMatch(/terraform-provider-example_1\.2\.3_linux_amd64\.zip/);
      // The error, not the progress lines before it, must not speak of the refusal; those name the emulator's
      // host, whose random port may hold "403", and folders, whose names are not the product's words.
      const error = result.stderr.slice(result.stderr.indexOf('error:'));
      expect(error).toMatch(/^error: /);
      expect(error).not.toMatch(/\b403\b|forbidden|permission/i);
      const refused = e.requestLog.records.filter((r) => r.method === 'GET' && r.status === 403);
      expect(refused, 'a read was refused during the verification').not.toEqual([]);
      expect(writeRequests(e)).toEqual([]);
    });

    it('the same refusal for a release that verifies: reported after the verification (exit 4), nothing written', async () => {
      const e = await emulator({ faults: [{ method: 'GET', status: 403 }] });
      const result = await provider(e).done;
      expect(result.exitCode, result.stderr).toBe(4);
      expect(result.stderr.indexOf('Checking the signature')).toBeGreaterThanOrEqual(0);
      expect(result.stderr.indexOf('Checking the signature')).toBeLessThan(result.stderr.indexOf('error:'));
      expect(writeRequests(e)).toEqual([]);
    });
  });

  it('exits 130 on SIGINT during uploads, and the next run completes', async () => {
    const e = await emulator({ faults: [{ method: 'PUT', path: '/_archivist/**', delayMs: 5000 }] });
    const { child, done } = provider(e);
    await vi.waitFor(() => expect(e.faults.fired[0]).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });
    child.kill('SIGINT');
    const result = await done;
    expect(result.exitCode).toBe(130);
    expect(result.stderr).toContain('error: Interrupted');
    expect(result.stderr).toContain('Run the same command again to finish');
    e.faults.clear();
    const again = await provider(e).done;
    expect(again.exitCode, again.stderr).toBe(0);
    expectComplete(e);
    expect(e.store.data.platforms).toHaveLength(5);
  });
});
