/** `provider delete` against the emulator: what it shows, when it asks, what it sends, and what it refuses. */
import { describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import type { Emulator } from '../../src/emulator/server.js';
import { fixedConfirm, type Confirm } from '../../src/ui/prompt.js';
import { Capture } from '../helpers/cli.js';
import { normalise } from '../helpers/normalise.js';
import type { CliResult } from '../helpers/result.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { ALL_PLATFORMS, cli, publishAll, requests, zipName, eventually } from './helpers.js';
import { tempRoot } from '../helpers/tmp.js';

const start = emulatorPerTest();

async function published(options: Parameters<typeof start>[0] = {}): Promise<Emulator> {
  const emulator = await start(options);
  await publishAll(emulator);
  return emulator;
}

function deletes(emulator: Emulator): string[] {
  return requests(emulator).filter((r) => r.startsWith('DELETE '));
}

function platformsLeft(emulator: Emulator): string[] {
  return emulator.store.data.platforms.map((p) => `${p.os}_${p.arch}`).sort();
}

/** Runs the CLI on a terminal whose person answers through `confirm`. */
async function onTerminal(emulator: Emulator, argv: string[], confirm: Confirm): Promise<CliResult> {
  const stdout = new Capture(true);
  const stderr = new Capture(true);
  const exitCode = await run({
    argv: [...argv, '--hostname', emulator.url, '--organization', emulator.organization, '--name', 'example'],
    env: { TFE_TOKEN: emulator.ownerToken, NO_COLOR: '1' },
    cwd: tempRoot(),
    homeDir: tempRoot(),
    stdout,
    stderr,
    stdinIsTTY: true,
    signal: new AbortController().signal,
    confirm,
  });
  return { exitCode, stdout: stdout.text, stderr: stderr.text };
}

const base = (e: Emulator) =>
  `/api/v2/organizations/${e.organization}/registry-providers/private/${e.organization}/example/versions/1.2.3`;

describe('provider delete', () => {
  it('without a terminal refuses without --yes (exit 2), shows what would go, and sends no DELETE', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['delete', '1.2.3']);
    expect(result.exitCode).toBe(2);
    expect(normalise(result.stderr)).toMatchInlineSnapshot(`
      "Will delete from 127.0.0.1:<port>/example-org/example:
        version 1.2.3 (key id 47D8C49E6154CCB3, files 2/2 + 5/5)
        and with it 5 platforms and their files:
          platform darwin_amd64   terraform-provider-example_1.2.3_darwin_amd64.zip
          platform darwin_arm64   terraform-provider-example_1.2.3_darwin_arm64.zip
          platform linux_amd64    terraform-provider-example_1.2.3_linux_amd64.zip
          platform linux_arm64    terraform-provider-example_1.2.3_linux_arm64.zip
          platform windows_amd64  terraform-provider-example_1.2.3_windows_amd64.zip
      error: Refusing to delete version 1.2.3 of 127.0.0.1:<port>/example-org/example with its 5 platforms without confirmation: there is no terminal to ask on
        hint: Pass --yes to delete without asking (CI and scripts), or --dry-run to only see what would be deleted.
      "
    `);
    expect(deletes(emulator)).toEqual([]);
    expect(platformsLeft(emulator)).toEqual(ALL_PLATFORMS);
  });

  it('deletes the version (its platforms go with it) with --yes', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['delete', '1.2.3', '--yes']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(
      /^✓ Deleted version 1\.2\.3 of .*\/example-org\/example and its 5 platforms\n$/,
    );
    await eventually(() => expect(deletes(emulator)).toEqual([`DELETE ${base(emulator)}`]));
    expect(emulator.store.data.versions).toEqual([]);
    expect(platformsLeft(emulator)).toEqual([]);
  });

  it('says each deletion once, as it happens: on stdout, with the success glyph; the plan alone on stderr', async () => {
    const emulator = await published();
    const version = await cli(emulator, ['delete', '1.2.3', '--yes']);
    expect(version.exitCode).toBe(0);
    expect(normalise(version.stdout)).toMatchInlineSnapshot(`
      "✓ Deleted version 1.2.3 of 127.0.0.1:<port>/example-org/example and its 5 platforms
      "
    `);
    expect(normalise(version.stderr)).toMatchInlineSnapshot(`
      "Will delete from 127.0.0.1:<port>/example-org/example:
        version 1.2.3 (key id 47D8C49E6154CCB3, files 2/2 + 5/5)
        and with it 5 platforms and their files:
          platform darwin_amd64   terraform-provider-example_1.2.3_darwin_amd64.zip
          platform darwin_arm64   terraform-provider-example_1.2.3_darwin_arm64.zip
          platform linux_amd64    terraform-provider-example_1.2.3_linux_amd64.zip
          platform linux_arm64    terraform-provider-example_1.2.3_linux_arm64.zip
          platform windows_amd64  terraform-provider-example_1.2.3_windows_amd64.zip
      "
    `);
  });

  it('on a terminal, after yes: one line per platform deleted or not there, each once, on stdout', async () => {
    const emulator = await published();
    const result = await onTerminal(
      emulator,
      ['delete', '1.2.3', '--platform', 'linux_amd64,darwin_arm64,plan9_amd64', '--ignore-missing'],
      fixedConfirm(true),
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(normalise(result.stdout)).toMatchInlineSnapshot(`
      "✓ Deleted platform linux_amd64 of 127.0.0.1:<port>/example-org/example 1.2.3
      ✓ Deleted platform darwin_arm64 of 127.0.0.1:<port>/example-org/example 1.2.3
      Not there (ignored): platform plan9_amd64 of 127.0.0.1:<port>/example-org/example 1.2.3
      "
    `);
    expect(normalise(result.stderr)).toMatchInlineSnapshot(`
      "Will delete from 127.0.0.1:<port>/example-org/example 1.2.3:
        platform linux_amd64   terraform-provider-example_1.2.3_linux_amd64.zip
        platform darwin_arm64  terraform-provider-example_1.2.3_darwin_arm64.zip
        (platform plan9_amd64 is not there: skipped)
      "
    `);
  });

  it('--platform deletes only the platforms named (os_arch or os/arch, repeatable)', async () => {
    const emulator = await published();
    const result = await cli(emulator, [
      'delete',
      '1.2.3',
      '--platform',
      'linux_amd64',
      '--platform',
      'darwin/arm64',
      '-y',
    ]);
    expect(result.exitCode).toBe(0);
    await eventually(() =>
      expect(deletes(emulator)).toEqual([
        `DELETE ${base(emulator)}/platforms/linux/amd64`,
        `DELETE ${base(emulator)}/platforms/darwin/arm64`,
      ]),
    );
    expect(platformsLeft(emulator)).toEqual(['darwin_amd64', 'linux_arm64', 'windows_amd64']);
    expect(emulator.store.data.versions).toHaveLength(1);
    expect(result.stdout).toContain('Deleted platform linux_amd64 of ');
  });

  it('--dry-run shows exactly what would go and deletes nothing', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['delete', '1.2.3', '--platform', 'windows_amd64', '--dry-run']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^Would delete from .*/example-org/example 1\\.2\\.3:\n  platform windows_amd64  ${zipName('windows_amd64').replaceAll('.', '\\.')}\nDry run: nothing was deleted\\.\n$`,
      ),
    );
    expect(deletes(emulator)).toEqual([]);
    const json = await cli(emulator, ['delete', '1.2.3', '--dry-run', '--json']);
    const doc = JSON.parse(json.stdout) as {
      dryRun: boolean;
      targets: { kind: string; outcome: string; platforms: string[] }[];
    };
    expect(doc.dryRun).toBe(true);
    expect(doc.targets).toEqual([
      { kind: 'version', version: '1.2.3', platforms: ALL_PLATFORMS, outcome: 'would-delete' },
    ]);
    expect(deletes(emulator)).toEqual([]);
  });

  it('asks on a terminal (default no) and deletes only on yes', async () => {
    const emulator = await published();
    const no = fixedConfirm(false);
    const declined = await onTerminal(emulator, ['delete', '1.2.3'], no);
    expect(declined.exitCode).toBe(0);
    expect(no.questions).toEqual([
      expect.stringMatching(
        /^Delete version 1\.2\.3 of .*\/example-org\/example with its 5 platforms\? This cannot be undone\.$/,
      ),
    ]);
    expect(declined.stderr).toContain('Nothing was deleted.');
    expect(deletes(emulator)).toEqual([]);

    let asked: { question: string; default: boolean | undefined } | undefined;
    const yes: Confirm = (question, options) => {
      asked = { question, default: options?.default };
      return Promise.resolve(true);
    };
    const accepted = await onTerminal(emulator, ['delete', '1.2.3', '--platform', 'linux_arm64'], yes);
    expect(accepted.exitCode).toBe(0);
    expect(asked?.default).toBe(false);
    expect(asked?.question).toMatch(/^Delete platform linux_arm64 of .* 1\.2\.3\?/);
    await eventually(() =>
      expect(deletes(emulator)).toEqual([`DELETE ${base(emulator)}/platforms/linux/arm64`]),
    );
  });

  it('an absent target is exit 4 (nothing deleted) unless --ignore-missing', async () => {
    const emulator = await published();
    const absent = await cli(emulator, ['delete', '9.0.0', '--yes']);
    expect(absent.exitCode).toBe(4);
    expect(absent.stderr).toContain('error: Version 9.0.0 of example-org/example is not on');
    expect(absent.stderr).toContain('hint: Pass --ignore-missing');
    const partly = await cli(emulator, [
      'delete',
      '1.2.3',
      '--platform',
      'linux_amd64',
      '--platform',
      'freebsd_arm',
      '--yes',
    ]);
    expect(partly.exitCode).toBe(4);
    expect(partly.stderr).toContain('error: Platform freebsd_arm of example 1.2.3 is not on');
    expect(deletes(emulator)).toEqual([]);

    const ignored = await cli(emulator, ['delete', '9.0.0', '--ignore-missing']);
    expect(ignored.exitCode).toBe(0);
    expect(ignored.stderr).toContain('Nothing to delete: version 9.0.0 is not on');
    const mixed = await cli(emulator, [
      'delete',
      '1.2.3',
      '--platform',
      'linux_amd64,freebsd_arm',
      '--ignore-missing',
      '--yes',
      '--json',
    ]);
    expect(mixed.exitCode).toBe(0);
    const doc = JSON.parse(mixed.stdout) as { targets: { platform: string; outcome: string }[] };
    expect(doc.targets.map((t) => `${t.platform}:${t.outcome}`)).toEqual([
      'linux_amd64:deleted',
      'freebsd_arm:missing',
    ]);
    await eventually(() =>
      expect(deletes(emulator)).toEqual([`DELETE ${base(emulator)}/platforms/linux/amd64`]),
    );
  });

  it('a member token gets exit 4 with the owners team / Manage Private Registry hint, and no DELETE is sent', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['delete', '1.2.3', '--yes'], { token: emulator.memberToken });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('error: The token may not delete version 1.2.3 of ');
    expect(result.stderr).toContain('the registry reports can-delete: false for this token');
    expect(result.stderr).toContain(
      'owners team, or of a team with the "Manage Private Registry" permission',
    );
    expect(deletes(emulator)).toEqual([]);
    expect(platformsLeft(emulator)).toEqual(ALL_PLATFORMS);
  });

  it('a 404 to the DELETE right after a successful read is called a permissions problem, even with --ignore-missing', async () => {
    const emulator = await published({
      faults: [{ method: 'DELETE', path: '^/api/v2/.*/versions/1\\.2\\.3$', status: 404 }],
    });
    const result = await cli(emulator, ['delete', '1.2.3', '--yes', '--ignore-missing']);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(
      'the registry answered 404 to the DELETE right after showing it to this token, which most likely means it lacks the permission',
    );
    expect(result.stderr).toContain('"Manage Private Registry"');
    await eventually(() => expect(deletes(emulator)).toEqual([`DELETE ${base(emulator)}`]));
  });

  it('a 404 to a DELETE that took effect (the answer was lost) is re-read and reported as already gone', async () => {
    const emulator = await published({
      faults: [{ method: 'DELETE', path: '^/api/v2/.*/platforms/linux/amd64$', status: 404, after: true }],
    });
    const result = await cli(emulator, ['delete', '1.2.3', '--platform', 'linux_amd64', '--yes']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(
      /^Already gone: platform linux_amd64 of .* 1\.2\.3 \(deleted meanwhile by someone else\)\n$/,
    );
    expect(platformsLeft(emulator)).not.toContain('linux_amd64');
  });

  it('refuses a malformed --platform before any request', async () => {
    const emulator = await published();
    const result = await cli(emulator, ['delete', '1.2.3', '--platform', 'linux-amd64', '--yes']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: --platform "linux-amd64" is not <os>_<arch>');
    expect(requests(emulator)).toEqual([]);
  });
});
