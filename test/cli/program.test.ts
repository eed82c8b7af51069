import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** A process's answer: exit status, stdout and stderr. */
interface Answer {
  status: number | null;
  stdout: string;
  stderr: string;
}

// The same program compiled file by file (dist/cli/main.js, tsc), run as a real process.
const MAIN = new URL('../../dist/cli/main.js', import.meta.url).href;
const fromSourcesArgs = (args: string[]): string[] => [
  '-e',
  `import(${JSON.stringify(MAIN)}).then((m) => m.main())`,
  '_',
  ...args,
];
const fromSources = (args: string[]): Answer => {
  const { status, stdout, stderr } = spawnSync(process.execPath, fromSourcesArgs(args), { encoding: 'utf8' });
  return { status, stdout, stderr };
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

  it('the shim runs the bundled program (or answers --version itself), which prints what the compiled sources print', () => {
    // bin/provider.cjs runs dist/bundle/ (scripts/bundle.mjs package); the same program compiled file by file
    // (dist/cli/main.js, tsc) must answer alike, both as real processes with stdout on a pipe.
    const bin = fileURLToPath(new URL('../../bin/provider.cjs', import.meta.url));
    for (const args of [
      ['--version'],
      ['verify', '--key'],
      ['versions', 'nope'],
      ['--json', 'verify', '--help'],
      ['--help'],
      ['versions', 'list', '-h'],
      ['help', 'verify'],
    ]) {
      const bundled = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
      const sources = fromSources(args);
      expect(bundled.stdout + bundled.stderr, args.join(' ')).not.toBe('');
      expect([bundled.status, bundled.stdout, bundled.stderr], args.join(' ')).toEqual([
        sources.status,
        sources.stdout,
        sources.stderr,
      ]);
    }
  });

  it('the shim answers --version alone itself, and runs the program for anything else, help included', () => {
    // A copy of the shim beside a program that only says it ran: which one answers each command line shows which
    // path the shim took.
    const root = tempDir('shim');
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'dist', 'bundle'), { recursive: true });
    copyFileSync(
      fileURLToPath(new URL('../../bin/provider.cjs', import.meta.url)),
      join(root, 'bin', 'provider.cjs'),
    );
    writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module', version: '9.9.9' }));
    // CommonJS, as the build makes it (scripts/bundle.mjs, toCommonJs).
    writeFileSync(join(root, 'dist', 'bundle', 'package.json'), '{ "type": "commonjs" }\n');
    writeFileSync(
      join(root, 'dist', 'bundle', 'provider.js'),
      'exports.main = async () => { process.stdout.write(`program ${process.argv.slice(2).join(" ")}\\n`); };\n',
    );
    // Node's compile cache goes to os.tmpdir()/node-compile-cache when the shim turns it on (and no
    // NODE_COMPILE_CACHE says where, which would also turn it on by itself).
    mkdirSync(join(root, 'tmp'));
    const env = { ...process.env, TMPDIR: join(root, 'tmp'), NODE_COMPILE_CACHE: undefined };
    const run = (...args: string[]): string =>
      execFileSync(process.execPath, [join(root, 'bin', 'provider.cjs'), ...args], { encoding: 'utf8', env });
    expect(run('--version')).toBe('9.9.9\n');
    expect(run('-V')).toBe('9.9.9\n');
    // Help in every spelling, and anything more than the version alone: the program answers.
    for (const args of [
      ['--help'],
      ['-h'],
      ['help'],
      ['verify', '--help'],
      ['help', 'verify'],
      ['versions', 'list', '-h'],
      ['verify', 'dir'],
      ['--version', 'x'],
      [],
    ]) {
      expect(run(...args), args.join(' ')).toBe(`program ${args.join(' ')}\n`);
    }
    // The program's files were compiled with Node's compile cache on (module.enableCompileCache in the shim).
    const cached = readdirSync(join(root, 'tmp', 'node-compile-cache'), { recursive: true });
    expect(cached.length).toBeGreaterThan(1);
    // Without the program (a clone before `npm run build`): a plain message, exit 2.
    rmSync(join(root, 'dist', 'bundle', 'provider.js'));
    const unbuilt = spawnSync(process.execPath, [join(root, 'bin', 'provider.cjs'), 'verify'], {
      encoding: 'utf8',
      env,
    });
    expect(unbuilt.status).toBe(2);
    expect(unbuilt.stderr).toMatch(
      /^provider: cannot load dist\/bundle\/provider\.js \(.*\); run npm run build\n$/,
    );
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

  it('refuses an unknown command with exit 2, and names the command it meant', async () => {
    const result = await runCli(['publsh']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("unknown command 'publsh'");
    expect(result.stderr).toContain('(Did you mean publish?)');
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
