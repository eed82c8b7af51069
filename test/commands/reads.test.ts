/** `versions list/show` and `platforms list/show` against the emulator: pagination, tables, JSON, file states. */
import { describe, expect, it } from 'vitest';
import {
  clients,
  createProvider,
  createVersion,
  emulatorPerTest,
  keyIdOf,
} from '../helpers/emulator/index.js';
import { normalise } from '../helpers/normalise.js';
import { ALL_PLATFORMS, cli, publishAll, requests, zipName, eventually } from './helpers.js';

const start = emulatorPerTest();

describe('provider versions list', () => {
  it('follows pagination to the end (150 versions, newest first) without a platform request per empty version, one tag read per version', async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    await createProvider(owner, emulator.organization, 'example');
    for (let i = 0; i < 150; i++) {
      await createVersion(owner, emulator.organization, 'example', {
        version: `1.${i}.0`,
        'key-id': keyIdOf('signer'),
        protocols: ['5.0'],
      });
    }
    emulator.requestLog.clear();
    const result = await cli(emulator, ['versions', 'list', '--json']);
    expect(result.exitCode).toBe(0);
    const doc = JSON.parse(result.stdout) as {
      versions: { version: string; files: string; complete: boolean }[];
    };
    expect(doc.versions).toHaveLength(150);
    expect(doc.versions[0]).toMatchObject({ version: '1.149.0', files: '0/2 + 0/0', complete: false });
    expect(doc.versions.at(-1)?.version).toBe('1.0.0');
    expect(new Set(doc.versions.map((v) => v.version)).size).toBe(150);
    const path = `/api/v2/organizations/${emulator.organization}/registry-providers/private/${emulator.organization}/example/versions`;
    // Two list pages, no platform request, and each version's tags read once (its document names them by link).
    const tagReads = (): string[] =>
      emulator.requestLog.records.filter((r) => r.path.endsWith('/tag-bindings')).map((r) => r.path);
    await eventually(() => expect(tagReads()).toHaveLength(150));
    expect(new Set(tagReads()).size).toBe(150);
    expect(
      emulator.requestLog.records
        .filter((r) => !r.path.endsWith('/tag-bindings'))
        .map((r) => `${r.method} ${r.path}?${r.query ?? ''}`),
    ).toEqual([
      `GET ${path}?page%5Bnumber%5D=1&page%5Bsize%5D=100`,
      `GET ${path}?page%5Bnumber%5D=2&page%5Bsize%5D=100`,
    ]);
  });

  it('prints an aligned table with a header on a terminal and plain tab-separated rows otherwise', async () => {
    const emulator = await start();
    await publishAll(emulator);
    await publishAll(emulator, {
      version: '1.3.0-beta.1',
      createProvider: false,
      addKey: false,
      platforms: ['linux_amd64'],
      uploads: ['sums'],
    });
    const tty = await cli(emulator, ['versions', 'list', '--no-color'], { tty: true });
    expect(tty.exitCode).toBe(0);
    expect(normalise(tty.stdout)).toBe(
      [
        'VERSION       PROTOCOLS  KEY ID            FILES      PLATFORMS                                                        TAGS  CREATED',
        `1.3.0-beta.1  6.0        ${keyIdOf('signer')}  1/2 + 0/1  linux_amd64                                                      -     <time>`,
        `1.2.3         6.0        ${keyIdOf('signer')}  2/2 + 5/5  ${ALL_PLATFORMS.join(',')}  -     <time>`,
        '',
      ].join('\n'),
    );
    const plain = await cli(emulator, ['versions', 'list']);
    expect(normalise(plain.stdout)).toBe(
      [
        `1.3.0-beta.1\t6.0\t${keyIdOf('signer')}\t1/2 + 0/1\tlinux_amd64\t-\t<time>`,
        `1.2.3\t6.0\t${keyIdOf('signer')}\t2/2 + 5/5\t${ALL_PLATFORMS.join(',')}\t-\t<time>`,
        '',
      ].join('\n'),
    );
    expect(plain.stdout).not.toContain('\u001b[');
  });

  it('says so on stderr when there are no versions, and names a missing provider (exit 4)', async () => {
    const emulator = await start();
    await createProvider(clients(emulator).owner, emulator.organization, 'example');
    const empty = await cli(emulator, ['versions', 'list']);
    expect(empty).toMatchObject({ exitCode: 0, stdout: '' });
    expect(empty.stderr).toContain('has no versions yet; publish one with provider publish <dir>.');
    const missing = await cli(emulator, ['versions', 'list'], { name: 'nothing' });
    expect(missing.exitCode).toBe(4);
    expect(missing.stderr).toContain('error: Provider example-org/nothing is not on');
  });
});

