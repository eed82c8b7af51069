/**
 * The process as the program receives it (argv, env, folders, streams, stdin, Ctrl-C), and the one place a
 * command run's RunContext and output sink are built from it. Tests hand `run` one of these with buffers.
 */
import { tmpdir } from 'node:os';
import type { RunContext } from '../commands/context.js';
import type { GlobalFlags } from '../config/index.js';
import { UsageError } from '../errors.js';
import type { TextStream } from '../ui/output.js';
import { Output } from '../ui/output.js';

/**
 * The process, as the program receives it: RunContext without the run's output sink, plus argv, stdout and
 * whether stdin is a terminal. What tests rarely need (temporary folder, user, stdin, clock) may be left out:
 * `runContext` fills it in.
 */
export interface CliIo
  extends
    Omit<RunContext, 'output' | 'tmpDir' | 'user' | 'readStdin' | 'now'>,
    Partial<Pick<RunContext, 'tmpDir' | 'user' | 'readStdin' | 'now'>> {
  argv: string[];
  stdout: TextStream;
  /** Only a terminal's person can answer `confirm`: without one, the run's context has none. */
  stdinIsTTY: boolean;
}

/** Builds the output sink for one run from the global flags. */
export function createOutput(io: CliIo, flags: GlobalFlags): Output {
  return new Output({
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    json: flags.json,
    quiet: flags.quiet,
    verbose: flags.verbose,
    color: flags.color === false ? false : undefined,
  });
}

/**
 * The RunContext of one command run: the process, the run's sink, and a `confirm` only on a terminal. Parts the
 * io leaves out are this machine's (temporary folder, uid, wall clock); a left-out stdin is refused when read.
 */
export function runContext(io: CliIo, output: Output): RunContext {
  return {
    env: io.env,
    cwd: io.cwd,
    homeDir: io.homeDir,
    tmpDir: io.tmpDir ?? tmpdir(),
    user: io.user ?? String(process.getuid?.() ?? 'user'),
    output,
    stderr: io.stderr,
    readStdin: io.readStdin ?? noStdin,
    signal: io.signal,
    confirm: io.stdinIsTTY ? io.confirm : undefined,
    now: io.now ?? (() => new Date()),
  };
}

function noStdin(): Promise<string> {
  return Promise.reject(new UsageError('this run was given no standard input to read'));
}
