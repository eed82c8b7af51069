/**
 * The commander program: global options, the command groups, and the top-level catch that turns an error into
 * an exit code (the only place that does). Command implementations — and the output sink, with chalk — are
 * imported lazily to keep start-up fast: `provider --help` loads only commander and the command declarations.
 * In the package, this module is the entry of dist/bundle/ (scripts/bundle.mjs package), and each `import()`
 * below and in the commands a chunk of it, loaded when the command runs.
 */
import { homedir } from 'node:os';
import { isatty } from 'node:tty';
import { CommanderError, Option, type Command } from 'commander';
import { ExitCode, UsageError, exitCodeFor } from '../errors.js';
import type { GlobalFlags } from '../config/index.js';
import { ProgramCommand, type CommandHandler } from './command.js';
import type { CliIo } from './context.js';
import { registerEmulate } from './emulate.js';
import { registerPublish } from './publish.js';
import { registerVerify } from './verify.js';
import { registerRuntask } from './runtask.js';
import { registerVersions } from './versions.js';
import { registerPlatforms } from './platforms.js';
import { registerApprove } from './approve.js';
import { registerCheck } from './check.js';
import { registerDelete } from './delete.js';
import { registerGpgKeys } from './gpgKeys.js';
import { registerLock } from './lock.js';
import { registerMirror } from './mirror.js';
import { registerCompletion } from './completion.js';
import type { Output } from '../ui/output.js';
import { inquirerConfirm } from '../ui/prompt.js';
import { packageVersion } from '../packageFiles.js';
import { COMMAND_GROUPS, local, onEmulator, renderExitCodes } from './help.js';

/**
 * Each top-level command's declaration, with the group its help lists it under, in the order a user meets them
 * (commander lists groups in the order they first appear).
 */
const COMMANDS: readonly (readonly [group: string, register: (program: ProgramCommand) => void])[] = [
  [COMMAND_GROUPS.publish, registerPublish],
  [COMMAND_GROUPS.publish, registerVerify],
  [COMMAND_GROUPS.publish, registerMirror],
  [COMMAND_GROUPS.read, registerVersions],
  [COMMAND_GROUPS.read, registerPlatforms],
  [COMMAND_GROUPS.read, registerCheck],
  [COMMAND_GROUPS.lock, registerLock],
  [COMMAND_GROUPS.lock, registerApprove],
  [COMMAND_GROUPS.cleanup, registerDelete],
  [COMMAND_GROUPS.cleanup, registerGpgKeys],
  [COMMAND_GROUPS.runtask, registerRuntask],
  [COMMAND_GROUPS.local, registerEmulate],
  [COMMAND_GROUPS.shell, registerCompletion],
];

