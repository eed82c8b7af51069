/**
 * The program's command type: commander's `Command` with what every command of this program declares alike, each
 * in one place: how its action reaches its core (imported only when the command runs, so that `provider --help`
 * loads no core), with the run's registry session for the cores that need one; its examples; and the flags
 * several commands share (where a server listens, where the run task HMAC key comes from).
 */
import { Command } from 'commander';
import type { RunContext } from '../commands/context.js';
import type { ClientTuning, SessionCore } from '../commands/session.js';
import type { GlobalFlags } from '../config/index.js';
import { withExamples, type Example } from './help.js';

/** A command action: gets the run's context and the merged flags, returns an exit code (usually 0). */
export type CommandHandler<T> = (
  context: RunContext,
  flags: T & GlobalFlags,
  args: string[],
) => Promise<number | void>;

/** Turns a handler into commander's action, so that failures reach the top-level catch with the output sink. */
export type WireAction = <T>(handler: CommandHandler<T>) => (...args: unknown[]) => Promise<void>;

/** One run of a command: the context, the merged flags, the positional arguments. */
export interface CommandRun<T> {
  context: RunContext;
  flags: T & GlobalFlags;
  args: string[];
}

/** A command core: the run's context and what it is asked to do. */
export type Core<O> = (context: RunContext, options: O) => Promise<number>;

/** What a core is asked to do, made from the run (its flags and arguments; publish's also from its environment). */
export type ToOptions<T, O> = (run: CommandRun<T>) => O | Promise<O>;

/** A repeatable option's values, in the order given (commander's custom option processing). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The options of a core that takes the flags as they are. */
export function flagsOnly<T>({ flags }: CommandRun<T>): T & GlobalFlags {
  return flags;
}

/** The options of a core whose argument is `<version>`: the flags and the version. */
export function withVersion<T>({
  flags,
  args,
}: CommandRun<T>): T & GlobalFlags & { version: string | undefined } {
  return { ...flags, version: args[0] };
}

/** A command of this program; `program.command(…)` makes its subcommands of this type too. */
export class ProgramCommand extends Command {
  constructor(
    name: string | undefined,
    private readonly wire: WireAction,
  ) {
    super(name);
  }

  /** The subcommands `.command(…)` makes: of this type, with the same wiring. */
  override createCommand(name?: string): ProgramCommand {
    return new ProgramCommand(name, this.wire);
  }

  /** The action: `load` imports the core when the command runs (never for `--help`); `toOptions` asks it. */
  runs<T, O>(load: () => Promise<Core<O>>, toOptions: ToOptions<T, O>): this {
    return this.action(
      this.wire<T>(async (context, flags, args) => {
        const [core, options] = await Promise.all([load(), toOptions({ context, flags, args })]);
        return core(context, options);
      }),
    );
  }

  /**
   * Like `runs`, for a core that talks to the registry: it gets the run's one registry session too (its module
   * imported beside the core), whose client `tuning` tunes when the options ask for their own (publish).
   */
  runsWithSession<T, O>(
    load: () => Promise<SessionCore<O>>,
    toOptions: ToOptions<T, O>,
    tuning?: (options: O) => ClientTuning,
  ): this {
    return this.action(
      this.wire<T>(async (context, flags, args) => {
        const [core, { openSession }, options] = await Promise.all([
          load(),
          import('../commands/session.js'),
          toOptions({ context, flags, args }),
        ]);
        return core(context, openSession(context, flags, tuning?.(options)), options);
      }),
    );
  }

  /** Gives the command its examples (`local(…)`, `onEmulator(…)`, in the order given), printed at the end of its help. */
  examples(...groups: Example[][]): this {
    withExamples(this, groups.flat());
    return this;
  }

  /** `--host` and `--port` of the server the command runs; `server` names it when it is not the command itself. */
  listens(port: string, server?: string): this {
    return this.option(
      '--host <address>',
      server ? `address ${server} listens on` : 'address to listen on',
      '127.0.0.1',
    ).option(
      '--port <port>',
      `${server ? `port of ${server}` : 'port to listen on'} (0 picks a free one)`,
      port,
    );
  }

  /** Where the run task HMAC key comes from: a file, or a variable. */
  hmacKey(): this {
    return this.option('--hmac-key-file <file>', 'file holding the run task HMAC key').option(
      '--hmac-key-env <name>',
      'variable holding the HMAC key (default RUNTASK_HMAC_KEY)',
    );
  }
}
