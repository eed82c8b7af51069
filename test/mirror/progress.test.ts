/**
 * How `provider mirror` talks while it works: on a terminal one progress rendering per version (its step, a
 * line per zip being downloaded, one overall line under them), then for a private registry publish's own
 * uploads on the same terminal; in CI plain lines without redraws; with `--json` only the JSON document.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest, publishFixture } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { ANSI, FAST } from '../commands/publish/helpers.js';
import { buildRelease, startOrigin } from './origin.js';

/** Three of the fixture release's platforms: a few zips, each downloaded slowly enough to be drawn. */
const MIRRORED = ['darwin_arm64', 'linux_amd64', 'windows_amd64'];
const emulator = emulatorPerTest();

/** `provider mirror acme/example --to-dir out` of 1.2.0, from an origin that sends each zip slowly. */
async function mirrorToDir(options: { tty: boolean }, ...args: string[]) {
  const origin = await startOrigin([await buildRelease('1.2.0', MIRRORED)], { slowZips: 300 });
  const cwd = tempRoot();
  return runCli(['mirror', 'acme/example', '--from', origin.url, '--to-dir', 'out', ...args], {
    cwd,
    homeDir: cwd,
    env: { NO_COLOR: '1' },
    tty: options.tty,
  });
}

describe('provider mirror progress', () => {
  it('renders the version’s step, its downloads and one overall line on a terminal', async () => {
    const result = await mirrorToDir({ tty: true });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(ANSI);
    expect(result.stderr).toContain(
      'Mirroring acme/example 1.2.0 (darwin_arm64, linux_amd64, windows_amd64)',
    );
    expect(result.stderr).toMatch(
      /terraform-provider-example_1\.2\.0_linux_amd64\.zip +\d+% +[\d.]+ (B|KiB)\/[\d.]+ (B|KiB) +[\d.]+ \S+\/s/,
    );
    expect(result.stderr).toMatch(/all 3 files +[0-3]\/3 done +[\d.]+ (B|KiB) +[\d.]+ \S+\/s/);
    expect(result.stderr).toMatch(
      /✓ Downloaded 3 files of acme\/example 1\.2\.0: [\d.]+ (B|KiB) in [\d.]+m?s/,
    );
    expect(result.stdout).not.toMatch(ANSI);
  });

  it('prints plain lines without a terminal', async () => {
    const result = await mirrorToDir({ tty: false });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toContain('Mirroring acme/example 1.2.0 (darwin_arm64, linux_amd64, windows_amd64)');
    expect(lines).toContain(
      'Downloading terraform-provider-example_1.2.0_linux_amd64.zip of acme/example 1.2.0',
    );
    expect(lines.filter((l) => l.startsWith('Downloaded 3 files of acme/example 1.2.0: '))).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\r/);
    expect(result.stderr).not.toMatch(ANSI);
  });

  it('prints only the JSON document with --json, on a terminal too', async () => {
    const result = await mirrorToDir({ tty: true }, '--json');
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ summary: { mirrored: 1 } });
    expect(result.stderr).not.toMatch(ANSI);
    expect(result.stderr).not.toMatch(/Mirroring|Download|Upload/);
  });

  it('shows publish’s uploads on the same terminal when mirroring into a private registry', async () => {
    const from = await emulator();
    await publishFixture(from, { platforms: ['linux_amd64'], uploads: ['sums', 'sig', 'linux_amd64'] });
    const to = await emulator({ organization: 'mirror-org' });
    const home = tempRoot();
    fs.mkdirSync(path.join(home, '.terraform.d'));
    const credentials = {
      [new URL(from.url).host]: { token: from.ownerToken },
      [new URL(to.url).host]: { token: to.ownerToken },
    };
    const file = path.join(home, '.terraform.d', 'credentials.tfrc.json');
    fs.writeFileSync(file, JSON.stringify({ credentials }));
    const args = ['--from', from.url, '--hostname', to.url, '--organization', to.organization];
    const result = await runCli(['mirror', `${from.organization}/example`, ...args], {
      cwd: home,
      homeDir: home,
      env: { ...FAST, NO_COLOR: '1' },
      tty: true,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(ANSI);
    expect(result.stderr).toMatch(/Mirroring \S+\/example 1\.2\.3 \(linux_amd64\)/);
    expect(result.stderr).toMatch(/Uploading 3 files/);
    expect(result.stderr).toMatch(/✓ Uploaded 3 files: /);
  });
});
