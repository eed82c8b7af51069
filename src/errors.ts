/**
 * The error taxonomy. Every failure a user can cause or meet is one of these classes; anything else is a bug.
 * The exit code is decided in exactly one place, `exitCodeFor`, called by the program's top-level catch.
 */

/** Exit codes, as documented in the README. */
export const ExitCode = {
  ok: 0,
  internal: 1,
  /** `runtask send --expect` saw another result (PRODUCT.md §8 gives it 1 too). */
  unexpectedResult: 1,
  usage: 2,
  verification: 3,
  api: 4,
  conflict: 5,
  timeout: 6,
  /** The policy holds versions (a cooldown, an approval wanting), and nothing failed. */
  held: 7,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Extra facts attached to an error, printed with it and included in the `--json` error document. */
export type ErrorDetails = Record<string, unknown>;

/** Options shared by every error class. */
export interface ProviderErrorOptions {
  /** What to do next, in one sentence. */
  hint?: string;
  details?: ErrorDetails;
  cause?: unknown;
  /**
   * Lines listed beneath the message (conflicts, problems), each one line: the message is the first line and
   * these, joined by line breaks, and the output prints each as a line of its own, in a CI job's log too.
   */
  lines?: readonly string[];
}

/** Base class of the expected errors: a message, a hint and a stable code for `--json`. */
export abstract class ProviderError extends Error {
  abstract readonly code: string;
  readonly hint: string | undefined;
  readonly details: ErrorDetails | undefined;
  /** The message's lines: its first line, then the `lines` option's, as given. */
  readonly messageLines: readonly string[];

  constructor(message: string, options: ProviderErrorOptions = {}) {
    const lines = options.lines ?? [];
    super([message, ...lines].join('\n'), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
    this.details = options.details;
    this.messageLines = [message, ...lines];
  }
}

/** The base class of one kind of error: a `ProviderError` whose stable `code` is `code`. */
function errorKind<Code extends string>(code: Code) {
  return class extends ProviderError {
    readonly code = code;
  };
}

/** A bad flag, argument, configuration file or missing credential. Exit 2. */
export class UsageError extends errorKind('usage') {}

/** The local release, its signature, or what the registry serves does not hold up. Exit 3. */
export class VerificationError extends errorKind('verification') {}

/** The API refused a request (401/403/404/422...). Exit 4. */
export class ApiError extends errorKind('api') {
  /** HTTP status of the refusal. */
  readonly status: number;
  /** The server's own words (JSON:API `detail`/`title`), when it gave any. */
  readonly serverDetail: string | undefined;

  constructor(
    message: string,
    options: ProviderErrorOptions & { status: number; serverDetail?: string | undefined },
  ) {
    super(message, options);
    this.status = options.status;
    this.serverDetail = options.serverDetail;
  }
}

/**
 * The registry (or something in front of it: a proxy, a login page, an old Terraform Enterprise) answered with a
 * document of another shape than the request's schema. Exit 4, as an API problem: nothing is wrong locally.
 * `status` is the HTTP status of that answer, so it is never mistaken for a refusal or a lost answer.
 */
export class UnexpectedAnswerError extends ApiError {}

/** The registry holds different content for this version. Exit 5. */
export class ConflictError extends errorKind('conflict') {}

/** Waited long enough (uploaded flags, run task deadline). Exit 6. */
export class TimeoutError extends errorKind('timeout') {}

/**
 * The policy holds versions a run was asked for (a cooldown not over, an approval not recorded): nothing of them is
 * written, nothing failed, and a later run (or `provider approve`) lets them in. Exit 7.
 */
export class HeldError extends errorKind('held') {}

/**
 * `runtask send --expect`: the integrator kept the contract but reached another result. Exit 1, which PRODUCT.md
 * gives this case (1 is otherwise "internal error"); the message says "result X, expected Y".
 */
export class ResultMismatchError extends errorKind('unexpected-result') {}

/** The user pressed Ctrl-C or the process got SIGINT/SIGTERM. Exit 130. */
export class InterruptedError extends errorKind('interrupted') {}

/** The one place that maps an error to an exit code. Anything unknown is a bug: exit 1. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof UsageError) return ExitCode.usage;
  if (error instanceof VerificationError) return ExitCode.verification;
  if (error instanceof ApiError) return ExitCode.api;
  if (error instanceof ConflictError) return ExitCode.conflict;
  if (error instanceof TimeoutError) return ExitCode.timeout;
  if (error instanceof HeldError) return ExitCode.held;
  if (error instanceof InterruptedError) return ExitCode.interrupted;
  if (error instanceof ResultMismatchError) return ExitCode.unexpectedResult;
  return ExitCode.internal;
}

/** The `--json` error document's `error` member. */
export interface ErrorDocument {
  code: string;
  message: string;
  hint: string | null;
  details: ErrorDetails | null;
}

/** Turns any thrown value into the JSON error shape; bugs are labelled `internal`. */
export function toErrorDocument(error: unknown): ErrorDocument {
  if (error instanceof ProviderError) {
    return {
      code: error.code,
      message: error.message,
      hint: error.hint ?? null,
      details: error.details ?? null,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: 'internal',
    message,
    hint: 'This is a bug in provider. Please report it with the command you ran and the output of --verbose.',
    details: null,
  };
}

/**
 * `text` unchanged when it is short enough, else its first `max` characters, an ellipsis and the full length.
 * Release files are written by someone else's tools: a name, hash or value quoted in a message may be megabytes
 * long, and one bad line must not flood a terminal or a CI log (or the `--json` document).
 */
export function shorten(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}
