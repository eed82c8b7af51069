/**
 * `provider mirror` without `--to-dir`: one emulator as the origin, another as the private registry. The
 * version is published by publish's core as `<organization>/<type>` with the origin's bytes (SHA256SUMS, its
 * signature, the zips asked for) and the origin's key armor; a second run writes nothing and downloads no zip;
 * the dry run writes nothing; two origins' providers of one type are refused; and the report says what
 * configurations and state must change. Each emulator's token is in credentials.tfrc.json, by host and port.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { runCli } from '../helpers/cli.js';
import {
  call,
  download,
  emulatorPerTest,
  loadRelease,
  publicKey,
  publishFixture,
} from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { FAST, writeRequests } from '../commands/publish/helpers.js';

const emulator = emulatorPerTest();
type World = Awaited<ReturnType<typeof world>>;
const ALL = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];
const host = (e: Emulator): string => new URL(e.url).host;

/** An origin holding the fixture release, a destination, and a home whose credentials file knows both. */
async function world(): Promise<{ from: Emulator; to: Emulator; home: string; tmp: string }> {
  const from = await emulator();
  await publishFixture(from, { platforms: ALL, uploads: ['sums', 'sig', ...ALL] });
  const to = await emulator({ organization: 'mirror-org' });
  const home = tempRoot();
  fs.mkdirSync(path.join(home, '.terraform.d'));
  const credentials = { [host(from)]: { token: from.ownerToken }, [host(to)]: { token: to.ownerToken } };
  fs.writeFileSync(path.join(home, '.terraform.d', 'credentials.tfrc.json'), JSON.stringify({ credentials }));
  // The command's temporary folder, where it stages each version before publishing it.
  const tmp = path.join(home, 'tmp');
  fs.mkdirSync(tmp);
  return { from, to, home, tmp };
}

async function mirror(w: World, ...args: string[]) {
  return runCli(
    [
      'mirror',
      `${w.from.organization}/example`,
      '--from',
      w.from.url,
      '--hostname',
      w.to.url,
      '--organization',
      w.to.organization,
      ...args,
    ],
    { cwd: w.home, homeDir: w.home, tmpDir: w.tmp, env: FAST },
  );
}

interface Doc {
  summary: Record<string, number>;
  providers: { versions: { status: string; destination: { source: string; wrote: boolean } | null }[] }[];
  changes: {
    from: string;
    to: string;
    alias: string | null;
    requiredProviders: string;
    replaceProvider: string;
  }[];
}

