/**
 * The one output sink. Results go to stdout, progress and chatter to stderr; `--json` prints exactly one
 * JSON document on stdout. Every line written passes through secret redaction first.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import { toErrorDocument, ProviderError, ApiError } from '../errors.js';

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
  }

  /** True when stderr is an interactive terminal and spinners/progress bars make sense. */
  get interactive(): boolean {
    return this.stderr.isTTY === true && !this.json && this.env.CI !== 'true';
  }

  /** True under GitHub Actions, where errors also become `::error::` annotations. */
  get githubActions(): boolean {
    return this.env.GITHUB_ACTIONS === 'true';
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

  /** A human result line on stdout (ignored in `--json` mode, where `resultJson` speaks). */
  result(line: string): void {
    if (this.json) return;
    this.stdout.write(this.redact(line) + '\n');
  }

  /** The single JSON document of a `--json` run. */
  resultJson(document: unknown): void {
    if (this.jsonWritten)
      throw new Error('Output.resultJson called twice: --json prints exactly one document');
    this.jsonWritten = true;
    this.stdout.write(this.redact(JSON.stringify(document)) + '\n');
  }

  /** Progress and chatter on stderr; silent with `--quiet`. */
  info(line: string): void {
    if (this.quiet) return;
    this.stderr.write(this.redact(line) + '\n');
  }

  /** A warning on stderr; shown even with `--quiet`. */
  warn(line: string): void {
    this.stderr.write(this.redact(`${this.color.yellow('warning:')} ${line}`) + '\n');
    if (this.githubActions) this.stderr.write(this.redact(`::warning::${escapeAnnotation(line)}`) + '\n');
  }

  /** An HTTP trace or other detail, only with `--verbose`. */
  debug(line: string): void {
    if (!this.verbose) return;
    this.stderr.write(this.redact(this.color.dim(line)) + '\n');
  }

  /** Reports a failure: one JSON document in `--json` mode, otherwise message, detail and hint on stderr. */
  failure(error: unknown): void {
    const doc = toErrorDocument(error);
    if (this.json && !this.jsonWritten) {
      this.resultJson({ ok: false, error: doc });
    }
    const lines = [`${this.color.red('error:')} ${doc.message}`];
    if (error instanceof ApiError && error.serverDetail && !doc.message.includes(error.serverDetail)) {
      lines.push(`  server said: ${error.serverDetail}`);
    }
    if (doc.hint) lines.push(`  ${this.color.cyan('hint:')} ${doc.hint}`);
    if (!(error instanceof ProviderError) && error instanceof Error && error.stack) {
      lines.push(this.color.dim(error.stack));
    }
    this.stderr.write(this.redact(lines.join('\n')) + '\n');
    if (this.githubActions) {
      const text = doc.hint ? `${doc.message} — ${doc.hint}` : doc.message;
      this.stderr.write(this.redact(`::error::${escapeAnnotation(text)}`) + '\n');
    }
  }
}

/** GitHub's workflow-command escaping for annotation text. */
function escapeAnnotation(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
