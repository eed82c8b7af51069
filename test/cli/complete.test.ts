/**
 * The completion engine (src/cli/complete.ts) against the real program `buildProgram` makes: what one Tab offers
 * after the words typed so far, and the lines `provider __complete` prints for the shell scripts.
 */
import { describe, expect, it } from 'vitest';
import { complete, formatCompletion, type Completion } from '../../src/cli/complete.js';
import { commonPlatformNames, knownPlatformNames } from '../../src/terraform/names.js';
import { quietProgram, runCli } from '../helpers/cli.js';

/** What a Tab offers after `provider <line>` (split at spaces; a trailing space starts an empty word). */
function tab(line: string): Completion {
  return complete(quietProgram(), line.split(' '));
}

/** The candidates' values alone. */
function values(line: string): string[] {
  return tab(line).candidates.map((c) => c.value);
}

describe('commands', () => {
  it('offers every visible top-level command, help and completion included, with its description', () => {
    const { candidates, directive } = tab('');
    expect(candidates.map((c) => c.value)).toEqual([
      'publish',
      'verify',
      'mirror',
      'versions',
      'platforms',
      'check',
      'lock',
      'approve',
      'delete',
      'gpg-keys',
      'runtask',
      'emulate',
      'completion',
      'help',
    ]);
    expect(directive).toBe('done');
    expect(candidates.find((c) => c.value === 'lock')?.description).toMatch(/^write the provider's block/);
  });

  it('offers those starting with what was typed', () => {
    expect(values('ver')).toEqual(['verify', 'versions']);
    expect(values('comp')).toEqual(['completion']);
  });

  it('never offers the hidden __complete', () => {
    expect(values('')).not.toContain('__complete');
    expect(values('_')).toEqual([]);
    expect(values('__')).toEqual([]);
  });

  it('offers the subcommands of a group', () => {
    expect(values('runtask ')).toEqual(['serve', 'callback', 'send', 'help']);
    expect(values('runtask s')).toEqual(['serve', 'send']);
    expect(values('versions ')).toEqual(['list', 'show', 'help']);
    expect(values('versions l')).toEqual(['list']);
  });

  it('finds the subcommand after global options and their values', () => {
    expect(values('--organization my-org --json runtask se')).toEqual(['serve', 'send']);
  });

  it('offers lock check once its first letters are typed (lock takes a folder of its own), then its flags', () => {
    expect(values('lock ch')).toEqual(['check']);
    expect(values('lock check --al')).toEqual(['--allow']);
    expect(tab('lock check ')).toEqual({ candidates: [], directive: 'dirs' });
  });

  it('after help, offers the commands it can explain (not help itself), once', () => {
    expect(values('help ')).toContain('lock');
    expect(values('help ')).not.toContain('help');
    expect(values('help ve')).toEqual(['verify', 'versions']);
    expect(values('versions help ')).toEqual(['list', 'show']);
    expect(values('help lock ')).toEqual([]);
  });

  it('offers nothing for an argument it cannot know (a version)', () => {
    expect(tab('check ')).toEqual({ candidates: [], directive: 'done' });
    expect(tab('versions show ')).toEqual({ candidates: [], directive: 'done' });
  });

  it('offers nothing after the last argument', () => {
    expect(tab('completion bash ')).toEqual({ candidates: [], directive: 'done' });
  });
});

describe('flags', () => {
  it('offers the command’s own flags, then the global ones, when the word starts with -', () => {
    const offered = values('lock -');
    for (const flag of ['--lock-file', '--platform', '--dry-run', '--key', '--registry', '--help']) {
      expect(offered).toContain(flag);
    }
    for (const flag of ['--organization', '--hostname', '--token', '--json', '--quiet', '--no-color', '-V']) {
      expect(offered).toContain(flag);
    }
    expect(offered.indexOf('--registry')).toBeLessThan(offered.indexOf('--organization'));
    // Long names only, but for the flag that has none; each once (lock's --help and the program's).
    expect(offered).not.toContain('-q');
    expect(offered).not.toContain('-h');
    expect(new Set(offered).size).toBe(offered.length);
  });

  it('offers the flags starting with what was typed, described', () => {
    expect(tab('lock --pla')).toEqual({
      candidates: [
        {
          value: '--platform',
          description:
            'record h1: for this platform only (repeatable; default: every platform of the release)',
        },
      ],
      directive: 'done',
    });
    expect(values('runtask serve --platform')).toEqual(['--platform-host']);
    expect(values('runtask send --no')).toEqual(['--no-outcomes', '--no-color']);
  });

  it('offers the flags of a subcommand, not of its siblings', () => {
    expect(values('versions list --')).toContain('--tag');
    expect(values('versions show --')).not.toContain('--tag');
  });

  it('leaves out a flag already given, unless it is repeatable', () => {
    expect(values('lock --dry-run --dr')).toEqual([]);
    expect(values('lock --json --js')).toEqual([]);
    expect(values('lock --platform linux_amd64 --pla')).toEqual(['--platform']);
    expect(values('versions list --tag a=b --t')).toEqual(['--tag', '--token']);
  });

  it('offers no flags after --: a word starting with - is an argument there', () => {
    expect(tab('lock -- -')).toEqual({ candidates: [], directive: 'dirs' });
    expect(tab('completion -- ')).toEqual({
      candidates: [{ value: 'bash' }, { value: 'zsh' }, { value: 'fish' }],
      directive: 'done',
    });
  });
});

describe('values', () => {
  it('an os_arch flag: the recommended platforms starting with what was typed', () => {
    expect(values('lock --platform l')).toEqual(['linux_386', 'linux_amd64', 'linux_arm', 'linux_arm64']);
    expect(values('lock --platform darwin_')).toEqual(['darwin_amd64', 'darwin_arm64']);
    expect(values('delete 1.2.3 --platform win')).toEqual(['windows_386', 'windows_amd64', 'windows_arm64']);
    expect(values('lock --platform ')).toEqual(commonPlatformNames());
  });

  it('an os_arch flag: all of Go’s list when no recommended platform matches', () => {
    expect(values('lock --platform openbsd_')).toEqual(
      knownPlatformNames().filter((p) => p.startsWith('openbsd_')),
    );
    expect(values('lock --platform linux_r')).toEqual(['linux_riscv64']);
    expect(values('lock --platform plan10')).toEqual([]);
  });

  it('--flag=value is completed as one word', () => {
    expect(values('lock --platform=darwin_')).toEqual(['--platform=darwin_amd64', '--platform=darwin_arm64']);
    expect(tab('lock --dry-run=')).toEqual({ candidates: [], directive: 'done' });
  });

  it('the <platform> argument of platforms show is an os_arch too', () => {
    expect(values('platforms show 1.2.3 darwin')).toEqual(['darwin_amd64', 'darwin_arm64']);
  });

  it('an argument with choices: the choices', () => {
    expect(values('completion ')).toEqual(['bash', 'zsh', 'fish']);
    expect(values('completion f')).toEqual(['fish']);
  });

  it('a folder argument or flag: no candidates, the shell completes folder names', () => {
    expect(tab('lock ')).toEqual({ candidates: [], directive: 'dirs' });
    expect(tab('publish ')).toEqual({ candidates: [], directive: 'dirs' });
    expect(tab('verify --offline ')).toEqual({ candidates: [], directive: 'dirs' });
    expect(tab('runtask serve --state-dir ')).toEqual({ candidates: [], directive: 'dirs' });
    expect(tab('emulate --data-dir da')).toEqual({ candidates: [], directive: 'dirs' });
  });

  it('a file argument or flag: no candidates, the shell completes file names', () => {
    expect(tab('gpg-keys add ')).toEqual({ candidates: [], directive: 'files' });
    expect(tab('lock --key ')).toEqual({ candidates: [], directive: 'files' });
    expect(tab('lock --lock-file ')).toEqual({ candidates: [], directive: 'files' });
    expect(tab('--config ')).toEqual({ candidates: [], directive: 'files' });
    expect(tab('emulate --faults f')).toEqual({ candidates: [], directive: 'files' });
    expect(tab('lock --key=fi')).toEqual({ candidates: [], directive: 'files' });
  });

  it('a value it cannot know (a name, a duration): nothing, not even files', () => {
    expect(tab('--organization ')).toEqual({ candidates: [], directive: 'done' });
    expect(tab('runtask serve --timeout ')).toEqual({ candidates: [], directive: 'done' });
  });

  it('a flag’s value is not taken for the subcommand or an argument', () => {
    expect(tab('lock --key lock ')).toEqual({ candidates: [], directive: 'dirs' });
    expect(tab('lock some-dir ')).toEqual({ candidates: [], directive: 'done' });
  });
});

describe('provider __complete', () => {
  it('prints a candidate a line, with its description after a tab, then the directive', async () => {
    const result = await runCli(['__complete', 'lock', '--pla']);
    expect(result).toEqual({
      exitCode: 0,
      stdout:
        '--platform\trecord h1: for this platform only (repeatable; default: every platform of the release)\n' +
        ':done\n',
      stderr: '',
    });
  });

  it('prints the directive alone when the shell completes files', async () => {
    expect((await runCli(['__complete', 'gpg-keys', 'add', ''])).stdout).toBe(':files\n');
    expect((await runCli(['__complete', 'lock', ''])).stdout).toBe(':dirs\n');
  });

  it('takes the words as they are: the program’s own flags among them are completed, not obeyed', async () => {
    expect(await runCli(['__complete', '--help'])).toEqual({
      exitCode: 0,
      stdout: '--help\t' + 'display help for command\n:done\n',
      stderr: '',
    });
    const version = await runCli(['__complete', '-V', '']);
    expect(version.stdout).toContain('\nlock\t');
    const named = await runCli(['__complete', '--name', 'x', 'completion', '']);
    expect(named.stdout).toBe('bash\nzsh\nfish\n:done\n');
  });

  it('with no words, offers the commands', async () => {
    const { stdout } = await runCli(['__complete']);
    expect(stdout.split('\n').map((l) => l.split('\t')[0])).toContain('publish');
  });

  it('is not listed in the help', async () => {
    expect((await runCli(['--help'])).stdout).not.toContain('__complete');
  });

  it('needs no token, configuration or network: an empty environment and no home', async () => {
    const result = await runCli(['__complete', 'versions', ''], { env: {}, homeDir: '/nonexistent' });
    expect(result.stdout).toMatch(/^list\t/);
  });

  it('formats a completion: descriptions after a tab, none when empty', () => {
    expect(
      formatCompletion({
        candidates: [{ value: 'a', description: 'the a' }, { value: 'b' }],
        directive: 'done',
      }),
    ).toBe('a\tthe a\nb\n:done\n');
    expect(formatCompletion({ candidates: [], directive: 'files' })).toBe(':files\n');
  });
});
