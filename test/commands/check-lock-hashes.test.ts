/**
 * `provider check` and the lock hashes (issue 15, item 3): it reads the provider registry protocol's download
 * response of every platform (service discovery's `providers.v1`, with the token, as terraform init does) and,
 * when the registry serves OpenTofu's `packages` (RFC `opentofu/opentofu:
 * rfc/20251027-provider-registry-hashes.md`; every platform of the version in each response, as
 * registry.opentofu.org serves it: renovatebot/renovate#43573), checks every `zh:` against the signed SHA256SUMS
 * and the platform's shasum and, with --download, every `h1:` and `package_size` against the downloaded zip.
 * Absent `packages` is HCP Terraform's normal answer (hashicorp/terraform#32809: its registry "cannot provide
 * h1: hashes"). Expected values are the fixture's pinned h1: (FIXTURE_H1, computed outside this project) and
 * the shasums of its SHA256SUMS.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkConsumerView } from '../../src/consumer/check.js';
import type { EmulatorOptions } from '../../src/emulator/server.js';
import type { Emulator } from '../../src/emulator/server.js';
import { emulatorPerTest, loadRelease, secretKey } from '../helpers/emulator/index.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURE_H1, signDetached } from '../release/helpers.js';
import {
  ALL_PLATFORMS,
  cli,
  coreWorld,
  eventually,
  publishAll,
  storedPlatform,
  storedVersion,
  zipName,
} from './helpers.js';

const start = emulatorPerTest();
const release = loadRelease();

async function published(options: EmulatorOptions = { packageHashes: true }): Promise<Emulator> {
  const emulator = await start(options);
  await publishAll(emulator);
  return emulator;
}

function zipOf(platform: string) {
  const [os = '', arch = ''] = platform.split('_');
  return release.zip(os, arch);
}

/** The lock hashes of a fixture platform, sorted as a lock file lists them (h1: before zh:). */
function lockHashesOf(platform: string): string[] {
  return [FIXTURE_H1[platform as keyof typeof FIXTURE_H1], `zh:${zipOf(platform).shasum}`];
}

/** The check made no change: every request it sent was a GET (reads, and downloads without a token). */
async function expectNoWrites(emulator: Emulator): Promise<void> {
  await eventually(() => expect(emulator.requestLog.records.length).toBeGreaterThan(0));
  expect(emulator.requestLog.records.filter((r) => r.method !== 'GET')).toEqual([]);
}

interface CheckJson {
  ok: boolean;
  packages: string;
  downloaded: boolean;
  platforms: {
    os: string;
    arch: string;
    hashes: string[];
    packages: { hashes: string[]; packageSize: number | null; checked: string[] } | null;
  }[];
  error?: { code: string; message: string; hint: string };
}

