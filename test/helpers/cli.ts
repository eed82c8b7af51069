/** Runs the CLI in-process with captured output, as a user would from a shell (but without a process). */
import { tmpdir } from 'node:os';
import { buildProgram, run } from '../../src/cli/main.js';
import type { ProgramCommand } from '../../src/cli/command.js';
import type { RunContext } from '../../src/commands/context.js';
import type { Output, TextStream } from '../../src/ui/output.js';
import type { InProcessResult } from './result.js';

/** A text stream that remembers what was written. */
export class Capture implements TextStream {
  text = '';
  constructor(readonly isTTY = false) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

/** A stdout that resolves `firstLine` as soon as the command prints its start-up line. */
export class LineCapture extends Capture {
  private resolveLine!: (line: string) => void;
  readonly firstLine = new Promise<string>((resolve) => (this.resolveLine = resolve));
  override write(chunk: string): boolean {
    super.write(chunk);
    const newline = this.text.indexOf('\n');
    if (newline >= 0) this.resolveLine(this.text.slice(0, newline));
    return true;
  }
}

/** Options of `runCli`. */
export interface RunCliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  homeDir?: string;
  signal?: AbortSignal;
  tty?: boolean;
  /** What the command reads on standard input (`--outcomes -`); without it, reading stdin is refused. */
  stdin?: string;
  /** The system's temporary folder as the command sees it (default: the real one). */
  tmpDir?: string;
}

/** Runs `provider <argv>` in-process. The environment is empty unless given: tests never see the real one. */
export async function runCli(argv: string[], options: RunCliOptions = {}): Promise<InProcessResult> {
  const stdout = new Capture(options.tty);
  const stderr = new Capture(options.tty);
  const exitCode = await run({
    argv,
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    homeDir: options.homeDir ?? tmpdir(),
    stdout,
    stderr,
    stdinIsTTY: options.tty === true,
    ...(options.stdin === undefined ? {} : { readStdin: () => Promise.resolve(options.stdin ?? '') }),
    ...(options.tmpDir === undefined ? {} : { tmpDir: options.tmpDir }),
    signal: options.signal ?? new AbortController().signal,
  });
  return { exitCode, stdout: stdout.text, stderr: stderr.text };
}

/** A RunContext for calling a core directly: nothing of the real process but its cwd and what `parts` give. */
export function coreContext(output: Output, parts: Partial<RunContext> = {}): RunContext {
  return {
    env: {},
    cwd: process.cwd(),
    homeDir: tmpdir(),
    tmpDir: tmpdir(),
    user: 'test',
    output,
    stderr: new Capture(),
    readStdin: () => Promise.reject(new Error('this test gives the command no standard input')),
    signal: new AbortController().signal,
    now: () => new Date(),
    ...parts,
  };
}

/**
 * The real program `buildProgram` makes, over an io that runs nothing and prints into captures: to read its
 * commands.
 */
export function quietProgram(cwd: string = process.cwd()): ProgramCommand {
  const io = {
    argv: [],
    env: {},
    cwd,
    homeDir: '/nonexistent',
    stdout: new Capture(),
    stderr: new Capture(),
    stdinIsTTY: false,
    signal: new AbortController().signal,
  };
  return buildProgram(io, { exitCode: 0 });
}