describe('provider mirror into a private registry', () => {
  it('publishes <organization>/<type> with the origin’s bytes and key, then says what to change', async () => {
    const w = await world();
    const result = await mirror(w, '--platforms', 'linux_amd64,darwin_arm64', '--json');
    expect(result.exitCode, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as Doc;
    const to = `${host(w.to)}/mirror-org/example`;
    const from = `${host(w.from)}/${w.from.organization}/example`;
    expect(doc.providers[0]!.versions).toEqual([
      expect.objectContaining({ status: 'mirrored', destination: { source: to, wrote: true } }),
    ]);
    expect(doc.changes).toEqual([
      {
        from,
        to,
        alias: 'localterraform.com/mirror-org/example',
        requiredProviders: expect.stringContaining(`source  = "${to}"`) as string,
        replaceProvider: `terraform state replace-provider ${from} ${to}`,
      },
    ]);

    const release = loadRelease();
    const base = '/api/registry/v1/providers/mirror-org/example';
    const token = w.to.ownerToken;
    const versions = (await call(w.to.url, 'GET', `${base}/versions`, { token })).json as {
      versions: { version: string; protocols: string[]; platforms: { os: string; arch: string }[] }[];
    };
    expect(
      versions.versions.map((v) => [
        v.version,
        v.protocols,
        v.platforms.map((p) => `${p.os}_${p.arch}`).sort(),
      ]),
    ).toEqual([['1.2.3', ['6.0'], ['darwin_arm64', 'linux_amd64']]]);
    for (const [os, arch] of [
      ['linux', 'amd64'],
      ['darwin', 'arm64'],
    ] as const) {
      const doc = (await call(w.to.url, 'GET', `${base}/1.2.3/download/${os}/${arch}`, { token })).json as {
        download_url: string;
        shasums_url: string;
        shasums_signature_url: string;
        signing_keys: { gpg_public_keys: { ascii_armor: string }[] };
      };
      expect((await download(doc.download_url)).bytes.equals(release.zip(os, arch).bytes)).toBe(true);
      expect((await download(doc.shasums_url)).bytes.equals(release.sums)).toBe(true);
      expect((await download(doc.shasums_signature_url)).bytes.equals(release.sig)).toBe(true);
      expect(doc.signing_keys.gpg_public_keys.map((k) => k.ascii_armor)).toEqual([
        publicKey('signer').trim(),
      ]);
    }
    // The scratch copy is gone.
    expect(fs.readdirSync(w.tmp)).toEqual([]);
  });

  it('a second run writes nothing and downloads no zip; the dry run writes nothing either', async () => {
    const w = await world();
    expect((await mirror(w, '--platforms', 'linux_amd64')).exitCode).toBe(0);
    const writes = writeRequests(w.to).length;
    // The signed list is read again to compare its signer with the registry's key; the zips are not.
    const zips = () => w.from.requestLog.records.filter((r) => r.object === 'provider-binary').length;
    const zipsBefore = zips();
    const again = await mirror(w, '--platforms', 'linux_amd64', '--json');
    expect(again.exitCode, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as Doc).summary).toMatchObject({ present: 1, mirrored: 0 });
    const dry = await mirror(w, '--platforms', 'linux_amd64,windows_amd64', '--dry-run', '--json');
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as Doc).summary).toMatchObject({ planned: 1 });
    expect(writeRequests(w.to)).toHaveLength(writes);
    expect(zipsBefore).toBeGreaterThan(0);
    expect(zips()).toBe(zipsBefore);
  });

  it('a run stopped half way (Ctrl-C during the uploads) exits 130, and the same command again completes it', async () => {
    const w = await world();
    // The destination's uploads after the first hang, so the interruption lands with one done and one in flight.
    w.to.faults.add({ method: 'PUT', path: '/_archivist/**', delayMs: 3000, skip: 1 });
    const controller = new AbortController();
    const args = ['mirror', `${w.from.organization}/example`, '--from', w.from.url, '--hostname', w.to.url];
    const run = () =>
      runCli([...args, '--organization', 'mirror-org', '--platforms', 'linux_amd64,darwin_arm64'], {
        cwd: w.home,
        homeDir: w.home,
        tmpDir: w.tmp,
        env: FAST,
        signal: controller.signal,
      });
    const running = run();
    const uploaded = () =>
      w.to.requestLog.records.filter((r) => r.method === 'PUT' && r.status === 200).length;
    await vi.waitFor(
      () => {
        expect(w.to.faults.fired[0]).toBeGreaterThan(0);
        expect(uploaded()).toBeGreaterThanOrEqual(1);
      },
      { timeout: 10_000, interval: 5 },
    );
    controller.abort('SIGINT');
    const stopped = await running;
    expect(stopped.exitCode, stopped.stderr).toBe(130);
    expect(fs.readdirSync(w.tmp)).toEqual([]);

    w.to.faults.clear();
    const again = await runCli(
      [...args, '--organization', 'mirror-org', '--platforms', 'linux_amd64,darwin_arm64', '--json'],
      {
        cwd: w.home,
        homeDir: w.home,
        tmpDir: w.tmp,
        env: FAST,
      },
    );
    expect(again.exitCode, again.stderr).toBe(0);
    const platforms = w.to.store.data.platforms.map((p) => `${p.os}_${p.arch}`).sort();
    expect(platforms).toEqual(['darwin_arm64', 'linux_amd64']);
    const version = w.to.store.data.versions[0]!;
    expect([w.to.store.data.versions.length, version.version]).toEqual([1, '1.2.3']);
  }, 30_000);

  it('refuses two origins’ providers of one type in one organization, before any request', async () => {
    const w = await world();
    const seen = [w.from.requestLog.records.length, w.to.requestLog.records.length];
    const result = await runCli(
      [
        'mirror',
        'hashicorp/random',
        'acme/random',
        '--from',
        w.from.url,
        '--hostname',
        w.to.url,
        '--organization',
        'mirror-org',
      ],
      { cwd: w.home, homeDir: w.home, tmpDir: w.tmp, env: FAST },
    );
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('hashicorp/random and acme/random would both become mirror-org/random');
    expect([w.from.requestLog.records.length, w.to.requestLog.records.length]).toEqual(seen);
  });
});
