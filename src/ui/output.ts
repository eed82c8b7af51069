/**
 * The one output sink. Results go to stdout, progress and chatter to stderr; `--json` prints exactly one
 * JSON document on stdout. Every line written passes through secret redaction first, and, in a CI job, through
 * `jobLine`: text from a server (or a file) cannot start a line of its own there, nor be a workflow command.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import { toErrorDocument, ProviderError, ApiError } from '../errors.js';

/** The CI systems whose job log reads what a program prints: GitHub Actions runs workflow commands in it. */
export type CiJob = 'github' | 'gitlab';

/** The CI job the environment says this runs in, if any (`GITHUB_ACTIONS=true`, `GITLAB_CI=true`). */
export function ciJob(env: Record<string, string | undefined>): CiJob | undefined {
  if (env.GITHUB_ACTIONS === 'true') return 'github';
  if (env.GITLAB_CI === 'true') return 'gitlab';
  return undefined;
}

/**
 * One line as printed in a CI job, made inert: a line break inside it (a server's error detail, a name read from
 * the registry) is written `%0D`/`%0A`, so the text after it never begins a line of its own, which the runner
 * would read as a workflow command (`::add-mask::`, `::stop-commands::`) or which would fake a line of the job's
 * log. Under GitHub Actions, a line that would begin with `::` gets `%3A:` and a `##[` anywhere (the runner's old
 * command form, honoured mid-line) `##%5B`. `%` is written `%25` where it begins one of these escapes, so the
 * text stays exact: replacing `%0D`, `%0A`, `%3A`, `%5B` and then `%25` gives it back. Outside a job, as given.
 */
