/**
 * The program's command type (src/cli/command.ts) and the compact example form (src/cli/help.ts): a core is
 * imported only when its command runs and gets the options `toOptions` made, a registry core gets the run's
 * session, the shared flag groups declare what the commands used to spell out, and an example written as the help
 * prints it becomes the same data as before (a line written otherwise is refused).
 */
import type { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { ProgramCommand, flagsOnly, withVersion, type CommandHandler } from '../../src/cli/command.js';
import { exampleLine, examplesOf, local, onEmulator, shellWords } from '../../src/cli/help.js';
import type { RunContext } from '../../src/commands/context.js';
import type { Session } from '../../src/commands/session.js';

const context = { cwd: '/nowhere' } as RunContext;

// What src/cli/main.ts does around an action, without the output sink: flags, arguments, the handler's code.
function program(codes: number[] = []): ProgramCommand {
  const wire =
    <T>(handler: CommandHandler<T>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args[args.length - 1] as Command;
      const positional = args.slice(0, -2).filter((a): a is string => typeof a === 'string');
      codes.push((await handler(context, command.optsWithGlobals(), positional)) ?? 0);
    };
  return new ProgramCommand('provider', wire).exitOverride();
}

describe('ProgramCommand', () => {
  it('imports a core only when its command runs, and hands it what toOptions made of the run', async () => {
    const core = vi.fn((_context: RunContext, options: { version: string | undefined; download?: boolean }) =>
      Promise.resolve(options.download ? 7 : 0),
    );
    const load = vi.fn(() => Promise.resolve(core));
    const codes: number[] = [];
    const root = program(codes);
    root.command('check').argument('<version>').option('--download').runs(load, withVersion);
    expect(load).not.toHaveBeenCalled();
    await root.parseAsync(['check', '1.2.3', '--download'], { from: 'user' });
    expect(load).toHaveBeenCalledTimes(1);
    expect(core).toHaveBeenCalledWith(context, { download: true, version: '1.2.3' });
    expect(codes).toEqual([7]);
  });

  it('gives a registry core the run’s session, tuned as its options ask', async () => {
    const seen: { session?: Session; options?: unknown } = {};
    const core = (_context: RunContext, session: Session, options: { tuned: number }) => {
      Object.assign(seen, { session, options });
      return Promise.resolve(0);
    };
    const tuning = vi.fn((options: { tuned: number }) => ({ timeout: { response: options.tuned } }));
    const root = program();
    root.command('publish').runsWithSession(
      () => Promise.resolve(core),
      () => Promise.resolve({ tuned: 5 }),
      tuning,
    );
    await root.parseAsync(['publish'], { from: 'user' });
    expect(seen.options).toEqual({ tuned: 5 });
    expect(tuning).toHaveBeenCalledWith({ tuned: 5 });
    expect(typeof seen.session?.registry).toBe('function');
  });

  it('passes the flags as they are with flagsOnly', async () => {
    const core = vi.fn((_context: RunContext, _options: unknown) => Promise.resolve(0));
    const root = program();
    root
      .command('emulate')
      .option('--strict')
      .runs(() => Promise.resolve(core), flagsOnly);
    await root.parseAsync(['emulate', '--strict'], { from: 'user' });
    expect(core).toHaveBeenCalledWith(context, { strict: true });
  });

  it('declares the listen and HMAC key flags the servers share, with their defaults', () => {
    const root = program();
    const emulate = root.command('emulate').listens('0');
    const send = root.command('send').hmacKey().listens('8080', 'the local platform');
    const described = (c: Command) =>
      c.options.map((o): unknown[] => [o.flags, o.description, o.defaultValue]);
    expect(described(emulate)).toEqual([
      ['--host <address>', 'address to listen on', '127.0.0.1'],
      ['--port <port>', 'port to listen on (0 picks a free one)', '0'],
    ]);
    expect(described(send)).toEqual([
      ['--hmac-key-file <file>', 'file holding the run task HMAC key', undefined],
      ['--hmac-key-env <name>', 'variable holding the HMAC key (default RUNTASK_HMAC_KEY)', undefined],
      ['--host <address>', 'address the local platform listens on', '127.0.0.1'],
      ['--port <port>', 'port of the local platform (0 picks a free one)', '8080'],
    ]);
  });

  it('keeps the examples for the tests, local ones and emulator ones in the order given', () => {
    const root = program();
    const verify = root
      .command('verify')
      .examples(local({ 'offline: exit 3': 'verify dir --offline' }), onEmulator({ online: 'verify dir' }));
    expect(examplesOf(verify)).toEqual([
      { what: 'offline: exit 3', exit: 3, args: ['verify', 'dir', '--offline'] },
      { emulator: true, what: 'online', args: ['verify', 'dir'] },
    ]);
  });
});

describe('the compact example form', () => {
  it('reads variables, quoted words, placeholders and an exit code as the help prints them', () => {
    const [serve, callback] = local({
      'a check (exit 4 when it fails)': `KEY=k runtask serve --exec '! grep -q "x" it'\\''s'`,
      'by hand': 'RUNTASK_ACCESS_TOKEN=<token> runtask callback --url <callback url> --message Scanning',
    });
    expect(serve).toEqual({
      env: 'KEY=k',
      what: 'a check (exit 4 when it fails)',
      exit: 4,
      args: ['runtask', 'serve', '--exec', `! grep -q "x" it's`],
    });
    expect(callback!.args).toEqual([
      'runtask',
      'callback',
      '--url',
      '<callback url>',
      '--message',
      'Scanning',
    ]);
    expect(exampleLine(serve!)).toBe(`KEY=k provider runtask serve --exec '! grep -q "x" it'\\''s'`);
  });

  it('refuses a line the help would print otherwise', () => {
    expect(() => local({ 'two spaces': 'check  1.2.3' })).toThrow(/not written as the help prints it/);
    expect(() => local({ 'double quotes': 'serve --exec "a b"' })).toThrow(/provider serve --exec/);
    expect(() => onEmulator({ 'needless quotes': "check '1.2.3'" })).toThrow(/check 1\.2\.3$/);
  });

  it('reads back every word as exampleLine quotes it', () => {
    const words = ['plain', 'two words', `it's`, '', 'a\\b', '$HOME', '<placeholder>', 'x=<y z>'];
    const line = exampleLine({ what: '', args: words }).replace(/^provider /, '');
    expect(shellWords(line)).toEqual(words);
  });
});
