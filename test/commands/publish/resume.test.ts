/** Resuming: from every partial state, `provider publish` does exactly the missing work and nothing else. */
import { describe, expect, it } from 'vitest';
import { clients, createProvider, emulatorPerTest, publishFixture } from '../../helpers/emulator/index.js';
import { PLATFORMS, expectComplete, jsonOf, publish, writes } from './helpers.js';

const emulator = emulatorPerTest();
const uploadsOf = (platforms: string[]) => platforms.map((p) => `upload ${p}`);
const creates = (n: number) => Array.from({ length: n }, () => 'create platform');

describe('provider publish resumes', () => {
  it.each([
    {
      state: 'the provider only (key and version missing)',
      seed: async (e: Awaited<ReturnType<typeof emulator>>) => {
        await createProvider(clients(e).owner, e.organization, 'example');
      },
      expected: [
        'register key',
        'create version',
        'upload shasums',
        'upload signature',
        ...creates(5),
        ...uploadsOf(PLATFORMS),
      ],
    },
    {
      state: 'the version only',
      seed: (e: Awaited<ReturnType<typeof emulator>>) => publishFixture(e),
      expected: ['upload shasums', 'upload signature', ...creates(5), ...uploadsOf(PLATFORMS)],
    },
    {
      state: 'the checksum file only',
      seed: (e: Awaited<ReturnType<typeof emulator>>) => publishFixture(e, { uploads: ['sums'] }),
      expected: ['upload signature', ...creates(5), ...uploadsOf(PLATFORMS)],
    },
    {
      state: 'some platforms created but not uploaded',
      seed: (e: Awaited<ReturnType<typeof emulator>>) =>
        publishFixture(e, { platforms: ['darwin_arm64', 'linux_amd64'], uploads: ['sums', 'sig'] }),
      expected: [...creates(3), ...uploadsOf(PLATFORMS)],
    },
    {
      state: 'some platforms uploaded',
      seed: (e: Awaited<ReturnType<typeof emulator>>) =>
        publishFixture(e, {
          platforms: ['darwin_arm64', 'linux_amd64', 'windows_amd64'],
          uploads: ['sums', 'sig', 'linux_amd64', 'windows_amd64'],
        }),
      expected: [...creates(2), ...uploadsOf(['darwin_amd64', 'darwin_arm64', 'linux_arm64'])],
    },
  ])('from $state', async ({ seed, expected }) => {
    const e = await emulator();
    await seed(e);
    e.requestLog.clear();
    const result = await publish(e);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(writes(e)).toEqual([...expected].sort());
    expectComplete(e);
  });

  it('says in the JSON document what this run did and what was already there', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: ['darwin_arm64', 'linux_amd64'], uploads: ['sums', 'linux_amd64'] });
    const doc = jsonOf(await publish(e, ['--json']));
    expect(doc).toMatchObject({
      ok: true,
      provider: { action: 'skip', created: false },
      key: { action: 'skip', registered: false },
      version: { action: 'skip', created: false },
      files: [
        { kind: 'shasums', action: 'skip', uploaded: false },
        { kind: 'signature', action: 'upload', uploaded: true },
      ],
    });
    const rows = (
      doc.platforms as { os: string; arch: string; action: string; created: boolean; uploaded: boolean }[]
    ).map((p) => [`${p.os}_${p.arch}`, p.action, p.created, p.uploaded]);
    expect(rows).toEqual([
      ['darwin_amd64', 'create', true, true],
      ['darwin_arm64', 'upload', false, true],
      ['linux_amd64', 'skip', false, false],
      ['linux_arm64', 'create', true, true],
      ['windows_amd64', 'create', true, true],
    ]);
  });

  it('lists a half-done run in the summary table with what it finished', async () => {
    const e = await emulator();
    await publishFixture(e, {
      platforms: ['darwin_arm64', 'linux_amd64'],
      uploads: ['sums', 'sig', 'linux_amd64'],
    });
    const result = await publish(e);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/darwin_amd64 .* created, uploaded\n/);
    expect(result.stdout).toMatch(/darwin_arm64 .* uploaded\n/);
    expect(result.stdout).toMatch(/linux_amd64 .* already there\n/);
    expect(result.stdout).toContain('checksums  terraform-provider-example_1.2.3_SHA256SUMS: already there');
    expect(result.stdout).toContain('5 platforms (3 created, 4 uploaded)');
  });
});
