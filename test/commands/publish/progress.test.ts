/**
 * How publish talks while it works: spinners and byte progress on a terminal, plain lines in CI, nothing
 * with --json or --quiet, and under GitHub Actions a Markdown table in the step summary and `::error::`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulatorPerTest, keyIdOf, publishFixture } from '../../helpers/emulator/index.js';
import { ANSI, publish } from './helpers.js';
import { tempRoot } from '../../helpers/tmp.js';

const emulator = emulatorPerTest();

describe('provider publish progress', () => {
  it('shows spinners and per-upload byte progress (percent, bytes, rate) on a terminal', async () => {
    // One slow upload keeps a transfer on screen long enough for the spinner to draw it.
    const e = await emulator({ faults: [{ method: 'PUT', path: '/_archivist/**', delayMs: 250, times: 1 }] });
    const result = await publish(e, [], { tty: true });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(ANSI); // cursor movement: a live display
    expect(result.stderr).toMatch(/Uploading 7 files \(all at once\)/);
    expect(result.stderr).toMatch(
      /terraform-provider-example_1\.2\.3_\S+ +\d+% +[\d.]+ (B|KiB)\/[\d.]+ (B|KiB) +[\d.]+ (B|KiB|MiB)\/s/,
    );
    expect(result.stderr).toMatch(
      /✓ terraform-provider-example_1\.2\.3_linux_amd64\.zip \(2\.2 KiB, [\d.]+ \S+\/s\)/,
    );
    expect(result.stdout).toContain('consumer check passed');
    expect(result.stdout).not.toMatch(ANSI);
  });

  it('prints one plain line per event without a terminal', async () => {
    const e = await emulator();
    const result = await publish(e);
    const lines = result.stderr.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('Uploaded terraform-provider-example_1.2.3_'))).toHaveLength(7);
    expect(lines.filter((l) => l.startsWith('Created platform '))).toHaveLength(5);
    expect(result.stderr).not.toMatch(/\r/);
    expect(result.stderr).not.toMatch(ANSI);
  });

  it('prints nothing but the document with --json, and only results with --quiet', async () => {
    const e = await emulator();
    const json = await publish(e, ['--json'], { tty: true });
    expect(json.exitCode).toBe(0);
    expect(json.stderr).not.toMatch(/Uploaded|Creat/);
    expect(json.stderr).not.toMatch(ANSI);
    const f = await emulator();
    const quiet = await publish(f, ['--quiet'], { tty: true });
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toContain('published: 5 platforms');
  });

  it('appends a Markdown table to $GITHUB_STEP_SUMMARY under GitHub Actions', async () => {
    const e = await emulator();
    await publishFixture(e, { platforms: ['linux_amd64'], uploads: ['sums', 'sig', 'linux_amd64'] });
    const summary = path.join(tempRoot(), 'summary.md');
    fs.writeFileSync(summary, '# earlier step\n');
    const env = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary };
    expect((await publish(e, [], { env })).exitCode).toBe(0);
    const text = fs.readFileSync(summary, 'utf8').replaceAll(new URL(e.url).host, '<host>');
    expect(text).toBe(
      [
        '# earlier step',
        '### provider publish: example 1.2.3',
        '',
        `Provider \`example-org/example\` on <host>, key \`${keyIdOf('signer')}\`, protocols 6.0.`,
        '',
        '| Platform | File | Size | SHA-256 | Result |',
        '| --- | --- | ---: | --- | --- |',
        '| darwin_amd64 | `terraform-provider-example_1.2.3_darwin_amd64.zip` | 2.2 KiB | `6546e445d34f` | created, uploaded |',
        '| darwin_arm64 | `terraform-provider-example_1.2.3_darwin_arm64.zip` | 2.2 KiB | `f76b591723b0` | created, uploaded |',
        '| linux_amd64 | `terraform-provider-example_1.2.3_linux_amd64.zip` | 2.2 KiB | `bd7aeba4436e` | already there |',
        '| linux_arm64 | `terraform-provider-example_1.2.3_linux_arm64.zip` | 2.2 KiB | `26693bd82fa2` | created, uploaded |',
        '| windows_amd64 | `terraform-provider-example_1.2.3_windows_amd64.zip` | 2.2 KiB | `24c86909e1e1` | created, uploaded |',
        '| | `terraform-provider-example_1.2.3_SHA256SUMS` | 692 B | | already there |',
        '| | `terraform-provider-example_1.2.3_SHA256SUMS.sig` | 438 B | | already there |',
        '',
        '',
      ].join('\n'),
    );
  });

  it('turns a failure into a GitHub ::error:: annotation', async () => {
    const e = await emulator();
    const result = await publish(e, ['--no-create-provider'], { env: { GITHUB_ACTIONS: 'true' } });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toMatch(
      /^::error::Provider example-org\/example does not exist on .* — Run without --no-create-provider/m,
    );
  });
});
