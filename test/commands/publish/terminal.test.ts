/**
 * What a person sees while a long publish runs, captured as they would see it: the built bin on a real
 * pseudo-terminal (`script` from util-linux), and the same bin in CI (stderr a pipe, `CI=true`). The release
 * is generated (6 platforms of 3 MiB) and the emulator paces every connection (`--bandwidth`), so the uploads
 * take long enough for the live display to draw them.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { formatBytes } from '../../../src/terraform/names.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { PLATFORMS as FIXTURE_PLATFORMS } from '../../helpers/platforms.js';
import { emulatorPerTest } from '../../helpers/emulator/index.js';
import type { CliResult } from '../../helpers/result.js';
import { ANSI, FAST, expectNoSecrets } from './helpers.js';
import { tempRoot } from '../../helpers/tmp.js';

const BIN = path.join(REPO_ROOT, 'bin', 'provider.cjs');
const SIGNER = path.join(REPO_ROOT, 'fixtures', 'keys', 'signer.pub.asc');
const MiB = 1024 * 1024;
/** The fixture release's platforms and one more: six zips to upload. */
const PLATFORMS = [...FIXTURE_PLATFORMS, 'freebsd_amd64'];
/** 8 MB/s per connection: each 3 MiB zip takes about 0.4 s, the whole upload about a second. */
const BANDWIDTH = 8_000_000;
const emulator = emulatorPerTest();

/** Every success, failure and warning mark a terminal library might draw; only `✓` and `✗` are ours. */
const FOREIGN_MARKS = /[✔✖⚠ℹ√×‼]/;
const ESC = String.fromCharCode(27);

let release: string;
/** Every byte uploaded (the zips, SHA256SUMS and its signature), as the progress lines write it. */
let total: string;

/**
 * What a terminal shows after `raw`: a small screen that follows the sequences ora and we write (cursor up and
 * down, to a column, clear the line; colours and modes are ignored). `frames` holds the screen as it stood at
 * the end of every synchronised update (`ESC[?2026l`): the frames ora drew.
 */
function replay(raw: string): { screen: string[]; frames: string[][] } {
  const rows: string[][] = [[]];
  const frames: string[][] = [];
  let row = 0;
  let col = 0;
  const text = (): string[] => rows.map((r) => r.join('').trimEnd());
  const pattern = new RegExp(`${ESC}\\[([0-9;?]*)([A-Za-z])|\\r|\\n|[^${ESC}\\r\\n]`, 'gu');
  for (const match of raw.matchAll(pattern)) {
    const [token, params = '', command] = match;
    const n = Number(params) || 1;
    if (token === '\r') col = 0;
    else if (token === '\n') row++;
    else if (command === undefined) {
      const line = (rows[row] ??= []);
      while (line.length < col) line.push(' ');
      line[col++] = token;
    } else if (command === 'A') row = Math.max(0, row - n);
    else if (command === 'B') row += n;
    else if (command === 'G') col = n - 1;
    else if (command === 'K') rows[row] = params === '2' ? [] : (rows[row] ?? []).slice(0, col);
    else if (command === 'l' && params === '?2026') frames.push(text());
    for (let r = 0; r <= row; r++) rows[r] ??= [];
  }
  return { screen: text(), frames };
}

