/**
 * The air gap in two steps: `provider mirror --to-dir` on one machine, `provider publish <folder>` with no
 * `--key` on the other. Publish takes the folder as it is (the record for the protocols, the signer key beside
 * the files, the origin's SHA256SUMS listing platforms that were not copied), and the registry then serves the
 * origin's bytes: its SHA256SUMS, signature, zips and key armor. The folder is held to its record: a zip lost on
 * the way (deleted, or replaced by a link to /dev/zero) is exit 3 naming it, nothing published; a signature by
 * another key than the record's is published with a warning.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { call, download, emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { FAST } from '../commands/publish/helpers.js';
import { FIXTURES, signDetached } from '../release/helpers.js';
import { buildRelease, hostDir, SIGNER_ARMOR, SIGNER_KEY_ID, startOrigin } from './origin.js';

const emulator = emulatorPerTest();

describe('provider mirror --to-dir, then provider publish <folder>', () => {
  it('publishes the same bytes without --key', async () => {
    const release = await buildRelease('1.2.3', ['darwin_arm64', 'linux_amd64', 'windows_amd64'], ['5.0']);
    const origin = await startOrigin([release]);
    const cwd = tempRoot();
    const mirrored = await runCli(
      [
        'mirror',
        'acme/example',
        '--from',
        origin.url,
        '--platforms',
        'linux_amd64,windows_amd64',
        '--to-dir',
        'out',
      ],
      { cwd, homeDir: cwd, env: { NO_COLOR: '1' } },
    );
    expect(mirrored.exitCode, mirrored.stderr).toBe(0);

    const e = await emulator();
    const folder = path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example', '1.2.3');
    const published = await runCli(
      ['publish', folder, '--hostname', e.url, '--organization', e.organization],
      {
        cwd: tempRoot(),
        homeDir: cwd,
        env: { TFE_TOKEN: e.ownerToken, ...FAST },
      },
    );
    expect(published.exitCode, published.stderr).toBe(0);

    const base = `/api/registry/v1/providers/${e.organization}/example`;
    const token = e.ownerToken;
    const versions = await call(e.url, 'GET', `${base}/versions`, { token });
    const listed = (
      versions.json as {
        versions: { version: string; protocols: string[]; platforms: { os: string; arch: string }[] }[];
      }
    ).versions;
    expect(
      listed.map((v) => [v.version, v.protocols, v.platforms.map((p) => `${p.os}_${p.arch}`).sort()]),
    ).toEqual([['1.2.3', ['5.0'], ['linux_amd64', 'windows_amd64']]]);
    for (const platform of ['linux_amd64', 'windows_amd64']) {
      const [os, arch] = platform.split('_');
      const doc = (await call(e.url, 'GET', `${base}/1.2.3/download/${os}/${arch}`, { token })).json as {
        download_url: string;
        shasums_url: string;
        shasums_signature_url: string;
        signing_keys: { gpg_public_keys: { ascii_armor: string }[] };
      };
      const zip = release.zips.get(`terraform-provider-example_1.2.3_${platform}.zip`)!;
      expect((await download(doc.download_url)).bytes.equals(zip)).toBe(true);
      expect((await download(doc.shasums_url)).bytes.equals(release.sums)).toBe(true);
      expect((await download(doc.shasums_signature_url)).bytes.equals(release.sig)).toBe(true);
      expect(doc.signing_keys.gpg_public_keys.map((k) => k.ascii_armor)).toEqual([SIGNER_ARMOR.trim()]);
    }
  });

  /** A folder mirrored with two platforms, and a registry to publish it to. */
  async function mirrored(): Promise<{
    folder: string;
    publish: () => ReturnType<typeof runCli>;
    versions: () => number;
  }> {
    const origin = await startOrigin([await buildRelease('1.2.3', ['darwin_arm64', 'linux_amd64'])]);
    const cwd = tempRoot();
    const result = await runCli(['mirror', 'acme/example', '--from', origin.url, '--to-dir', 'out'], {
      cwd,
      homeDir: cwd,
      env: FAST,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const e = await emulator();
    const folder = path.join(cwd, 'out', hostDir(origin.url), 'acme', 'example', '1.2.3');
    return {
      folder,
      publish: () =>
        runCli(['publish', folder, '--hostname', e.url, '--organization', e.organization], {
          cwd: tempRoot(),
          homeDir: cwd,
          env: { TFE_TOKEN: e.ownerToken, ...FAST },
        }),
      versions: () => e.store.data.versions.length,
    };
  }

  const ZIP = 'terraform-provider-example_1.2.3_linux_amd64.zip';

  it('a zip deleted on the way: exit 3 naming it, nothing published', async () => {
    const m = await mirrored();
    fs.rmSync(path.join(m.folder, ZIP));
    const result = await m.publish();
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain(
      `${ZIP} is missing, though terraform-provider-example_1.2.3_mirror.json lists linux_amd64`,
    );
    expect(m.versions()).toBe(0);
  });

  it('a zip replaced by a link to /dev/zero: exit 3, the link not followed, nothing published', async () => {
    const m = await mirrored();
    fs.rmSync(path.join(m.folder, ZIP));
    fs.symlinkSync('/dev/zero', path.join(m.folder, ZIP));
    const result = await m.publish();
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain(`${ZIP} is a link to a character device, which is not followed`);
    expect(m.versions()).toBe(0);
  });

  it('a signature by another key than the record’s: published, with a warning naming both keys', async () => {
    const m = await mirrored();
    const sums = fs.readFileSync(path.join(m.folder, 'terraform-provider-example_1.2.3_SHA256SUMS'));
    const secret = fs.readFileSync(path.join(FIXTURES, 'keys', 'other.sec.asc'), 'utf8');
    fs.writeFileSync(
      path.join(m.folder, 'terraform-provider-example_1.2.3_SHA256SUMS.sig'),
      await signDetached(sums, secret),
    );
    fs.copyFileSync(
      path.join(FIXTURES, 'keys', 'other.pub.asc'),
      path.join(m.folder, 'terraform-provider-example_1.2.3_signing-key.asc'),
    );
    const other = fs.readFileSync(path.join(FIXTURES, 'keys', 'other.keyid'), 'utf8').trim();
    const result = await m.publish();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `terraform-provider-example_1.2.3_mirror.json records the origin's key ${SIGNER_KEY_ID}, but the signature is by key ${other}`,
    );
  });
});
