/**
 * Progress of a long command, three ways: on a terminal an ora spinner per step and byte progress per upload
 * (percent, bytes, rate); elsewhere (CI logs) one plain line per event, without ANSI codes; with `--json`
 * nothing at all (notes go to `--verbose` only). Everything written passes through the sink's redaction.
 */
import type { Ora, Options as OraOptions } from 'ora';
import { formatBytes } from '../release/report.js';
import type { Output, TextStream } from './output.js';

/** A step in progress. */
export interface StepHandle {
  /** Ends the step; `text` (if any) is what stays on screen. */
  succeed(text?: string): void;
  fail(text?: string): void;
}

/** One file being sent. */
export interface TransferHandle {
  update(transferred: number): void;
  done(): void;
  fail(): void;
}

/** What core code reports to; it never knows which of the three renderings it feeds. */
export interface Progress {
  step(text: string): StepHandle;
  /** Something worth a line: a retry, a re-fetched link, a lost answer being reconciled. */
  note(text: string): void;
  transfer(filename: string, total: number): TransferHandle;
  /** Stops any spinner (call in `finally`). */
  stop(): void;
}

/**
 * Chooses the rendering from the sink: silent with `--json`, spinners on a TTY, plain lines otherwise. ora is
 * loaded only for a terminal: CI runs and `--json` never pay for it.
 */
export async function createProgress(
  output: Output,
  options: { stream?: TextStream | undefined; now?: () => number } = {},
): Promise<Progress> {
  const now = options.now ?? Date.now;
  if (output.json) return silentProgress(output);
  if (output.interactive && options.stream !== undefined && !output.quiet) {
    const { default: ora } = await import('ora');
    return new InteractiveProgress(output, options.stream, now, ora);
  }
  return plainProgress(output, now);
}

function silentProgress(output: Output): Progress {
  const noop = (): void => undefined;
  return {
    step: () => ({ succeed: noop, fail: noop }),
    note: (text) => output.debug(text),
    transfer: () => ({ update: noop, done: noop, fail: noop }),
    stop: noop,
  };
}

function plainProgress(output: Output, now: () => number): Progress {
  const noop = (): void => undefined;
  return {
    step(text) {
      output.info(text);
      return { succeed: (done) => done !== undefined && output.info(done), fail: noop };
    },
    note: (text) => output.info(text),
    transfer(filename, total) {
      const started = now();
      return {
        update: noop,
        done: () =>
          output.info(`Uploaded ${filename} (${formatBytes(total)}, ${rate(total, now() - started)})`),
        fail: noop,
      };
    },
    stop: noop,
  };
}

/** A transfer on screen. */
interface Live {
  filename: string;
  total: number;
  transferred: number;
  started: number;
}

/** One ora spinner for the current step; the step's text lists the uploads in flight. */
class InteractiveProgress implements Progress {
  private readonly spinner: Ora;
  private readonly live = new Map<number, Live>();
  private readonly stream: TextStream;
  private stepText = '';
  private nextId = 0;

  constructor(
    private readonly output: Output,
    target: TextStream,
    private readonly now: () => number,
    ora: (options: OraOptions) => Ora,
  ) {
    this.stream = terminal(target, output);
    this.spinner = ora({
      stream: this.stream as unknown as NodeJS.WritableStream,
      isEnabled: true,
      discardStdin: false,
      color: output.color.level > 0 ? 'cyan' : false,
    });
  }

  step(text: string): StepHandle {
    this.stepText = text;
    // A step left open (its work threw) is simply replaced: start() alone would keep the old text.
    this.spinner.text = this.text();
    if (!this.spinner.isSpinning) this.spinner.start();
    return {
      succeed: (done) => (done === undefined ? this.spinner.stop() : this.spinner.succeed(done)),
      fail: (why) => this.spinner.fail(why ?? this.stepText),
    };
  }

  note(text: string): void {
    this.persist(`  ${text}`);
  }

  transfer(filename: string, total: number): TransferHandle {
    const id = this.nextId++;
    const live: Live = { filename, total, transferred: 0, started: this.now() };
    this.live.set(id, live);
    this.spinner.text = this.text();
    return {
      update: (transferred) => {
        live.transferred = transferred;
        this.spinner.text = this.text();
      },
      done: () => {
        this.live.delete(id);
        this.persist(`✓ ${filename} (${formatBytes(total)}, ${rate(total, this.now() - live.started)})`);
        this.spinner.text = this.text();
      },
      fail: () => {
        this.live.delete(id);
        this.spinner.text = this.text();
      },
    };
  }

  stop(): void {
    this.spinner.stop();
  }

  /** Writes a line above the spinner. */
  private persist(line: string): void {
    const spinning = this.spinner.isSpinning;
    if (spinning) this.spinner.clear();
    this.stream.write(`${line}\n`);
    if (spinning) this.spinner.render();
  }

  private text(): string {
    const lines = [...this.live.values()].map((t) => {
      const percent = t.total === 0 ? 100 : Math.floor((t.transferred / t.total) * 100);
      const sent = `${formatBytes(t.transferred)}/${formatBytes(t.total)}`;
      return `  ${t.filename}  ${String(percent).padStart(3)}%  ${sent}  ${rate(t.transferred, this.now() - t.started)}`;
    });
    return [this.stepText, ...lines].join('\n');
  }
}

/** A bytes-per-second figure: `1.2 MiB/s`. */
function rate(bytes: number, ms: number): string {
  return `${formatBytes(Math.round((bytes * 1000) / Math.max(ms, 1)))}/s`;
}

/** What ora needs of a terminal, over the command's stderr, with the sink's redaction on every write. */
function terminal(target: TextStream, output: Output): TextStream & Record<string, unknown> {
  const write = (text: string): boolean => {
    target.write(output.redact(text));
    return true;
  };
  // A terminal that reports 0 columns (a pty nobody sized: `script`, `docker run -t`, some CI runners) would
  // have ora count every line as infinitely many rows, and erase them one by one without end.
  const reported = (target as { columns?: number }).columns;
  const columns = reported !== undefined && reported > 0 ? reported : 80;
  return {
    isTTY: true,
    columns,
    write: (chunk: string | Uint8Array) =>
      write(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()),
    cursorTo: (x: number) => write(`\u001b[${x + 1}G`),
    moveCursor: (_dx: number, dy: number) => write(dy < 0 ? `\u001b[${-dy}A` : dy > 0 ? `\u001b[${dy}B` : ''),
    clearLine: () => write('\u001b[2K'),
    on: () => undefined,
    once: () => undefined,
    removeListener: () => undefined,
  };
}