describe('provider check: lock hashes served in packages', () => {
  it('passes, reading every platform download response with the token, and says what it checked', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['check', '1.2.3']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'hashes     lock hashes served (packages) for 5 of 5 platforms: zh: match SHA256SUMS (--download also checks h1: and sizes)\n',
    );
    await expectNoWrites(emulator);
    const reads = emulator.requestLog.records.map((r) => r.path);
    expect(reads).toContain('/.well-known/terraform.json');
    for (const platform of ALL_PLATFORMS) {
      const path = `/api/registry/v1/providers/${emulator.organization}/example/1.2.3/download/${platform.replace('_', '/')}`;
      const record = emulator.requestLog.records.find((r) => r.path === path);
      expect(record, path).toMatchObject({ method: 'GET', authorization: true, status: 200 });
    }
  });

  it.each([
    ['kept in temporary files', false],
    ['hashed as they download, from links that answer ranges', true],
  ])(
    '--download --json (zips %s): platforms[].hashes (h1: from the zip, zh: from SHA256SUMS) and what packages served',
    async (_, ranges) => {
      const emulator = await published({ packageHashes: true, ranges });
      const result = await cli(emulator, ['check', '1.2.3', '--download', '--json']);
      expect(result.exitCode, result.stderr).toBe(0);
      const doc = JSON.parse(result.stdout) as CheckJson;
      expect(doc.packages).toBe('served');
      expect(doc.platforms.map((p) => `${p.os}_${p.arch}`)).toEqual(ALL_PLATFORMS);
      for (const p of doc.platforms) {
        const platform = `${p.os}_${p.arch}`;
        expect(p.hashes).toEqual(lockHashesOf(platform));
        expect(p.packages).toEqual({
          hashes: lockHashesOf(platform),
          packageSize: zipOf(platform).bytes.length,
          checked: ['zh', 'h1', 'package_size'],
        });
      }
      await expectNoWrites(emulator);
    },
  );

  it('--download prints each h1: and the lock hashes line for people', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['check', '1.2.3', '--download']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `  linux_amd64: ${zipName('linux_amd64')} (${zipOf('linux_amd64').bytes.length} bytes) hashes to its shasum, ${FIXTURE_H1.linux_amd64}\n`,
    );
    expect(result.stdout).toContain(
      'hashes     lock hashes served (packages) for 5 of 5 platforms: zh:, h1: and sizes match SHA256SUMS and the downloads\n',
    );
  });

  it('fails (exit 3) when packages serves a wrong zh:, even without --download', async () => {
    const emulator = await published({
      packageHashes: true,
      faults: [{ method: 'GET', path: '**/download/linux/amd64', wrongHash: 'zh' }],
    });
    const result = await cli(emulator, ['check', '1.2.3', '--json']);
    expect(result.exitCode).toBe(3);
    const doc = JSON.parse(result.stdout) as CheckJson;
    const shasum = zipOf('linux_amd64').shasum;
    // What the emulator's fault serves: another well-formed zh:.
    const served = `zh:${createHash('sha256').update(`zh:${shasum}`).digest('hex')}`;
    expect(doc.error?.code).toBe('verification');
    expect(doc.error?.message).toContain('(1 problem):');
    expect(doc.error?.message).toContain(
      `  linux_amd64: the registry serves ${served} in packages, but SHA256SUMS and the platform's shasum give zh:${shasum} (in the download response of linux_amd64)`,
    );
    expect(doc.error?.hint).toContain(
      "The registry serves a lock hash that does not match the package; consumers' .terraform.lock.hcl would pin the wrong value",
    );
    await expectNoWrites(emulator);
  });

  it('fails (exit 3) with --download when packages serves a wrong h1: (passes without: h1: needs the zip)', async () => {
    const emulator = await published({
      packageHashes: true,
      faults: [{ path: '**/download/*/*', wrongHash: 'h1', platform: 'darwin_arm64' }],
    });
    const without = await cli(emulator, ['check', '1.2.3']);
    expect(without.exitCode, without.stderr).toBe(0);
    const result = await cli(emulator, ['check', '1.2.3', '--download']);
    expect(result.exitCode).toBe(3);
    const served = `h1:${createHash('sha256').update(FIXTURE_H1.darwin_arm64).digest('base64')}`;
    expect(result.stderr).toContain('(1 problem):');
    expect(result.stderr).toContain(
      `  darwin_arm64: the registry serves ${served} in packages, but the downloaded zip's h1: is ${FIXTURE_H1.darwin_arm64} (in every download response)`,
    );
    expect(result.stdout).toBe('');
    await expectNoWrites(emulator);
  });

  it('fails (exit 3) with --download when package_size is not the zip size', async () => {
    const emulator = await published();
    storedPlatform(emulator, 'linux_arm64').binary.bytes = 7;
    const result = await cli(emulator, ['check', '1.2.3', '--download']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      `  linux_arm64: the registry serves package_size 7 in packages, but the downloaded zip is ${zipOf('linux_arm64').bytes.length} bytes (in every download response)`,
    );
  });
});