/** Builds the whole program. `state.exitCode` receives the result of the action that ran. */
export function buildProgram(io: CliIo, state: { exitCode: number; output?: Output }): ProgramCommand {
  // Every action reaches the top-level catch with the run's output sink, and leaves its exit code in `state`.
  function wire<T>(handler: CommandHandler<T>): (...args: unknown[]) => Promise<void> {
    return async (...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      const flags = command.optsWithGlobals<T & GlobalFlags>();
      const { createOutput, runContext } = await import('./context.js');
      const output = createOutput(io, flags);
      state.output = output;
      output.addSecret(flags.token);
      // A variadic argument (`mirror <providers...>`) comes as one array: its words are positional too.
      const positional = args
        .slice(0, -2)
        .flat()
        .filter((a): a is string => typeof a === 'string');
      const code = await handler(runContext(io, output), flags, positional);
      state.exitCode = typeof code === 'number' ? code : ExitCode.ok;
    };
  }
  const program = new ProgramCommand('provider', wire)
    .description(
      'Publish privately built Terraform providers to HCP Terraform / Terraform Enterprise, and more.',
    )
    .version(packageVersion(), '-V', 'print the version and exit (also --version before a command)')
    .addOption(new Option('--hostname <host-or-url>', 'API host or URL (env TFE_HOSTNAME / TFE_ADDRESS)'))
    .addOption(new Option('--organization <name>', 'organization name (env TFE_ORGANIZATION)'))
    .addOption(new Option('--namespace <name>', 'registry namespace (default: the organization)'))
    .addOption(new Option('--name <name>', 'provider name (default: from the release)'))
    .addOption(
      new Option('--token <token>', 'API token (prefer TF_TOKEN_<host> or TFE_TOKEN: flags are visible)'),
    )
    .option('--json', 'print exactly one JSON document on stdout')
    .option('-q, --quiet', 'print only results and errors')
    .option('--verbose', 'trace HTTP requests on stderr (secrets redacted)')
    .option('--no-color', 'no colours (also NO_COLOR)')
    .option('--config <file>', 'configuration file (default: searched for .providerrc and friends)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });

  for (const [group, register] of COMMANDS) {
    program.commandsGroup(group);
    register(program);
  }
  // Created now rather than lazily, so it lands in a group of its own instead of a stray "Commands:".
  program.commandsGroup('Help:').helpCommand('help [command]', 'display help for command');
  program.addHelpText('after', renderExitCodes());
  program.examples(
    local({
      'check a release before anything is sent (the fixture, with its signer key, offline)':
        'verify fixtures/release --key fixtures/keys/signer.pub.asc --offline',
    }),
    onEmulator({
      'publish it: registers the key, creates and uploads what is missing':
        'publish fixtures/release --key fixtures/keys/signer.pub.asc',
      'what terraform init will say about it': 'check 1.2.3 --name example',
    }),
  );
  return program;
}

/**
 * `--version` before any command prints the version; after a command it is the command's own flag
 * (`verify --version 1.2.3`), so the program's version flag is `-V` and this maps the first case to it.
 */
function versionAlias(argv: string[]): string[] {
  const out = [...argv];
  for (let i = 0; i < out.length && out[i]!.startsWith('-'); i++) {
    if (out[i] === '--version') out[i] = '-V';
  }
  return out;
}

/**
 * The hidden command the completion scripts call on every Tab (`provider __complete <words…>`, see
 * src/cli/complete.ts). Answered before commander parses anything rather than declared as a command: commander
 * would read the program's own options among the words (`--name`, `--help`), which are the user's half-typed
 * command line here, to be completed and not obeyed.
 */
const COMPLETE = '__complete';

/** Runs the program on an argv (without node and script) and resolves to the exit code. Never exits itself. */
export async function run(io: CliIo): Promise<number> {
  const state: { exitCode: number; output?: Output } = { exitCode: ExitCode.ok };
  const program = buildProgram(io, state);
  try {
    if (io.argv[0] === COMPLETE) {
      const { complete, formatCompletion } = await import('./complete.js');
      io.stdout.write(formatCompletion(complete(program, io.argv.slice(1))));
      return ExitCode.ok;
    }
    await program.parseAsync(versionAlias(io.argv), { from: 'user' });
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.ok;
      if (error.code === 'commander.help') return ExitCode.ok;
      // commander already printed its message (unknown option, missing argument...).
      return ExitCode.usage;
    }
    const { createOutput } = await import('./context.js');
    const output = state.output ?? createOutput(io, {});
    output.failure(error);
    return exitCodeFor(error);
  }
}

/** Reads all of the real standard input (`runtask callback --outcomes -`). */
async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Entry point used by bin/provider.cjs: the real process as the io (the only place that reads it). */
export async function main(): Promise<void> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      // A second Ctrl-C means "now".
      process.exit(ExitCode.interrupted);
    }
    controller.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // `provider versions list | head` closes the pipe early: that is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  const code = await run({
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    homeDir: homedir(),
    stdout: process.stdout,
    stderr: process.stderr,
    // fd 0 asked directly: `process.stdin` builds a stream on first read, which only a prompt or
    // `--outcomes -` needs, so it is read then (the getter) and not at every start.
    stdinIsTTY: isatty(0),
    readStdin: readProcessStdin,
    signal: controller.signal,
    confirm: inquirerConfirm({
      get input() {
        return process.stdin;
      },
      output: process.stderr,
    }),
  });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.exitCode = code;
}

export { UsageError };
