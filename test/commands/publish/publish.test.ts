/** `provider publish` against the in-process emulator: a first publish, a re-run, JSON, subkeys, dry runs. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/paths.js';
import { emulatorPerTest, keyIdOf, loadRelease } from '../../helpers/emulator/index.js';
import {
  ANSI,
  FULL_PUBLISH,
  RELEASE,
  expectComplete,
  jsonOf,
  publish,
  publishArgs,
  storedPlatforms,
  writeRequests,
  writes,
} from './helpers.js';
import { tempRoot } from '../../helpers/tmp.js';
import { createHash } from 'node:crypto';
import { FIXTURE_H1, copyRelease, makeZip, replaceListed } from '../../release/helpers.js';
import { runCli } from '../../helpers/cli.js';

const emulator = emulatorPerTest();
const fixture = loadRelease();
const KEY = keyIdOf('signer');

describe('provider publish', () => {
  it('creates the provider, key, version and platforms, uploads every file, waits, checks and summarises', async () => {
    const e = await emulator();
    const result = await publish(e);
    expect(result.stderr).not.toContain('error');
    expect(result.exitCode).toBe(0);
    const host = new URL(e.url).host;
    const stdout = result.stdout
      .replaceAll(host, '<host>')
      .replaceAll(KEY, '<KEY>')
      .replace(/in \d+(\.\d)?m?s/, 'in <t>');
    expect(stdout).toBe(
      [
        'provider   example-org/example on <host>: created',
        'key        <KEY>: registered',
        'version    1.2.3 (key <KEY>, protocols 6.0): created',
        'checksums  terraform-provider-example_1.2.3_SHA256SUMS: uploaded',
        'signature  terraform-provider-example_1.2.3_SHA256SUMS.sig: uploaded',
        '',
        'PLATFORM       FILE                                                   SIZE  SHA256        RESULT',
        'darwin_amd64   terraform-provider-example_1.2.3_darwin_amd64.zip   2.2 KiB  6546e445d34f  created, uploaded',
        'darwin_arm64   terraform-provider-example_1.2.3_darwin_arm64.zip   2.2 KiB  f76b591723b0  created, uploaded',
        'linux_amd64    terraform-provider-example_1.2.3_linux_amd64.zip    2.2 KiB  bd7aeba4436e  created, uploaded',
        'linux_arm64    terraform-provider-example_1.2.3_linux_arm64.zip    2.2 KiB  26693bd82fa2  created, uploaded',
        'windows_amd64  terraform-provider-example_1.2.3_windows_amd64.zip  2.2 KiB  24c86909e1e1  created, uploaded',
        '',
        '✓ example 1.2.3 published: 5 platforms (5 created, 5 uploaded) in <t>; consumer check passed',
        '',
      ].join('\n'),
    );
    // Plain progress lines (not a TTY): one per event, no ANSI codes.
    expect(result.stderr).not.toMatch(ANSI);
    for (const line of [
      'Created version 1.2.3',
      'Uploaded 7 files',
      'The registry reports every file uploaded',
    ]) {
      expect(result.stderr).toContain(line);
    }
    expect(writes(e)).toEqual(FULL_PUBLISH);
    expectComplete(e);

    const records = e.requestLog.records;
    for (const r of records.filter((x) => x.path.startsWith('/api/'))) {
      expect(r.authorization, `${r.method} ${r.path} carries the token`).toBe(true);
      if (r.method === 'POST') expect(r.contentType).toBe('application/vnd.api+json');
    }
    const uploads = records.filter((r) => r.method === 'PUT');
    expect(uploads).toHaveLength(7);
    for (const r of uploads) {
      expect(r).toMatchObject({ path: '/_archivist/v1/object/[secret]', status: 200, authorization: false });
      expect(r.contentType).toBe('application/octet-stream');
      expect(r.contentLength).toBe(r.bytes);
    }
    expect(uploads.filter((r) => r.object === 'shasums')[0]?.contentLength).toBe(fixture.sums.length);
    expect(uploads.filter((r) => r.object === 'shasums-sig')[0]?.contentLength).toBe(fixture.sig.length);

    // Each platform's filename is its name in SHA256SUMS, its shasum the hash there.
    expect(storedPlatforms(e)).toEqual(
      fixture.zips
        .map((z) => ({ name: `${z.os}_${z.arch}`, filename: z.filename, shasum: z.shasum, uploaded: true }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(e.store.data.versions[0]).toMatchObject({ version: '1.2.3', keyId: KEY, protocols: ['6.0'] });
    expect(e.store.data.gpgKeys.map((k) => k.keyId)).toEqual([KEY]);
    expect(e.store.data.providers.map((p) => [p.namespace, p.name, p.registryName])).toEqual([
      ['example-org', 'example', 'private'],
    ]);
  });

  it('prints the documented JSON document with --json, and nothing else on stdout', async () => {
    const e = await emulator();
    const result = await publish(e, ['--json']);
    expect(result.exitCode).toBe(0);
    const doc = jsonOf(result);
    expect(doc.durationMs).toEqual(expect.any(Number));
    expect({ ...doc, durationMs: 0 }).toEqual({
      ok: true,
      dryRun: false,
      provider: {
        hostname: new URL(e.url).host,
        organization: 'example-org',
        namespace: 'example-org',
        name: 'example',
        action: 'create',
        created: true,
      },
      key: { keyId: KEY, action: 'create', registered: true },
      version: { version: '1.2.3', keyId: KEY, protocols: ['6.0'], action: 'create', created: true },
      files: [
        {
          kind: 'shasums',
          filename: 'terraform-provider-example_1.2.3_SHA256SUMS',
          bytes: fixture.sums.length,
          action: 'upload',
          uploaded: true,
        },
        {
          kind: 'signature',
          filename: 'terraform-provider-example_1.2.3_SHA256SUMS.sig',
          bytes: fixture.sig.length,
          action: 'upload',
          uploaded: true,
        },
      ],
      platforms: fixture.zips.map((z) => ({
        os: z.os,
        arch: z.arch,
        filename: z.filename,
        shasum: z.shasum,
        bytes: z.bytes.length,
        hashes: [FIXTURE_H1[`${z.os}_${z.arch}` as keyof typeof FIXTURE_H1], `zh:${z.shasum}`],
        action: 'create',
        created: true,
        uploaded: true,
      })),
      extraPlatforms: [],
      conflicts: [],
      // No --tag: the version's tags are left as they are, and not read.
      tags: null,
      // The lock entry `provider lock` writes: every platform's h1:, a zh: for every line of SHA256SUMS.
      lock: {
        address: `${new URL(e.url).host}/example-org/example`,
        version: '1.2.3',
        hashes: [
          ...Object.values(FIXTURE_H1),
          ...fixture.sums
            .toString('utf8')
            .trim()
            .split('\n')
            .map((line) => `zh:${line.split(/\s+/)[0]!}`),
        ].sort(),
      },
      waited: true,
      check: { status: 'passed', keyId: KEY, signingKeyId: KEY, platforms: 5 },
      durationMs: 0,
    });
    // No spinners or progress lines with --json; verification's own lines are chatter on stderr.
    expect(result.stderr).not.toContain('Uploaded');
  });

  it("reports the h1: of a stored zip, whose entries' SHA-256 is left out of the verification (dry run and publish)", async () => {
    const e = await emulator();
    const dir = copyRelease();
    const filename = 'terraform-provider-example_1.2.3_linux_amd64.zip';
    const members = [
      { name: 'terraform-provider-example_v1.2.3', data: Buffer.from('a stored executable\n'.repeat(5000)) },
      { name: 'LICENSE', data: Buffer.from('MPL-2.0\n') },
    ];
    // The executable is over 64 KiB, so its SHA-256 is left for later (a smaller one is hashed in the first read).
    await replaceListed(dir, filename, makeZip(members));
    // Go's dirhash Hash1 by hand: `<hex sha256 of content>  <name>\n` for each file, sorted by name.
    const sha = (b: Buffer | string) => createHash('sha256').update(b).digest();
    const lines = [...members]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((m) => `${sha(m.data).toString('hex')}  ${m.name}\n`)
      .join('');
    const expected = `h1:${sha(lines).toString('base64')}`;
    for (const extra of [['--dry-run'], []]) {
      const result = await publish(e, ['--json', ...extra], { release: dir });
      expect(result.exitCode, result.stderr).toBe(0);
      const doc = jsonOf(result) as {
        platforms: { os: string; arch: string; hashes: string[] }[];
        lock: { hashes: string[] };
      };
      const linux = doc.platforms.find((p) => p.os === 'linux' && p.arch === 'amd64')!;
      expect(linux.hashes[0]).toBe(expected);
      expect(doc.lock.hashes).toContain(expected);
      expect(doc.lock.hashes).toContain(FIXTURE_H1.darwin_amd64);
    }
  });

  it('refuses, before any write, a zip whose h1: dirhash cannot compute (a name with a newline) beside a large stored entry', async () => {
    const e = await emulator();
    const dir = copyRelease();
    const filename = 'terraform-provider-example_1.2.3_linux_amd64.zip';
    const members = [
      { name: 'terraform-provider-example_v1.2.3', data: Buffer.alloc(100 * 1024, 'x') },
      { name: 'bad\nname', data: Buffer.from('x') },
    ];
    await replaceListed(dir, filename, makeZip(members));
    const result = await publish(e, [], { release: dir });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      `${filename}: the h1: lock hash cannot be computed: an entry name holds a newline, which dirhash refuses`,
    );
    expect(writes(e)).toEqual([]);
  });

  it('writes nothing when run again, and reports everything as already there', async () => {
    const e = await emulator();
    expect((await publish(e)).exitCode).toBe(0);
    e.requestLog.clear();
    const again = await publish(e);
    expect(again.exitCode).toBe(0);
    expect(writeRequests(e)).toEqual([]);
    expect(again.stdout).toContain('already there');
    expect(again.stdout).not.toMatch(/created|uploaded,|: uploaded/);
    expect(again.stdout).toMatch(/5 platforms \(everything was already there\) in .*; consumer check passed/);
    const json = jsonOf(await publish(e, ['--json']));
    expect(writeRequests(e)).toEqual([]);
    expect(json).toMatchObject({ waited: false, provider: { created: false }, version: { created: false } });
    expect(
      (json.platforms as { created: boolean; uploaded: boolean }[]).every((p) => !p.created && !p.uploaded),
    ).toBe(true);
  });

  it('registers and uses the PRIMARY key id when a signing subkey made the signature', async () => {
    const e = await emulator();
    const dist = path.join(tempRoot(), 'dist');
    fs.cpSync(RELEASE, dist, { recursive: true });
    fs.copyFileSync(
      path.join(REPO_ROOT, 'fixtures/signatures/by-subkey.sig'),
      path.join(dist, 'terraform-provider-example_1.2.3_SHA256SUMS.sig'),
    );
    const args = publishArgs(e, [], dist).map((a) =>
      a.endsWith('signer.pub.asc') ? a.replace('signer', 'subkey') : a,
    );
    const result = await runCli(args, {
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_POLL_INTERVAL: '5ms' },
      cwd: tempRoot(),
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const primary = keyIdOf('subkey');
    expect(primary).not.toBe(
      fs.readFileSync(path.join(REPO_ROOT, 'fixtures/keys/subkey.signing-subkey.keyid'), 'utf8').trim(),
    );
    expect(e.store.data.gpgKeys.map((k) => k.keyId)).toEqual([primary]);
    expect(e.store.data.versions[0]?.keyId).toBe(primary);
    expect(result.stdout).toContain(`key        ${primary}: registered`);
  });
});