describe('provider versions show', () => {
  it("shows the version's file states: SHA256SUMS, signature and each binary", async () => {
    const emulator = await start();
    await publishAll(emulator, { uploads: ['sums', 'linux_amd64'] });
    const result = await cli(emulator, ['versions', 'show', 'v1.2.3']);
    expect(result.exitCode).toBe(0);
    expect(normalise(result.stdout)).toMatchInlineSnapshot(`
      "source     127.0.0.1:<port>/example-org/example
      version    1.2.3
      id         provver-<id>
      protocols  6.0
      key id     47D8C49E6154CCB3
      created    <time>
      updated    <time>
      files      1/2 + 1/5 (incomplete: run provider publish again to upload what is missing)
      tags       -

      SHA256SUMS	-	yes	-
      SHA256SUMS.sig	-	no	-
      terraform-provider-example_1.2.3_darwin_amd64.zip	darwin_amd64	no	6546e445d34f62f1f89802234b3cc606bab3d40c16324db7e4666dc71e22d0ea
      terraform-provider-example_1.2.3_darwin_arm64.zip	darwin_arm64	no	f76b591723b07b6d33ca40d0ea8bda14e9f61465177cff8960afa7036b11e70c
      terraform-provider-example_1.2.3_linux_amd64.zip	linux_amd64	yes	bd7aeba4436e5e545dc00256fad6bb120ca43487ae0cffc7af808f11a7f7e70e
      terraform-provider-example_1.2.3_linux_arm64.zip	linux_arm64	no	26693bd82fa2206850a0a09f9f23114df999cd316b99374f1d646c80a4ad1269
      terraform-provider-example_1.2.3_windows_amd64.zip	windows_amd64	no	24c86909e1e1942f1012eca63a7b4f6264ad469e839d5135bf9b6e8d1a13617a
      "
    `);
  });

  it('prints one JSON document without any link', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const result = await cli(emulator, ['versions', 'show', '1.2.3', '--json']);
    const doc = JSON.parse(result.stdout) as {
      ok: boolean;
      version: { files: string; complete: boolean; shasumsUploaded: boolean; shasumsSigUploaded: boolean };
      platforms: { binaryUploaded: boolean }[];
    };
    expect(doc.ok).toBe(true);
    expect(doc.version).toMatchObject({
      files: '2/2 + 5/5',
      complete: true,
      shasumsUploaded: true,
      shasumsSigUploaded: true,
    });
    expect(doc.platforms).toHaveLength(5);
    expect(result.stdout).not.toMatch(/_archivist|links/);
  });

  it('exit 4 for an absent version, exit 2 for a malformed one (no request)', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const absent = await cli(emulator, ['versions', 'show', '2.0.0']);
    expect(absent.exitCode).toBe(4);
    expect(absent.stderr).toContain('error: Version 2.0.0 of example-org/example is not on');
    expect(absent.stderr).toContain(
      'hint: provider versions list --name example shows the versions there are',
    );
    const bad = await cli(emulator, ['versions', 'show', '1.2']);
    expect(bad.exitCode).toBe(2);
    expect(requests(emulator).some((r) => r.endsWith('/versions/1.2'))).toBe(false);
  });
});

describe('provider platforms', () => {
  it('lists the platforms of a version as a table or JSON', async () => {
    const emulator = await start();
    await publishAll(emulator, { uploads: ['sums', 'sig', 'darwin_amd64'] });
    const tty = await cli(emulator, ['platforms', 'list', '1.2.3', '--no-color'], { tty: true });
    const lines = normalise(tty.stdout).split('\n');
    expect(lines[0]).toBe(
      'PLATFORM       FILENAME                                            SHASUM                                                            UPLOADED  ID',
    );
    expect(lines[1]).toMatch(
      /^darwin_amd64 {3}terraform-provider-example_1\.2\.3_darwin_amd64\.zip {3}[0-9a-f]{64} {2}yes {7}provpltfrm-<id>$/,
    );
    expect(lines[5]).toMatch(/^windows_amd64 {2}.* no {8}provpltfrm-<id>$/);
    const json = await cli(emulator, ['platforms', 'list', '1.2.3', '--json']);
    const doc = JSON.parse(json.stdout) as {
      platforms: { os: string; arch: string; binaryUploaded: boolean }[];
    };
    expect(doc.platforms.map((p) => `${p.os}_${p.arch}:${p.binaryUploaded}`)).toEqual([
      'darwin_amd64:true',
      'darwin_arm64:false',
      'linux_amd64:false',
      'linux_arm64:false',
      'windows_amd64:false',
    ]);
  });

  it('shows one platform, written os_arch or os/arch', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const a = await cli(emulator, ['platforms', 'show', '1.2.3', 'linux_amd64']);
    const b = await cli(emulator, ['platforms', 'show', '1.2.3', 'linux/amd64']);
    expect(a.exitCode).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(normalise(a.stdout)).toMatch(
      new RegExp(
        `^source    127\\.0\\.0\\.1:<port>/example-org/example\nversion   1\\.2\\.3\nplatform  linux_amd64\nid        provpltfrm-<id>\nfilename  ${zipName('linux_amd64').replaceAll('.', '\\.')}\nshasum    [0-9a-f]{64}\nuploaded  yes\n$`,
      ),
    );
  });

  it('names the platforms there are when the one asked for is absent, and refuses a malformed one', async () => {
    const emulator = await start();
    await publishAll(emulator, { platforms: ['linux_amd64', 'darwin_arm64'] });
    const absent = await cli(emulator, ['platforms', 'show', '1.2.3', 'freebsd_arm']);
    expect(absent.exitCode).toBe(4);
    expect(absent.stderr).toContain('error: Platform freebsd_arm of example 1.2.3 is not on');
    expect(absent.stderr).toContain('hint: Version 1.2.3 has darwin_arm64, linux_amd64.');
    const bad = await cli(emulator, ['platforms', 'show', '1.2.3', 'linux-amd64']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('error: platform "linux-amd64" is not <os>_<arch>');
    const noVersion = await cli(emulator, ['platforms', 'list', '3.0.0']);
    expect(noVersion.exitCode).toBe(4);
    expect(noVersion.stderr).toContain('error: Version 3.0.0 of example-org/example is not on');
  });
});