describe('provider check: no packages served (HCP Terraform)', () => {
  it('is normal: passes, says "not served", and still vouches for zh: (and h1: with --download)', async () => {
    const emulator = await published({});
    const result = await cli(emulator, ['check', '1.2.3', '--download', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as CheckJson;
    expect(doc.packages).toBe('not served');
    for (const p of doc.platforms) {
      expect(p.packages).toBeNull();
      expect(p.hashes).toEqual(lockHashesOf(`${p.os}_${p.arch}`));
    }
    const plain = await cli(emulator, ['check', '1.2.3']);
    expect(plain.stdout).toContain(
      'hashes     lock hashes not served by the registry (no packages, as on HCP Terraform); zh: of all 5 from the signed SHA256SUMS (--json lists them)\n',
    );
  });
});

describe('checkConsumerView with lockHashes and download', () => {
  it('hashes each zip in a temporary file under tmpDir and leaves nothing behind', async () => {
    const emulator = await published();
    const { client, output, address } = coreWorld(emulator);
    const tmpDir = tempDir();
    const report = await checkConsumerView({
      client,
      address,
      version: '1.2.3',
      output,
      download: true,
      lockHashes: true,
      tmpDir,
    });
    expect(report.platforms.map((p) => p.hashes)).toEqual(ALL_PLATFORMS.map(lockHashesOf));
    expect(fs.readdirSync(tmpDir)).toEqual([]);
  });

  it('without lockHashes (publish): reads no registry protocol, still reports the zh: it vouches for', async () => {
    const emulator = await published();
    const { client, output, address } = coreWorld(emulator);
    const report = await checkConsumerView({ client, address, version: '1.2.3', output, download: true });
    expect(report.packages).toBeUndefined();
    expect(report.platforms.map((p) => p.hashes)).toEqual(
      ALL_PLATFORMS.map((p) => [`zh:${zipOf(p).shasum}`]),
    );
    await eventually(() => expect(emulator.requestLog.records.length).toBeGreaterThan(0));
    expect(emulator.requestLog.records.filter((r) => r.path.startsWith('/api/registry/v1/'))).toEqual([]);
  });

  it.each([
    ['kept in temporary files', false],
    ['hashed as they download, from links that answer ranges', true],
  ])('a signed zip whose h1: cannot be computed is a problem naming it (zips %s)', async (_, ranges) => {
    const emulator = await published({ ranges });
    // linux_amd64 becomes bytes that are no zip, listed in a re-signed SHA256SUMS: only the h1: can fail.
    await replaceSigned(emulator, 'linux_amd64', Buffer.from('not a zip archive\n'));
    const result = await cli(emulator, ['check', '1.2.3', '--download']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('(1 problem):');
    expect(result.stderr).toContain(
      `  linux_amd64: ${zipName('linux_amd64')}: the h1: lock hash cannot be computed: it is not a readable zip archive`,
    );
    expect(result.stderr).toContain('Publish it as a new patch version; never overwrite a published one.');
  });

  it('hashed as it downloads: a signed zip whose entry does not inflate to its CRC-32 is a problem naming it', async () => {
    const emulator = await published({ ranges: true });
    const zip = Buffer.from(zipOf('linux_amd64').bytes);
    // The executable's CRC-32, in its local header and in the central directory.
    zip.writeUInt32LE(zip.readUInt32LE(14) ^ 1, 14);
    const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt32LE(zip.readUInt32LE(central + 16) ^ 1, central + 16);
    await replaceSigned(emulator, 'linux_amd64', zip);
    const result = await cli(emulator, ['check', '1.2.3', '--download']);
    expect(result.exitCode).toBe(3);
    // Read by ranges (206) and one body each (200), not from copies.
    expect(emulator.requestLog.records.filter((r) => r.status === 206)).toHaveLength(ALL_PLATFORMS.length);
    expect(result.stderr).toMatch(
      new RegExp(
        `linux_amd64: ${zipName('linux_amd64').replaceAll('.', '\\.')}: the h1: lock hash cannot be computed: entry "[^"]+" cannot be read \\(its content does not match its CRC-32\\)`,
      ),
    );
  });
});

/** Stores `bytes` as a platform's zip, listed in a SHA256SUMS signed again: the registry serves it so. */
async function replaceSigned(emulator: Emulator, name: string, bytes: Buffer): Promise<void> {
  const sha = createHash('sha256').update(bytes).digest('hex');
  const platform = storedPlatform(emulator, name);
  fs.writeFileSync(emulator.store.objectPath(platform.binary.key), bytes);
  platform.shasum = sha;
  const version = storedVersion(emulator);
  const sums = fs
    .readFileSync(emulator.store.objectPath(version.shasums.key), 'utf8')
    .replace(`${zipOf(name).shasum}  `, `${sha}  `);
  fs.writeFileSync(emulator.store.objectPath(version.shasums.key), sums);
  const signature = await signDetached(Buffer.from(sums), secretKey('signer'));
  fs.writeFileSync(emulator.store.objectPath(version.shasumsSig.key), signature);
}
