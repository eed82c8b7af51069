/**
 * What `--help` teaches beyond the flags: an "Examples" block at the end of every command's help (commands that
 * run as written in this repository, on the fixture release or against `provider emulate --port 8080`), the
 * command groups of `provider --help`, and its exit codes. Examples are data kept beside the command, so a
 * test can walk the program, find a command without them, and parse every example with commander itself. They
 * are written in one compact form (`local`, `onEmulator`): what each shows, and the line exactly as the help
 * prints it.
 */
import type { Command } from 'commander';
import { ExitCode } from '../errors.js';

/** One example: what it shows, and the words after `provider` exactly as a user types them. */
export interface Example {
  /** Runs against the emulator, set up as the block's first lines say. */
  emulator?: boolean;
  /** Variables set for this command alone, shown before it (`NAME=value`). */
  env?: string;
  args: string[];
  what: string;
  /** The exit code it ends with when run as written, when not 0 (an example may show a failure). */
  exit?: number;
}

/**
 * Examples in their compact form: what each shows → the line after `provider`, written exactly as the help prints
 * it (variables first as `NAME=value`, words quoted as `exampleLine` quotes them). An example that ends with
 * another exit code than 0 says so in its `what`, as `exit N`, which is read from there.
 */
export type ExampleLines = Readonly<Record<string, string>>;

/** Examples that run as written in this repository, without the emulator. */
export function local(lines: ExampleLines): Example[] {
  return Object.entries(lines).map(([what, line]) => parseExample(what, line, false));
}

/** Examples that run against the emulator, set up as the block's first lines say. */
export function onEmulator(lines: ExampleLines): Example[] {
  return Object.entries(lines).map(([what, line]) => parseExample(what, line, true));
}

// One example from its compact form. A line written otherwise than the help prints it is a mistake in the program.
function parseExample(what: string, line: string, emulator: boolean): Example {
  const [, env = '', words = ''] = /^((?:[A-Za-z_]\w*=\S* )*)(.*)$/.exec(line) ?? [];
  const exit = /\bexit (\d+)\b/.exec(what)?.[1];
  const example: Example = {
    ...(emulator ? { emulator } : {}),
    ...(env ? { env: env.trimEnd() } : {}),
    what,
    ...(exit === undefined ? {} : { exit: Number(exit) }),
    args: shellWords(words),
  };
  if (exampleLine(example) !== `${env}provider ${words}`) {
    throw new Error(`The example "${line}" is not written as the help prints it: ${exampleLine(example)}`);
  }
  return example;
}

// A word as `shellWord` writes it: a <placeholder>, or plain characters, 'quoted' runs and \-escapes.
const SHELL_WORD = /(<[^<>]+>)(?= |$)|((?:'[^']*'|\\.|[^\s'\\])+)/g;

/** The words of a line as a POSIX shell reads them back from `exampleLine`; a `<placeholder>` is one word. */
export function shellWords(line: string): string[] {
  return [...line.matchAll(SHELL_WORD)].map(
    ([, placeholder, word = '']) =>
      placeholder ??
      word.replace(/'([^']*)'|\\(.)/g, (_, quoted?: string, escaped?: string) => quoted ?? escaped ?? ''),
  );
}

/** The emulator every example that needs a registry talks to, and the variables that point there. */
export const EXAMPLE_EMULATOR = {
  url: 'http://127.0.0.1:8080',
  organization: 'example-org',
  setup: [
    '# run in this repository, against `provider emulate --port 8080` in another terminal:',
    '#   export TFE_HOSTNAME=http://127.0.0.1:8080 TFE_ORGANIZATION=example-org',
    '#   export TFE_TOKEN=<the owners token it printed>',
  ],
} as const;

/** The command groups of `provider --help`, in the order a user meets the tasks. */
export const COMMAND_GROUPS = {
  publish: 'Publish and verify:',
  read: 'Reading and checking:',
  lock: 'Lock files for consumers:',
  cleanup: 'Cleanup and keys:',
  runtask: 'Run tasks:',
  local: 'The local platform:',
  shell: 'Shell:',
} as const;

/** The exit codes, as README.md "Exit codes" lists them (src/errors.ts decides them). */
export const EXIT_CODES: ReadonlyArray<readonly [number, string]> = [
  [ExitCode.ok, 'success'],
  [
    ExitCode.internal,
    'internal error, a bug: please report it with --verbose output\n(runtask send: a result other than --expect)',
  ],
  [
    ExitCode.usage,
    'usage or configuration: a bad flag or config file, no token, an\nambiguous release folder',
  ],
  [ExitCode.verification, 'verification failed: the release, its signature, or what the registry\nserves'],
  [
    ExitCode.api,
    'the API refused, was unreachable or answered another shape\n(runtask send: the integrator never accepted the request)',
  ],
  [ExitCode.conflict, 'conflict: the registry holds different content for this version'],
  [ExitCode.timeout, 'timed out (uploaded flags, run task deadline)'],
  [ExitCode.held, 'held by the policy (a cooldown, an approval wanting); nothing failed'],
  [ExitCode.interrupted, 'interrupted (Ctrl-C, SIGTERM)'],
];

const examples = new WeakMap<Command, readonly Example[]>();

/** The examples a command was given (empty when it has none: a test fails on that). */
export function examplesOf(command: Command): readonly Example[] {
  return examples.get(command) ?? [];
}

/** The full path of a command, e.g. `provider runtask send`. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

// Quotes a word the way a POSIX shell reads it back unchanged.
function shellWord(word: string): string {
  // <placeholders> are for the reader to fill in, shown as such.
  if (/^<[^<>]+>$/.test(word)) return word;
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The example as one shell line, as the help shows it after `$ `. */
export function exampleLine(example: Example): string {
  const words = ['provider', ...example.args].map(shellWord).join(' ');
  return example.env ? `${example.env} ${words}` : words;
}

/** Renders an Examples block: the emulator set-up once if any example needs it, then each command under its comment. */
export function renderExamples(list: readonly Example[]): string {
  const lines = ['', 'Examples:'];
  if (list.some((e) => e.emulator)) lines.push(...EXAMPLE_EMULATOR.setup.map((l) => `  ${l}`));
  for (const example of list) lines.push(`  # ${example.what}`, `  $ ${exampleLine(example)}`);
  // commander ends each help text it adds with a newline of its own.
  return lines.join('\n');
}

/** Gives a command its examples: kept for the tests, and printed at the very end of its help. */
export function withExamples(command: Command, list: readonly Example[]): Command {
  examples.set(command, list);
  // 'after' text belongs to this command's help alone, not its subcommands'.
  return command.addHelpText('after', renderExamples(list));
}

/** The exit codes block of `provider --help`. */
export function renderExitCodes(): string {
  const width = Math.max(...EXIT_CODES.map(([code]) => String(code).length));
  const indent = ' '.repeat(width + 4);
  const lines = EXIT_CODES.map(
    ([code, meaning]) => `  ${String(code).padEnd(width)}  ${meaning.replace(/\n/g, `\n${indent}`)}`,
  );
  return ['', 'Exit codes:', ...lines].join('\n');
}
