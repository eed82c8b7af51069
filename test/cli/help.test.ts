import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_GROUPS, EXIT_CODES, commandPath, exampleLine, examplesOf } from '../../src/cli/help.js';
import { ExitCode } from '../../src/errors.js';
import { quietProgram, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/provider.cjs', import.meta.url));

// Every command and subcommand of the program, the program first: a command added later is walked too.
function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap((c) => allCommands(c))];
}

const commands = allCommands(quietProgram(root));
const words = (c: Command): string[] => commandPath(c).split(' ').slice(1);

// The last block of a help text: from its last heading line ("Something:" at the start of a line) to the end.
function lastBlock(text: string): string {
  const headings = [...text.matchAll(/^\S[^\n]*:\n/gm)];
  return text.slice(headings[headings.length - 1]!.index);
}

describe('every command teaches by example', () => {
  it('walks the whole program, groups and subcommands included', () => {
    const paths = commands.map(commandPath);
    for (const path of [
      'provider',
      'provider publish',
      'provider verify',
      'provider mirror',
      'provider versions list',
      'provider versions show',
      'provider platforms list',
      'provider platforms show',
      'provider check',
      'provider delete',
      'provider gpg-keys list',
      'provider gpg-keys add',
      'provider runtask serve',
      'provider runtask callback',
      'provider runtask send',
      'provider emulate',
      'provider completion',
    ]) {
      expect(paths).toContain(path);
    }
  });

  it.each(commands.map((c) => [commandPath(c), c] as const))(
    '`%s --help` ends with an Examples block of two or three examples',
    async (_path, command) => {
      const list = examplesOf(command);
      expect(list.length).toBeGreaterThanOrEqual(2);
      expect(list.length).toBeLessThanOrEqual(3);
      const result = await runCli([...words(command), '--help']);
      expect(result.exitCode).toBe(0);
      const block = lastBlock(result.stdout);
      expect(block.startsWith('Examples:\n')).toBe(true);
      for (const example of list) expect(block).toContain(`\n  $ ${exampleLine(example)}\n`);
      expect(block.endsWith('\n')).toBe(true);
    },
  );

  it.each(commands.flatMap((c) => examplesOf(c).map((e) => [exampleLine(e), c, e.args] as const)))(
    '`%s` parses: its command, arguments and flags exist',
    async (_line, command, args) => {
      // The real program with every action replaced by a recorder: commander parses the example exactly as it
      // would for a user (unknown flag, missing or extra argument → error), and nothing runs.
      const probe = quietProgram(root);
      let ran: string | undefined;
      for (const c of allCommands(probe)) {
        c.action(() => {
          ran = commandPath(c);
        });
      }
      await probe.parseAsync([...args], { from: 'user' });
      // The example runs the command it documents, or one of its subcommands for a group.
      expect(ran === commandPath(command) || ran?.startsWith(`${commandPath(command)} `)).toBe(true);
      expect(args.slice(0, words(command).length)).toEqual(words(command));
    },
  );

  it('examples that need a registry say how to reach the emulator they run against', async () => {
    const result = await runCli(['publish', '--help']);
    const block = lastBlock(result.stdout);
    expect(block).toContain('`provider emulate --port 8080`');
    expect(block).toContain('export TFE_HOSTNAME=http://127.0.0.1:8080 TFE_ORGANIZATION=example-org\n');
    expect(block).toContain('export TFE_TOKEN=<the owners token it printed>\n');
  });

  it('every example on the fixture or the emulator works as written, in this repository', async () => {
    // The real binary against a real emulator process, with the set-up the Examples block prints (its URL is
    // the one this emulator got). Run in the order a user meets the commands; deletes last. Examples that
    // serve forever (emulate, runtask serve) or need a run task request are parsed above, not run here; mirror's
    // read a public registry (test/mirror/ runs them against a loopback origin).
    const runnable = commands
      .flatMap((c) => examplesOf(c))
      .filter((e) => !['emulate', 'runtask', 'mirror'].includes(e.args[0]!) && !e.env);
    const ordered = [
      ...runnable.filter((e) => e.args[0] !== 'delete'),
      ...runnable.filter((e) => e.args[0] === 'delete'),
    ];
    expect(ordered.length).toBeGreaterThanOrEqual(20);
    const data = tempDir('examples');
    const emulator = spawn(process.execPath, [bin, 'emulate', '--port', '0', '--json', '--data-dir', data], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [line] = (await once(createInterface({ input: emulator.stdout }), 'line')) as [string];
      const { url, ownerToken, organization } = JSON.parse(line) as Record<string, string>;
      expect(organization).toBe('example-org');
      const env = {
        PATH: process.env.PATH,
        HOME: data,
        TFE_HOSTNAME: url,
        TFE_ORGANIZATION: organization,
        TFE_TOKEN: ownerToken,
      };
      const outcomes = ordered.map((example) => {
        const child = spawnSync(process.execPath, [bin, ...example.args], {
          cwd: root,
          env,
          encoding: 'utf8',
        });
        return { line: exampleLine(example), exit: child.status, stderr: child.stderr.slice(0, 500) };
      });
      const expected = ordered.map((example) => ({ line: exampleLine(example), exit: example.exit ?? 0 }));
      expect(outcomes.map(({ line, exit }) => ({ line, exit }))).toEqual(expected);
    } finally {
      emulator.kill('SIGTERM');
      await once(emulator, 'exit');
    }
    // About 25 processes one after another, each a second or two on a busy 2-core machine.
  }, 300_000);
});

