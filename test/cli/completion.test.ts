/**
 * `provider completion <shell>`: the command, and its scripts. bash's runs for real: the built program as
 * `provider` on the PATH (a shim, as npm installs it), the script sourced from `provider completion bash`, and
 * its function called as bash calls it on a Tab (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT). zsh and fish
 * are not on this machine: their scripts are checked as text (they call `provider __complete` with the words
 * and obey each directive), and kept as small as the protocol allows.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCRIPTS } from '../../src/commands/completion.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { ensureBuilt } from '../helpers/spawn-cli.js';
import { tempDir } from '../helpers/tmp.js';

/** A word as bash reads it back unchanged. */
const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

describe('provider completion <shell>', () => {
  it.each(['bash', 'zsh', 'fish'] as const)('prints the %s script on stdout, exit 0', async (shell) => {
    const result = await runCli(['completion', shell]);
    expect(result).toEqual({ exitCode: 0, stdout: SCRIPTS[shell], stderr: '' });
  });

  it('gives the script in a JSON document with --json', async () => {
    const result = await runCli(['completion', 'fish', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ shell: 'fish', script: SCRIPTS.fish });
  });

  it('refuses another shell as a usage error (exit 2), naming the shells it has', async () => {
    const result = await runCli(['completion', 'csh']);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("command-argument value 'csh' is invalid for argument 'shell'");
    expect(result.stderr).toContain('Allowed choices are bash, zsh, fish.');
  });

  it('refuses no shell at all (exit 2)', async () => {
    const result = await runCli(['completion']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("missing required argument 'shell'");
  });

  it('says in its help how to install each script', async () => {
    const { stdout } = await runCli(['completion', '--help']);
    expect(stdout).toContain('source <(provider completion bash)');
    expect(stdout).toContain('provider completion zsh > "${fpath[1]}/_provider"');
    expect(stdout).toContain('provider completion fish > ~/.config/fish/completions/provider.fish');
    expect(stdout).toContain('(choices: "bash", "zsh", "fish")');
  });

  it('is listed under Shell: in provider --help', async () => {
    const { stdout } = await runCli(['--help']);
    expect(stdout).toMatch(/\nShell:\n {2}completion <shell> +print the completion script of a shell/);
  });
});

describe('the bash script, run by bash', () => {
  let shims: string;
  beforeAll(() => {
    ensureBuilt();
    // `provider` on the PATH, as npm links it: the built program.
    shims = tempDir('path', { until: 'file' });
    const shim = join(shims, 'provider');
    writeFileSync(
      shim,
      `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(join(REPO_ROOT, 'bin', 'provider.cjs'))} "$@"\n`,
    );
    chmodSync(shim, 0o755);
  });

  /**
   * What each Tab completes to, in one bash that sourced `provider completion bash`: a case is the line up to the
   * cursor and the words bash split it into (at blanks, and at `=` and `:` as COMP_WORDBREAKS says), the last
   * one the current word. Returns COMPREPLY of each, and what bash registered for `provider`.
   */
  function tabs(
    cwd: string,
    cases: Array<[line: string, words?: string[]]>,
  ): { registered: string; replies: string[][] } {
    const calls = cases.map(([line, words = line.split(' ')]) =>
      ['tab', quote(line), ...words.map(quote)].join(' '),
    );
    const script = [
      'source <(provider completion bash) || exit 1',
      'complete -p provider',
      'tab() {',
      '  COMP_LINE=$1 COMP_POINT=${#1}',
      '  shift',
      '  COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMPREPLY=()',
      '  _provider_completion',
      '  echo "${COMPREPLY[*]}"',
      '}',
      ...calls,
    ].join('\n');
    const child = spawnSync('bash', ['-c', script], {
      cwd,
      encoding: 'utf8',
      // A home of its own: what provider keeps there (its compile cache) is not among the names bash completes.
      env: { PATH: `${shims}:${process.env.PATH ?? ''}`, HOME: tempDir('completion-home') },
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const [registered = '', ...lines] = child.stdout.split('\n');
    return { registered, replies: lines.slice(0, cases.length).map((l) => (l === '' ? [] : l.split(' '))) };
  }

  it('completes commands, subcommands, flags and os_arch values through provider __complete', () => {
    const cwd = tempDir('commands');
    const { registered, replies } = tabs(cwd, [
      ['provider ver'],
      ['provider '],
      ['provider runtask se'],
      ['provider versions '],
      ['provider lock --pla'],
      ['provider lock --platform darwin_'],
      ['provider lock --platform l'],
      ['provider delete 1.2.3 --platform linux_amd64 --pla'],
      ['provider completion '],
      ['provider --organization my-org --json lock --dry'],
      ['provider check '],
    ]);
    expect(registered).toBe('complete -F _provider_completion provider');
    expect(replies).toEqual([
      ['verify', 'versions'],
      [
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
      ],
      ['serve', 'send'],
      ['list', 'show', 'help'],
      ['--platform'],
      ['darwin_amd64', 'darwin_arm64'],
      ['linux_386', 'linux_amd64', 'linux_arm', 'linux_arm64'],
      ['--platform'],
      ['bash', 'zsh', 'fish'],
      ['--dry-run'],
      [],
    ]);
  });

  it('completes --flag=value, which bash splits at = and :, as the part after the =', () => {
    const cwd = tempDir('equals');
    const { replies } = tabs(cwd, [
      ['provider lock --platform=darwin_', ['provider', 'lock', '--platform', '=', 'darwin_']],
      ['provider lock --platform=win', ['provider', 'lock', '--platform', '=', 'win']],
      ['provider lock --platform=', ['provider', 'lock', '--platform', '=']],
      [
        'provider --hostname http://127.0.0.1:8080 lock --pla',
        ['provider', '--hostname', 'http', ':', '//127.0.0.1', ':', '8080', 'lock', '--pla'],
      ],
    ]);
    expect(replies).toEqual([
      ['darwin_amd64', 'darwin_arm64'],
      ['windows_386', 'windows_amd64', 'windows_arm64'],
      expect.arrayContaining(['darwin_arm64', 'linux_amd64', 'windows_amd64']),
      ['--platform'],
    ]);
  });

  it('lets bash complete file names for a file, folder names for a folder', () => {
    const cwd = tempDir('files');
    mkdirSync(join(cwd, 'release'));
    mkdirSync(join(cwd, 'keys'));
    writeFileSync(join(cwd, 'key.asc'), '');
    writeFileSync(join(cwd, 'readme.txt'), '');
    const { replies } = tabs(cwd, [
      ['provider gpg-keys add ke'],
      ['provider lock --key k'],
      ['provider lock --key=k', ['provider', 'lock', '--key', '=', 'k']],
      ['provider lock '],
      ['provider lock r'],
      ['provider publish --dry-run k'],
    ]);
    expect(replies.map((r) => r.sort())).toEqual([
      ['key.asc', 'keys'],
      ['key.asc', 'keys'],
      ['key.asc', 'keys'],
      ['keys', 'release'],
      ['release'],
      ['keys'],
    ]);
  });

  it('is valid bash (bash -n)', () => {
    const child = spawnSync('bash', ['-n'], { input: SCRIPTS.bash, encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
  });
});

describe('the zsh and fish scripts (those shells are not installed here: checked as text)', () => {
  it('zsh: a #compdef function that passes the words to the cursor, the current one last', () => {
    const zsh = SCRIPTS.zsh;
    expect(zsh.startsWith('#compdef provider\n')).toBe(true);
    expect(zsh).toContain('provider __complete "${(@)words[2,CURRENT-1]}" "$PREFIX" 2>/dev/null');
    // Autoloaded from the fpath it runs itself; sourced, it registers itself.
    expect(zsh).toContain(
      'if [[ ${funcstack[1]} == _provider ]]; then _provider "$@"; else compdef _provider provider; fi',
    );
  });

  it('zsh: obeys each directive, and shows value<TAB>description as _describe wants it', () => {
    const zsh = SCRIPTS.zsh;
    expect(zsh).toContain("case ${lines[-1]} in\n    :files) compset -P '*='; _files; return ;;");
    expect(zsh).toContain(":dirs) compset -P '*='; _files -/; return ;;");
    // Everything but the directive line; a colon in a value escaped, the tab made _describe's colon.
    expect(zsh).toContain('for line in "${(@)lines[1,-2]}"; do');
    expect(zsh).toContain(`candidates+=("\${value//:/\\\\:}\${line[\${#value}+1,-1]/$'\\t'/:}")`);
    expect(zsh).toContain('_describe -t values provider candidates');
  });

  it('fish: passes the words before the cursor and the current one, even empty', () => {
    const fish = SCRIPTS.fish;
    expect(fish).toContain('set -l words (commandline -opc)\n    set -e words[1]');
    expect(fish).toContain('set -l current (commandline -ct)');
    expect(fish).toContain('set -l lines (provider __complete $words "$current" 2>/dev/null)');
    expect(fish).toContain("complete -c provider -f -a '(__provider_complete)'");
  });

  it('fish: obeys each directive; its own completion reads value<TAB>description', () => {
    const fish = SCRIPTS.fish;
    expect(fish).toContain('switch "$lines[-1]"');
    expect(fish).toContain('case :files\n            __fish_complete_path "$current"');
    expect(fish).toContain('case :dirs\n            __fish_complete_directories "$current"');
    expect(fish).toContain(
      "set -e lines[-1]\n            for line in $lines\n                printf '%s\\n' $line",
    );
  });

  it.each(['bash', 'zsh', 'fish'] as const)(
    '%s: handles every directive the engine prints, and says how to install it',
    (shell) => {
      for (const directive of [':files', ':dirs']) expect(SCRIPTS[shell]).toContain(directive);
      expect(SCRIPTS[shell]).toContain(`provider completion ${shell}`);
    },
  );
});
