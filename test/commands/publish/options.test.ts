/**
 * Options and side cases of `provider publish`: --dry-run, registry platforms the release lacks,
 * --dearmor-signature, the registered key without --key, --protocols, --concurrency.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { normalise } from '../../helpers/normalise.js';
import {
  addGpgKey,
  clients,
  emulatorPerTest,
  keyIdOf,
  publishFixture,
} from '../../helpers/emulator/index.js';
import {
  FAST,
  FULL_PUBLISH,
  RELEASE,
  jsonOf,
  publish,
  publishArgs,
  storedPlatforms,
  writeRequests,
  writes,
} from './helpers.js';
import { tempRoot } from '../../helpers/tmp.js';

const emulator = emulatorPerTest();
const KEY = keyIdOf('signer');

describe('provider publish options', () => {
  it('reports registry platforms the release lacks and keeps them', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: [] });
    const { owner } = clients(e);
    const extra = await owner.post(
      `/api/v2/organizations/${e.organization}/registry-providers/private/${e.organization}/example/versions/1.2.3/platforms`,
      {
        data: {
          type: 'registry-provider-platforms',
          attributes: {
            os: 'freebsd',
            arch: 'amd64',
            shasum: 'f'.repeat(64),
            filename: 'terraform-provider-example_1.2.3_freebsd_amd64.zip',
          },
        },
      },
    );
    expect(extra.status).toBe(201);
    e.requestLog.clear();
    const result = await publish(e, ['--no-check']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'the registry also holds freebsd_amd64 for 1.2.3, which this release does not have (kept, not deleted)',
    );
    expect(result.stdout).toContain(
      'freebsd_amd64: in the registry but not in the release (kept; provider delete 1.2.3 --platform freebsd_amd64 removes it)',
    );
    expect(writeRequests(e).filter((w) => w.startsWith('DELETE'))).toEqual([]);
    expect(storedPlatforms(e).map((p) => p.name)).toEqual([
      'darwin_amd64',
      'darwin_arm64',
      'freebsd_amd64',
      'linux_amd64',
      'linux_arm64',
      'windows_amd64',
    ]);
    // The consumer check still looks at every platform the registry serves for the version.
    const checked = await publish(e);
    expect(checked.exitCode).toBe(3);
    expect(checked.stderr).toContain('freebsd_amd64');
    expect(writeRequests(e).filter((w) => w.startsWith('DELETE'))).toEqual([]);
  });

  it('prints the plan with --dry-run and writes nothing', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: ['linux_amd64'], uploads: ['sums', 'linux_amd64'] });
    e.requestLog.clear();
    const result = await publish(e, ['--dry-run']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(writeRequests(e)).toEqual([]);
    expect(normalise(result.stdout)).toMatchInlineSnapshot(`
      "Plan for example 1.2.3 (dry run: nothing was written)
      provider   example-org/example on 127.0.0.1:<port>: already there
      key        47D8C49E6154CCB3: already there
      version    1.2.3 (key 47D8C49E6154CCB3, protocols 6.0): already there
      checksums  terraform-provider-example_1.2.3_SHA256SUMS: already there
      signature  terraform-provider-example_1.2.3_SHA256SUMS.sig: upload

      PLATFORM       FILE                                                   SIZE  SHA256        PLAN
      darwin_amd64   terraform-provider-example_1.2.3_darwin_amd64.zip   2.2 KiB  6546e445d34f  create, upload
      darwin_arm64   terraform-provider-example_1.2.3_darwin_arm64.zip   2.2 KiB  f76b591723b0  create, upload
      linux_amd64    terraform-provider-example_1.2.3_linux_amd64.zip    2.2 KiB  bd7aeba4436e  already there
      linux_arm64    terraform-provider-example_1.2.3_linux_arm64.zip    2.2 KiB  26693bd82fa2  create, upload
      windows_amd64  terraform-provider-example_1.2.3_windows_amd64.zip  2.2 KiB  24c86909e1e1  create, upload

      example 1.2.3: 5 items to write (5 platforms)
      "
    `);

    const json = jsonOf(await publish(e, ['--dry-run', '--json']));
    expect(writeRequests(e)).toEqual([]);
    expect(json).toMatchObject({
      ok: true,
      dryRun: true,
      waited: false,
      check: { status: 'skipped', reason: 'dry run' },
    });
    expect((json.platforms as { action: string }[]).map((p) => p.action)).toEqual([
      'create',
      'create',
      'skip',
      'create',
      'create',
    ]);
  });
  it('uploads the binary form of an armored signature with --dearmor-signature, and refuses it without', async () => {
    const e = await emulator();
    const dist = path.join(tempRoot(), 'dist');
    fs.cpSync(RELEASE, dist, { recursive: true });
    const sig = path.join(dist, 'terraform-provider-example_1.2.3_SHA256SUMS.sig');
    fs.copyFileSync(path.join(REPO_ROOT, 'fixtures/signatures/armored.sig.asc'), sig);
    const refused = await publish(e, [], { release: dist });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain('--dearmor-signature');
    // Nothing written; the registry's side may have been read meanwhile (reads only, while hashing).
    expect(e.requestLog.records.filter((r) => r.method !== 'GET')).toEqual([]);

    const result = await publish(e, ['--dearmor-signature'], { release: dist });
    expect(result.exitCode, result.stderr).toBe(0);
    const stored = fs.readFileSync(e.store.objectPath(e.store.data.versions[0]!.shasumsSig.key));
    expect(stored[0]! & 0x80).toBe(0x80);
    expect(stored.toString('latin1')).not.toContain('BEGIN PGP');
    expect(fs.readFileSync(sig, 'utf8')).toContain('BEGIN PGP SIGNATURE'); // the user's file is left alone
  });

  it('uses the key registered on the registry when no --key is given (and registers nothing)', async () => {
    const e = await emulator();
    await addGpgKey(clients(e).owner, e.organization, 'signer');
    e.requestLog.clear();
    const args = publishArgs(e).filter((a, i, all) => a !== '--key' && all[i - 1] !== '--key');
    const result = await runCli(args, { env: { TFE_TOKEN: e.ownerToken, ...FAST }, cwd: tempRoot() });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(writes(e)).toEqual(FULL_PUBLISH.filter((w) => w !== 'register key'));
    expect(result.stdout).toContain(`key        ${KEY}: already there`);
  });

  it('takes --protocols over the manifest, and checks --concurrency before any request', async () => {
    const e = await emulator();
    const result = await publish(e, ['--protocols', '5.0,6.0', '--concurrency', '1']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(e.store.data.versions[0]?.protocols).toEqual(['5.0', '6.0']);
    const f = await emulator();
    const bad = await publish(f, ['--concurrency', '0']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--concurrency must be "auto" or an integer from 1 to 32');
    expect(f.requestLog.records).toEqual([]);
  });
});
