/**
 * The completion engine behind `provider __complete <words…>`, which the scripts of `provider completion` call
 * on every Tab (cobra's design: the installed script is a thin wrapper, so it never goes stale after an
 * upgrade). It walks the real commander program: its visible subcommands (hidden ones are never offered, nor
 * `__complete`, which is no commander command; commander's `help` is), the options of the command reached and
 * of its ancestors (the program's global options are read after a subcommand too), which of them take a value,
 * and the values it knows:
 *
 * - an option or argument with commander `.choices()`: the choices;
 * - `<os_arch>` or `<platform>`: the platforms HashiCorp recommends building (src/terraform/names.ts) that match what
 *   was typed, or, when none does (`openbsd_`, `linux_r`), every pair of Go's list that matches;
 * - a file or folder (`<file>`, `<path>`, `<file.json>`, `<…-file>`; `<dir>`, `<…-dir>`): nothing, and the
 *   shell completes file or folder names;
 * - anything else (`<version>`, `<name>`, `<duration>`…): nothing.
 *
 * Flags are offered when the word being completed starts with `-` (long names; a short one only for a flag that
 * has no long name, `-V`), subcommands otherwise. A flag already given is left out unless it accumulates (an
 * option with an argument parser: in this program those collect repeated values, `--platform`, `--tag`).
 *
 * The answer, one line each: the candidates, `value` or `value<TAB>description`, then always a last line, the
 * directive: `:done` (offer the candidates, nothing else), `:files` (no candidates: complete file names) or
 * `:dirs` (no candidates: complete folder names).
 */
import type { Argument, Command, Option } from 'commander';
import { commonPlatformNames, knownPlatformNames } from '../terraform/names.js';

/** One candidate: the word as the shell inserts it, and what it is. */
export interface Candidate {
  value: string;
  description?: string | undefined;
}

/** What the shell does beside the candidates: nothing else, or complete file or folder names itself. */
export type Directive = 'done' | 'files' | 'dirs';

/** The answer to one Tab. */
export interface Completion {
  candidates: Candidate[];
  directive: Directive;
}

/** What a value (of an option or an argument) is, as far as completion goes. */
type ValueKind =
  | { kind: 'choices'; choices: readonly string[] }
  | { kind: 'platform' }
  | { kind: 'files' }
  | { kind: 'dirs' }
  | { kind: 'none' };

/** A value's kind, from its choices or its placeholder's name (`os_arch`, `dir`, `release-dir`, `file.json`). */
function valueKind(placeholder: string, choices: readonly string[] | undefined): ValueKind {
  if (choices !== undefined) return { kind: 'choices', choices };
  const name = placeholder.toLowerCase();
  if (name === 'os_arch' || name === 'platform') return { kind: 'platform' };
  if (/(^|-)dir$/.test(name)) return { kind: 'dirs' };
  if (/(^|-)(file|path)$/.test(name) || /^file\./.test(name)) return { kind: 'files' };
  return { kind: 'none' };
}

/** The kind of an option's value, from the `<placeholder>` of its flags. */
function optionValueKind(option: Option): ValueKind {
  const placeholder = /[<[]([^>\]]+?)(\.\.\.)?[>\]]/.exec(option.flags)?.[1] ?? '';
  return valueKind(placeholder, option.argChoices);
}

/** The kind of an argument's value, from its name. */
function argumentValueKind(argument: Argument): ValueKind {
  return valueKind(argument.name(), argument.argChoices);
}

/** True when the option reads a value (`<value>` or `[value]`). */
function takesValue(option: Option): boolean {
  return option.required || option.optional;
}

/** The first line of a help text, on one line, for a candidate's description. */
function oneLine(text: string): string | undefined {
  const line = text.split('\n')[0]!.replace(/\s+/g, ' ').trim();
  return line === '' ? undefined : line;
}

/** The option the word names among `options` (`--platform`, `-q`), if any. */
function findOption(options: readonly Option[], word: string): Option | undefined {
  return options.find((o) => o.long === word || o.short === word);
}

/** The options read after `command`: its own visible ones (with `--help`), then its ancestors', each once. */
function optionsOf(command: Command): Option[] {
  const seen = new Set<string>();
  const out: Option[] = [];
  for (let c: Command | null = command; c; c = c.parent) {
    const own = c === command ? c.createHelp().visibleOptions(c) : c.options.filter((o) => !o.hidden);
    for (const option of own) {
      const key = option.long ?? option.short ?? option.flags;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(option);
    }
  }
  return out;
}

/** The subcommands a user may type after `command`: the visible ones, and commander's `help` when it has one. */
function subcommandsOf(command: Command): Command[] {
  return command.createHelp().visibleCommands(command);
}