/** Runs `provider publish <generated release>` against the emulator, on a pseudo-terminal or in CI. */
function publishBin(e: Emulator, how: 'terminal' | 'ci'): Promise<CliResult> {
  const args = ['publish', release, '--key', SIGNER, '--hostname', e.url, '--organization', e.organization];
  const env = { PATH: process.env.PATH ?? '', HOME: tempRoot(), TFE_TOKEN: e.ownerToken, ...FAST };
  delete (env as Record<string, string | undefined>).NO_COLOR;
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  const child =
    how === 'terminal'
      ? // A terminal of 120 columns, as tmux would give; `script` runs the command on a new pseudo-terminal.
        spawn('script', ['-qfec', `stty cols 120 rows 40; ${quoted}`, '/dev/null'], {
          cwd: tempRoot(),
          env: { ...env, TERM: 'xterm-256color' },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn(process.execPath, [BIN, ...args], {
          cwd: tempRoot(),
          env: { ...env, CI: 'true' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      expectNoSecrets(stdout + stderr, e, `the output of publish (${how})`);
      resolve({ exitCode: code, stdout, stderr });
    }),
  );
}

describe('provider publish, as seen on a terminal and in CI', () => {
  beforeAll(async () => {
    if (!fs.existsSync(path.join(REPO_ROOT, 'dist/bundle/provider.js'))) {
      spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'ignore' });
    }
    // The benchmarks' release generator: stored zips of random bytes, SHA256SUMS signed with the test key.
    const generator = pathToFileURL(path.join(REPO_ROOT, 'bench', 'lib', 'release.mjs')).href;
    const { makeRelease } = (await import(generator)) as {
      makeRelease: (
        dir: string,
        options: { version: string; size: number; platforms: string[] },
      ) => Promise<{ dir: string }>;
    };
    release = (
      await makeRelease(path.join(tempRoot(), 'dist'), {
        version: '2.0.0',
        size: 3 * MiB,
        platforms: PLATFORMS,
      })
    ).dir;
    const sent = fs
      .readdirSync(release)
      .filter((f) => !f.endsWith('_manifest.json'))
      .reduce((sum, f) => sum + fs.statSync(path.join(release, f)).size, 0);
    total = formatBytes(sent);
  }, 120_000);

  it('on a pseudo-terminal: an overall line (total bytes, rate, time left) under the per-file lines, one glyph set', async () => {
    const e = await emulator({ bandwidth: BANDWIDTH });
    const result = await publishBin(e, 'terminal');
    expect(result.exitCode, result.stdout).toBe(0);
    const raw = result.stdout; // script merges the terminal's stdout and stderr
    expect(raw).toMatch(ANSI); // a live display, redrawn in place
    expect(raw).not.toMatch(FOREIGN_MARKS);
    const { screen: rows, frames } = replay(raw);
    const screen = rows.join('\n');
    // While the zips were in flight, every frame ends with the overall line, under the per-file lines.
    const overall = new RegExp(
      `^ {2}all 8 files +\\d+% +[\\d.]+ (B|KiB|MiB)/${total.replace('.', '\\.')} +[\\d.]+ (B|KiB|MiB)/s +(\\d+s|\\d+m \\d\\ds) left$`,
    );
    const drawn = frames.filter((f) => f.some((line) => overall.test(line)));
    expect(drawn.length, frames.map((f) => f.join('\n')).join('\n----\n')).toBeGreaterThan(0);
    for (const frame of drawn) {
      const lines = frame.filter((line) => line !== '');
      expect(lines.at(-1)).toMatch(overall);
      expect(lines.at(-2)).toMatch(
        /^ {2}terraform-provider-example_2\.0\.0_\S+ +\d+% +\S+ \S+\/\S+ \S+ +\S+ \S+\/s$/,
      );
    }
    // The final screen: one line per finished file, the total, and the summary, all with the same glyph.
    for (const platform of PLATFORMS) {
      expect(screen).toMatch(
        new RegExp(
          `^✓ terraform-provider-example_2\\.0\\.0_${platform}\\.zip \\(3\\.0 MiB, [\\d.]+ (KiB|MiB)/s\\)$`,
          'm',
        ),
      );
    }
    expect(screen).toMatch(
      new RegExp(
        `^✓ Uploaded 8 files: ${total.replace('.', '\\.')} in [\\d.]+m?s \\([\\d.]+ (KiB|MiB)/s\\)$`,
        'm',
      ),
    );
    expect(screen).toMatch(/^✓ Created version 2\.0\.0 /m);
    expect(screen).toMatch(/^✓ example 2\.0\.0 published: 6 platforms \(6 created, 6 uploaded\)/m);
    expect(screen).not.toMatch(/all 8 files/); // the overall line is gone once the total is written
    expect(screen).not.toMatch(FOREIGN_MARKS);
  }, 60_000);

  it('in CI (CI=true, stderr a pipe): one plain line per finished file and a total line, no redraws', async () => {
    const e = await emulator({ bandwidth: BANDWIDTH });
    const result = await publishBin(e, 'ci');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(ANSI);
    expect(result.stderr).not.toMatch(/\r/);
    expect(result.stderr + result.stdout).not.toMatch(FOREIGN_MARKS);
    const lines = result.stderr.trim().split('\n');
    const files = lines.filter((l) => /^Uploaded terraform-provider-example_2\.0\.0_/.test(l));
    expect(files).toHaveLength(8);
    for (const platform of PLATFORMS) {
      expect(lines.filter((l) => l.includes(`_${platform}.zip`))).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Uploaded terraform-provider-example_2\\.0\\.0_${platform}\\.zip \\(3\\.0 MiB, [\\d.]+ (KiB|MiB)/s\\)$`,
          ),
        ),
      ]);
    }
    const totals = lines.filter((l) => l.startsWith('Uploaded 8 files'));
    expect(totals).toEqual([
      expect.stringMatching(/^Uploaded 8 files: [\d.]+ MiB in [\d.]+m?s \([\d.]+ (KiB|MiB)\/s\)$/),
    ]);
    // The total comes after every file line.
    expect(lines.indexOf(totals[0]!)).toBeGreaterThan(lines.indexOf(files.at(-1)!));
    expect(result.stdout).toMatch(/^✓ example 2\.0\.0 published: 6 platforms \(6 created, 6 uploaded\)/m);
  }, 60_000);
});
