/**
 * The consumer view's lock hashes (issue 15, item 3): with `packageHashes` on, the provider registry protocol's
 * download response carries OpenTofu's `packages` object (RFC `opentofu/opentofu:
 * rfc/20251027-provider-registry-hashes.md`; shape `{"packages":{"<os>_<arch>":{"hashes":[…],"package_size":N}}}`
 * as registry.opentofu.org serves it for every platform of the version: renovatebot/renovate#43573,
 * updatecli/updatecli#9611, dependabot/dependabot-core#15296), computed from the stored bytes when each upload
 * completes. Without the option it is absent, as HCP Terraform serves no `packages` (hashicorp/terraform#32809).
 * The expected values are the fixture's pinned h1: (FIXTURE_H1, computed outside this project) and the zh: of its
 * SHA256SUMS, never what src/ computes.
 */
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseFaultFile } from '../../src/emulator/faults.js';
import { emulatorOptionsFromFlags } from '../../src/commands/emulate.js';
import {
  call,
  clients,
  emulatorPerTest,
  expectSuccess,
  linkOf,
  loadRelease,
  publishFixture,
  upload,
  type Reply,
} from '../helpers/emulator/index.js';
import { createPlatform } from '../helpers/emulator/platforms.js';
import { isObject } from '../helpers/json.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURE_H1, PLATFORMS } from '../release/helpers.js';

const start = emulatorPerTest();
const release = loadRelease();

/** `GET <providers.v1><org>/example/1.2.3/download/<os>/<arch>` with the owner token, as terraform init asks. */
async function downloadDocument(emulator: Emulator, platform: string): Promise<Reply> {
  const discovery = await call(emulator.url, 'GET', '/.well-known/terraform.json');
  const base = isObject(discovery.json) ? String(discovery.json['providers.v1']) : '';
  const [os, arch] = platform.split('_');
  const path = `${base}${emulator.organization}/${release.name}/${release.version}/download/${os}/${arch}`;
  const reply = await call(emulator.url, 'GET', path, { token: emulator.ownerToken });
  expect(reply.status, reply.text).toBe(200);
  return reply;
}

/** The `packages` member of a download response (undefined when absent). */
function packagesOf(reply: Reply): unknown {
  return isObject(reply.json) ? reply.json.packages : undefined;
}

/** What the fixture's `packages` must be: the pinned h1:, the zh: of SHA256SUMS, sorted; the zip's size. */
function expectedPackages(platforms: readonly string[] = PLATFORMS): Record<string, unknown> {
  const expected: Record<string, unknown> = {};
  for (const platform of platforms) {
    const [os = '', arch = ''] = platform.split('_');
    const zip = release.zip(os, arch);
    expected[platform] = {
      // Lock-file order (plain string order: h1: before zh:), as `terraform providers lock` writes them.
      hashes: [FIXTURE_H1[platform as keyof typeof FIXTURE_H1], `zh:${zip.shasum}`],
      package_size: zip.bytes.length,
    };
  }
  return expected;
}

const ALL = [...PLATFORMS];

describe('packages in the consumer download response', () => {
  it('with packageHashes: every platform of the version, its h1: and zh: sorted, and the zip size', async () => {
    const emulator = await start({ packageHashes: true });
    await publishFixture(emulator, { platforms: ALL, uploads: ['sums', 'sig', ...ALL] });
    for (const platform of ['linux_amd64', 'darwin_arm64']) {
      const reply = await downloadDocument(emulator, platform);
      expect(packagesOf(reply)).toEqual(expectedPackages());
      // The rest of the document is unchanged.
      const [os = '', arch = ''] = platform.split('_');
      expect(reply.json).toMatchObject({ os, arch, shasum: release.zip(os, arch).shasum });
    }
  });

  it('without it (the default, as HCP Terraform): no packages member at all', async () => {
    const emulator = await start();
    await publishFixture(emulator, { platforms: ALL, uploads: ['sums', 'sig', ...ALL] });
    const reply = await downloadDocument(emulator, 'linux_amd64');
    expect(isObject(reply.json) && 'packages' in reply.json).toBe(false);
  });

  it('lists only uploaded platforms', async () => {
    const emulator = await start({ packageHashes: true });
    await publishFixture(emulator, {
      platforms: ALL,
      uploads: ['sums', 'sig', 'linux_amd64', 'windows_amd64'],
    });
    const reply = await downloadDocument(emulator, 'windows_amd64');
    expect(packagesOf(reply)).toEqual(expectedPackages(['linux_amd64', 'windows_amd64']));
  });

  it('a binary whose h1: cannot be computed (not a zip) is stored anyway and has no entry', async () => {
    const emulator = await start({ packageHashes: true });
    await publishFixture(emulator, { platforms: ['darwin_amd64'], uploads: ['sums', 'sig', 'darwin_amd64'] });
    const { owner } = clients(emulator);
    const doc = await createPlatform(owner, emulator.organization, release.name, release.version, {
      ...release.zip('linux', 'amd64'),
    });
    const garbage = Buffer.from('not a zip archive\n');
    expectSuccess(await upload(linkOf(doc, 'provider-binary-upload'), garbage));
    const reply = await downloadDocument(emulator, 'linux_amd64');
    expect(packagesOf(reply)).toEqual(expectedPackages(['darwin_amd64']));
    // Stored all the same: the link serves the bytes.
    const link = isObject(reply.json) ? String(reply.json.download_url) : '';
    expect((await call('', 'GET', link)).bytes.equals(garbage)).toBe(true);
  });

  it('the hashes persist with the state: a restart on the same data folder serves them', async () => {
    const dataDir = tempDir();
    const first = await startEmulator({ dataDir, packageHashes: true });
    try {
      await publishFixture(first, { platforms: ALL, uploads: ['sums', 'sig', ...ALL] });
    } finally {
      await first.close();
    }
    const second = await startEmulator({ dataDir, packageHashes: true });
    try {
      expect(packagesOf(await downloadDocument(second, 'linux_arm64'))).toEqual(expectedPackages());
    } finally {
      await second.close();
    }
  });
});