/** Values for a value kind, those starting with `prefix`; `shown` is written before each (`--platform=`). */
function valuesFor(kind: ValueKind, prefix: string, shown = ''): Completion {
  const starting = (list: readonly string[]): Candidate[] =>
    list.filter((v) => v.startsWith(prefix)).map((v) => ({ value: shown + v }));
  switch (kind.kind) {
    case 'choices':
      return { candidates: starting(kind.choices), directive: 'done' };
    case 'platform': {
      const common = starting(commonPlatformNames());
      return { candidates: common.length > 0 ? common : starting(knownPlatformNames()), directive: 'done' };
    }
    case 'files':
    case 'dirs':
      return { candidates: [], directive: kind.kind };
    case 'none':
      return { candidates: [], directive: 'done' };
  }
}

/**
 * Completes the last of `words` (the words after `provider` up to the cursor; the last one is the word being
 * completed, empty after a space) against `program`.
 */
export function complete(program: Command, words: readonly string[]): Completion {
  const typed = words.slice(0, -1);
  const current = words[words.length - 1] ?? '';

  let command = program;
  /** After commander's `help`: the command whose subcommands it names. */
  let helpFor: Command | undefined;
  let positionals = 0;
  let afterDashes = false;
  /** The option whose value the next word is. */
  let pending: Option | undefined;
  const given = new Set<Option>();

  for (const word of typed) {
    if (pending) {
      pending = undefined;
      continue;
    }
    if (!afterDashes && word === '--') {
      afterDashes = true;
      continue;
    }
    if (!afterDashes && word.startsWith('-') && word.length > 1) {
      const equals = word.indexOf('=');
      const option = findOption(optionsOf(command), equals > 0 ? word.slice(0, equals) : word);
      if (option) {
        given.add(option);
        if (takesValue(option) && equals < 0) pending = option;
      }
      continue;
    }
    if (helpFor === undefined && positionals === 0 && !afterDashes) {
      const sub = subcommandsOf(command).find((c) => c.name() === word || c.aliases().includes(word));
      if (sub && !command.commands.includes(sub)) {
        // commander's own `help [command]`: names one subcommand of the command it follows.
        helpFor = command;
        continue;
      }
      if (sub) {
        command = sub;
        continue;
      }
    }
    positionals++;
  }

  if (pending) return valuesFor(optionValueKind(pending), current);

  if (!afterDashes && current.startsWith('-')) {
    const equals = current.indexOf('=');
    if (equals > 0) {
      const option = findOption(optionsOf(command), current.slice(0, equals));
      if (!option || !takesValue(option)) return { candidates: [], directive: 'done' };
      return valuesFor(optionValueKind(option), current.slice(equals + 1), current.slice(0, equals + 1));
    }
    const candidates = optionsOf(command)
      .filter((o) => !given.has(o) || o.parseArg !== undefined)
      .map((o) => ({ value: o.long ?? o.short ?? '', description: oneLine(o.description) }))
      .filter((c) => c.value.startsWith(current));
    return { candidates, directive: 'done' };
  }

  if (helpFor) {
    if (positionals > 0) return { candidates: [], directive: 'done' };
    return { candidates: commandsStarting(helpFor, current, true), directive: 'done' };
  }

  if (positionals === 0 && subcommandsOf(command).length > 0) {
    // A command with an argument of its own beside its subcommands (`lock [release-dir]` and `lock check`): a
    // subcommand once its first letters are typed, else the argument's values (a folder's name).
    const ownArgument = command.registeredArguments.length > 0;
    const commands = commandsStarting(command, current, ownArgument);
    if (!ownArgument || (current !== '' && !afterDashes && commands.length > 0)) {
      return { candidates: commands, directive: 'done' };
    }
  }

  const declared = command.registeredArguments;
  const last = declared[declared.length - 1];
  const argument = declared[positionals] ?? (last?.variadic ? last : undefined);
  if (!argument) return { candidates: [], directive: 'done' };
  return valuesFor(argumentValueKind(argument), current);
}

/** The subcommands of `command` starting with `prefix`, described; `help` left out when `helpless`. */
function commandsStarting(command: Command, prefix: string, helpless: boolean): Candidate[] {
  return subcommandsOf(command)
    .filter((c) => !(helpless && !command.commands.includes(c)))
    .filter((c) => c.name().startsWith(prefix))
    .map((c) => ({ value: c.name(), description: oneLine(c.summary() || c.description()) }));
}

/** The answer as `provider __complete` prints it: a line per candidate, then the directive line. */
export function formatCompletion({ candidates, directive }: Completion): string {
  const lines = candidates.map((c) => (c.description ? `${c.value}\t${c.description}` : c.value));
  return [...lines, `:${directive}`].join('\n') + '\n';
}