export function jobLine(text: string, job: CiJob | undefined): string {
  if (job === undefined) return text;
  let out = text
    .replace(/%(?=0[ad]|25|3a|5b)/gi, '%25')
    .replace(/\r/g, '%0D')
    .replace(/\n/g, '%0A');
  if (job === 'github') out = out.replace(/##\[/g, '##%5B').replace(/^(\s*)::/, '$1%3A:');
  return out;
}

/** One UTF-16 code unit written as its JSON escape, `\uXXXX` (a control character made visible). */
export function escapeChar(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Text read from outside (a lock file's address, a zip's name a registry serves) as it may be printed: every
 * control character (C0, DEL and C1: `\p{Cc}`) written as its JSON escape, `\u001b`, so that it cannot change a
 * terminal's title, clear its screen, or break a line of the output. A backslash is left as it is, so `\u001b`
 * typed in the text reads the same as the character; a `--json` document keeps the exact value.
 */
export function visible(text: string): string {
  return text.replace(/\p{Cc}/gu, escapeChar);
}

/** GitHub's escaping of a workflow command's data (an annotation's text): `%`, CR and LF. */
export function escapeCommandData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A stream we can write text to; `isTTY` is read to choose between spinners and plain lines. */
export interface TextStream {
  write(chunk: string): unknown;
  isTTY?: boolean | undefined;
}

/** What the sink needs from its world; the CLI passes the process, tests pass buffers. */
export interface OutputOptions {
  stdout: TextStream;
  stderr: TextStream;
  env: Record<string, string | undefined>;
  json?: boolean | undefined;
  quiet?: boolean | undefined;
  verbose?: boolean | undefined;
  /** `false` for `--no-color`; `undefined` lets NO_COLOR, FORCE_COLOR and the TTY decide. */
  color?: boolean | undefined;
}

const REDACTED = '[redacted]';

/** Decides the colour level from `--no-color`, NO_COLOR, FORCE_COLOR and whether stderr is a TTY. */
export function colorLevel(options: Pick<OutputOptions, 'color' | 'env' | 'stderr'>): 0 | 1 | 2 | 3 {
  if (options.color === false) return 0;
  const { NO_COLOR, FORCE_COLOR } = options.env;
  if (NO_COLOR !== undefined && NO_COLOR !== '') return 0;
  if (FORCE_COLOR !== undefined) {
    if (FORCE_COLOR === '0' || FORCE_COLOR === 'false') return 0;
    const n = Number(FORCE_COLOR);
    return n === 2 || n === 3 ? n : 1;
  }
  return options.stderr.isTTY === true ? 1 : 0;
}

/** The sink itself. Create one per command run and pass it down to the core. */
export class Output {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly verbose: boolean;
  readonly color: ChalkInstance;
  readonly env: Record<string, string | undefined>;
  /** The CI job whose log this writes to, if any: see `jobLine`. */
  readonly job: CiJob | undefined;
  private readonly stdout: TextStream;
  private readonly stderr: TextStream;
  private readonly secrets = new Set<string>();
  private jsonWritten = false;

  constructor(options: OutputOptions) {
    this.stdout = options.stdout;
    this.stderr = options.stderr;
    this.env = options.env;
    this.json = options.json === true;
    this.quiet = options.quiet === true;
    this.verbose = options.verbose === true;
    this.color = new Chalk({ level: colorLevel(options) });
    this.job = ciJob(options.env);
  }

  /** True when stderr is an interactive terminal and spinners/progress bars make sense. */
  get interactive(): boolean {
    return this.stderr.isTTY === true && !this.json && this.env.CI !== 'true';
  }

  /** True under GitHub Actions, where errors also become `::error::` annotations. */
  get githubActions(): boolean {
    return this.job === 'github';
  }

  /** Registers a value (token, HMAC key, signed URL) that must never be printed. */
  addSecret(value: string | undefined): void {
    if (value !== undefined && value.length >= 4) this.secrets.add(value);
  }

  /** Replaces every registered secret in a text. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join(REDACTED);
    return out;
  }

  /** The one place lines are written: redacted, made inert in a CI job (`jobLine`), one line each. */
  private emit(stream: TextStream, line: string): void {
    stream.write(jobLine(this.redact(line), this.job) + '\n');
  }

  /** A workflow command of ours (`::error::…`): its data escaped as GitHub decodes it, the line left a command. */
  private command(name: 'error' | 'warning', text: string): void {
    this.stderr.write(this.redact(`::${name}::${escapeCommandData(text)}`) + '\n');
  }

  /** A human result line on stdout (ignored in `--json` mode, where `resultJson` speaks). */
  result(line: string): void {
    if (this.json) return;
    this.emit(this.stdout, line);
  }

  /**
   * The single JSON document of a `--json` run: one line whatever it holds (JSON escapes line breaks); under
   * GitHub Actions a `##[` inside one of its strings is written `##\u005b`, the same string to a JSON reader.
   */
  resultJson(document: unknown): void {
    if (this.jsonWritten)
      throw new Error('Output.resultJson called twice: --json prints exactly one document');
    this.jsonWritten = true;
    this.stdout.write(this.jsonLine(document));
  }

  /** Progress and chatter on stderr; silent with `--quiet`. */
  info(line: string): void {
    if (this.quiet) return;
    this.emit(this.stderr, line);
  }

  /** A JSON line on stderr (a log event), as `info` is and written as `resultJson` writes its document. */
  infoJson(value: unknown): void {
    if (this.quiet) return;
    this.stderr.write(this.jsonLine(value));
  }

  /**
   * One JSON line, redacted; its strings the same to a JSON reader (see `resultJson`). DEL and the C1 controls,
   * which JSON lets through raw and a terminal may act on, are written `\u007f`…`\u009f` like the C0 ones.
   */
  private jsonLine(value: unknown): string {
    const text = this.redact(JSON.stringify(value).replace(/[\u007f-\u009f]/g, escapeChar));
    return (this.job === 'github' ? text.replace(/##\[/g, '##\\u005b') : text) + '\n';
  }

  /** A warning on stderr; shown even with `--quiet`. */
  warn(line: string): void {
    this.emit(this.stderr, `${this.color.yellow('warning:')} ${line}`);
    if (this.githubActions) this.command('warning', line);
  }

  /** An HTTP trace or other detail, only with `--verbose`. */
  debug(line: string): void {
    if (!this.verbose) return;
    this.emit(this.stderr, this.color.dim(line));
  }

  /** Reports a failure: one JSON document in `--json` mode, otherwise message, detail and hint on stderr. */
  failure(error: unknown): void {
    const doc = toErrorDocument(error);
    if (this.json && !this.jsonWritten) {
      this.resultJson({ ok: false, error: doc });
    }
    // A message made of several lines (a list of conflicts) is printed line by line; any other line break in
    // it came with a value, and a job's log gets it escaped.
    const [headline = '', ...more] = error instanceof ProviderError ? error.messageLines : [doc.message];
    const lines = [`${this.color.red('error:')} ${headline}`, ...more];
    if (error instanceof ApiError && error.serverDetail && !doc.message.includes(error.serverDetail)) {
      lines.push(`  server said: ${error.serverDetail}`);
    }
    if (doc.hint) lines.push(`  ${this.color.cyan('hint:')} ${doc.hint}`);
    if (!(error instanceof ProviderError) && error instanceof Error && error.stack) {
      lines.push(...stackLines(error).map((line) => this.color.dim(line)));
    }
    for (const line of lines) this.emit(this.stderr, line);
    if (this.githubActions) this.command('error', doc.hint ? `${doc.message} — ${doc.hint}` : doc.message);
  }
}

/**
 * A bug's stack as lines: its first line (`TypeError: <message>`) as one, whatever the message holds, then
 * each frame. A stack that does not begin with the error's own words stays one line.
 */
function stackLines(error: Error): string[] {
  const stack = error.stack ?? '';
  const head = String(error);
  if (!stack.startsWith(head)) return [stack];
  return [
    head,
    ...stack
      .slice(head.length)
      .split('\n')
      .filter((line) => line.trim() !== ''),
  ];
}