describe('the wrongHash fault', () => {
  it('serves a wrong zh: for the requested platform, the others untouched, and is named in the log', async () => {
    const emulator = await start({
      packageHashes: true,
      faults: [{ method: 'GET', path: '/api/registry/v1/providers/**', wrongHash: 'zh' }],
    });
    await publishFixture(emulator, { platforms: ALL, uploads: ['sums', 'sig', ...ALL] });
    const reply = await downloadDocument(emulator, 'linux_amd64');
    const served = packagesOf(reply) as Record<string, { hashes: string[] }>;
    const want = expectedPackages() as Record<string, { hashes: string[] }>;
    const zh = served.linux_amd64!.hashes.find((h) => h.startsWith('zh:'));
    expect(zh).toMatch(/^zh:[0-9a-f]{64}$/);
    expect(zh).not.toBe(`zh:${release.zip('linux', 'amd64').shasum}`);
    expect(served.linux_amd64!.hashes[0]).toBe(FIXTURE_H1.linux_amd64);
    for (const other of ALL.filter((p) => p !== 'linux_amd64')) expect(served[other]).toEqual(want[other]);
    const logged = emulator.requestLog.records.find((r) => r.path.endsWith('/download/linux/amd64'));
    expect(logged?.fault).toBe('rule 1: wrong zh: hash');
  });

  it('with platform: serves a wrong h1: for that platform in every download response', async () => {
    const emulator = await start({
      packageHashes: true,
      faults: [{ path: '**/download/*/*', wrongHash: 'h1', platform: 'darwin_arm64' }],
    });
    await publishFixture(emulator, { platforms: ALL, uploads: ['sums', 'sig', ...ALL] });
    const served = packagesOf(await downloadDocument(emulator, 'linux_amd64')) as Record<
      string,
      { hashes: string[] }
    >;
    const h1 = served.darwin_arm64!.hashes.find((h) => h.startsWith('h1:'));
    expect(h1).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
    expect(h1).not.toBe(FIXTURE_H1.darwin_arm64);
    expect(served.linux_amd64!.hashes).toEqual(
      (expectedPackages() as Record<string, { hashes: string[] }>).linux_amd64!.hashes,
    );
  });

  it('is checked in a --faults file: the scheme, and platform only with it', () => {
    expect(parseFaultFile('[{"wrongHash":"zh"}]', 'f.json').rules).toEqual([{ wrongHash: 'zh' }]);
    expect(() => parseFaultFile('[{"wrongHash":"sha1"}]', 'f.json')).toThrow(
      'f.json: rule 1: "wrongHash" must be "h1" or "zh"',
    );
    expect(() => parseFaultFile('[{"status":500,"platform":"linux_amd64"}]', 'f.json')).toThrow(
      'f.json: rule 1: "platform" goes with "wrongHash"',
    );
    expect(() => parseFaultFile('[{"wrongHash":"h1","platform":"linux"}]', 'f.json')).toThrow(
      'f.json: rule 1: "platform" must be <os>_<arch>, e.g. linux_amd64',
    );
  });
});

describe('provider emulate --package-hashes', () => {
  it('turns the option on (off by default) and says so when it starts', async () => {
    const flags = { host: '127.0.0.1', port: '0' };
    expect(emulatorOptionsFromFlags(flags, '/', {}).packageHashes).toBe(false);
    expect(emulatorOptionsFromFlags({ ...flags, packageHashes: true }, '/', {}).packageHashes).toBe(true);
    // Stopped as soon as it has started (the signal has already fired).
    const result = await runCli(['emulate', '--port', '0', '--package-hashes'], {
      signal: AbortSignal.abort(),
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      '  package hashes: served (packages in the download response, as OpenTofu serves them)',
    );
    const plain = await runCli(['emulate', '--port', '0'], { signal: AbortSignal.abort() });
    expect(plain.stdout).not.toContain('package hashes');
  });
});
