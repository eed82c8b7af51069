import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('the program', () => {
  it('prints its version on stdout and exits 0', async () => {
    const result = await runCli(['--version']);
    expect(result).toEqual({ exitCode: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('prints help with every command group on stdout and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Usage: provider');
    expect(result.stdout).toContain('emulate');
    expect(result.stdout).toContain('--hostname');
    expect(result.stderr).toBe('');
  });

  it('the shim runs the bundled program (or answers --help and --version itself), which prints what the compiled sources print', () => {
    // bin/provider.js runs dist/bundle/ (scripts/bundle.mjs package); the same program compiled file by file
    // (dist/cli/main.js, tsc) must answer alike, both as real processes with stdout on a pipe.
    const bin = fileURLToPath(new URL('../../bin/provider.js', import.meta.url));
    const main = new URL('../../dist/cli/main.js', import.meta.url).href;
    const fromSources = (args: string[]): string =>
      execFileSync(
        process.execPath,
        ['-e', `import(${JSON.stringify(main)}).then((m) => m.main())`, '_', ...args],
        { encoding: 'utf8' },
      );
    for (const args of [['--help'], ['-h'], ['--version'], ['verify', '--help'], ['help', 'versions']]) {
      const bundled = execFileSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
      expect(bundled, args.join(' ')).not.toBe('');
      expect(bundled, args.join(' ')).toBe(fromSources(args));
    }
    // The shim answers `--help` alone from the text the build rendered: it must be the program's own help.
    expect(readFileSync(new URL('../../dist/help.txt', import.meta.url), 'utf8')).toBe(
      fromSources(['--help']),
    );
  });

  it('the shim prints dist/help.txt for `--help` alone without loading the program', () => {
    // A copy of the shim beside a help text of our own and no program at all: only the fast path can answer.
    const root = tempDir('shim');
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'dist'));
    copyFileSync(
      fileURLToPath(new URL('../../bin/provider.js', import.meta.url)),
      join(root, 'bin', 'provider.js'),
    );
    writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module', version: '9.9.9' }));
    writeFileSync(join(root, 'dist', 'help.txt'), 'the built help\n');
    const run = (flag: string): string =>
      execFileSync(process.execPath, [join(root, 'bin', 'provider.js'), flag], { encoding: 'utf8' });
    expect(run('--help')).toBe('the built help\n');
    expect(run('-h')).toBe('the built help\n');
    expect(run('--version')).toBe('9.9.9\n');
  });

  it('prints a command help', async () => {
    const result = await runCli(['emulate', '--help']);
    expect(result.exitCode).toBe(0);
    for (const flag of [
      '--port',
      '--data-dir',
      '--flag-delay',
      '--rate-limit',
      '--faults',
      '--request-log',
      '--strict',
    ]) {
      expect(result.stdout).toContain(flag);
    }
  });

  it('refuses an unknown option with exit 2 and says what to do', async () => {
    const result = await runCli(['emulate', '--no-such-flag']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("unknown option '--no-such-flag'");
    expect(result.stderr).toContain('--help');
  });

  it('refuses an unknown command with exit 2', async () => {
    const result = await runCli(['publsh']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("unknown command 'publsh'");
  });

  it('reports a usage error as one JSON document with --json, exit 2', async () => {
    const result = await runCli(['emulate', '--port', 'eighty', '--json']);
    expect(result.exitCode).toBe(2);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      ok: false,
      error: {
        code: 'usage',
        message: '--port must be a whole number between 0 and 65535, got "eighty"',
        hint: null,
        details: null,
      },
    });
  });

  it('reports a usage error in words on stderr without --json, nothing on stdout', async () => {
    const result = await runCli(['emulate', '--flag-delay', 'soon']);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/error: .*--flag-delay.*soon/);
  });
});

describe('--version', () => {
  it('prints the version when it comes before any command, even after other global flags', async () => {
    const result = await runCli(['--no-color', '--version']);
    expect(result).toEqual({ exitCode: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('prints the version with -V', async () => {
    expect((await runCli(['-V'])).stdout).toBe(`${pkg.version}\n`);
  });
});