describe('provider --help', () => {
  it('lists the commands grouped by task, in the order a user meets them', async () => {
    const { stdout } = await runCli(['--help']);
    const headings = [...stdout.matchAll(/^(\S[^\n]*:)$/gm)].map((m) => m[1]);
    const groups = Object.values(COMMAND_GROUPS);
    expect(headings.filter((h) => (groups as readonly string[]).includes(h!))).toEqual(groups);
    const under = (heading: string): string[] => {
      const start = stdout.indexOf(`\n${heading}\n`) + heading.length + 2;
      const end = stdout.indexOf('\n\n', start);
      return [...stdout.slice(start, end).matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!);
    };
    expect(under(COMMAND_GROUPS.publish)).toEqual(['publish', 'verify', 'mirror']);
    expect(under(COMMAND_GROUPS.read)).toEqual(['versions', 'platforms', 'check']);
    expect(under(COMMAND_GROUPS.lock)).toEqual(['lock', 'approve']);
    expect(under(COMMAND_GROUPS.cleanup)).toEqual(['delete', 'gpg-keys']);
    expect(under(COMMAND_GROUPS.runtask)).toEqual(['runtask']);
    expect(under(COMMAND_GROUPS.local)).toEqual(['emulate']);
    expect(under(COMMAND_GROUPS.shell)).toEqual(['completion']);
    expect(stdout).not.toMatch(/^Commands:$/m);
  });

  it('lists every exit code the program can end with, as README.md does', async () => {
    const { stdout } = await runCli(['--help']);
    const start = stdout.indexOf('\nExit codes:\n');
    expect(start).toBeGreaterThan(0);
    const listed = [...stdout.slice(start).matchAll(/^ {2}(\d+) {2,}\S/gm)].map((m) => Number(m[1]));
    const codes = [...new Set(Object.values(ExitCode))].sort((a, b) => a - b);
    expect(listed.slice(0, codes.length)).toEqual(codes);
    expect(EXIT_CODES.map(([code]) => code)).toEqual(codes);
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.indexOf('\n## Exit codes\n');
    const table = readme.slice(section, readme.indexOf('\n## ', section + 1));
    expect([...table.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]))).toEqual(codes);
  });

  it('on a terminal (a pseudo-terminal, 120 columns) shows the groups and the exit codes too', () => {
    // `script` runs the real binary on a pty: the shim sees a terminal that is not 80 columns wide and loads
    // the program, which wraps for the terminal's width.
    const out = execFileSync(
      'script',
      [
        '-qfec',
        `stty cols 120 rows 50; ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} --help`,
        '/dev/null',
      ],
      { encoding: 'utf8', cwd: root, env: { ...process.env, NO_COLOR: '1' } },
    ).replace(/\r\n/g, '\n');
    let at = 0;
    for (const heading of [...Object.values(COMMAND_GROUPS), 'Exit codes:', 'Examples:']) {
      const found = out.indexOf(`\n${heading}\n`, at);
      expect(found, heading).toBeGreaterThan(at);
      at = found;
    }
    expect(out).toContain('  130  interrupted');
  });
});
