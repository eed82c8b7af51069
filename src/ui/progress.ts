/**
 * Progress of a long command, three ways: on a terminal an ora spinner per step, byte progress per transfer
 * (percent, bytes, rate) and one overall line under them (total bytes, rate, time left across every file);
 * elsewhere (CI logs) one plain line per event, without ANSI codes or redraws, and a total line when the
 * transfers end; with `--json` nothing at all (notes go to `--verbose` only). Every mark comes from glyphs.ts.
 * Everything written passes through the sink's redaction.
 */
import type { Ora, Options as OraOptions } from 'ora';
import { formatBytes } from '../terraform/names.js';
import { failureMark, successMark } from './glyphs.js';
import type { Output, TextStream } from './output.js';

/** A step in progress. */
export interface StepHandle {
  /** Ends the step; `text` (if any) is what stays on screen. */
  succeed(text?: string): void;
  fail(text?: string): void;
}

/** One file being sent or received. */
export interface TransferHandle {
  /** Bytes moved so far; `total` is the size once it is known (a download's Content-Length, as it starts). */
  update(transferred: number, total?: number): void;
  done(): void;
  fail(): void;
}

/** A batch of transfers: `succeed` prints the total (files, bytes, time, rate), `fail` ends it without one. */
export interface BatchHandle {
  succeed(): void;
  fail(): void;
}

/** What core code reports to; it never knows which of the three renderings it feeds. */
export interface Progress {
  step(text: string): StepHandle;
  /**
   * A step made of `files` transfers of `bytes` in all: the transfers started until it ends count towards
   * its overall line (on a terminal) and its total line.
   */
  uploads(text: string, files: number, bytes: number): BatchHandle;
  /**
   * A step made of `files` downloads of `of` (`acme/example 1.2.0`), whose sizes are not known before each
   * response starts: its overall line counts files and bytes received, with no percent or time left.
   */
  downloads(text: string, files: number, of: string): BatchHandle;
  /** Something worth a line: a retry, a re-fetched link, a lost answer being reconciled. */
  note(text: string): void;
  /** `total` undefined: a download whose size its response will tell (`update`), if it does. */
  transfer(filename: string, total: number | undefined): TransferHandle;
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
    uploads: () => ({ succeed: noop, fail: noop }),
    downloads: () => ({ succeed: noop, fail: noop }),
    note: (text) => output.debug(text),
    transfer: () => ({ update: noop, done: noop, fail: noop }),
    stop: noop,
  };
}

function plainProgress(output: Output, now: () => number): Progress {
  const noop = (): void => undefined;
  let batch: Batch | undefined;
  /** Prints the batch's step line; its total line when it succeeds. */
  const startBatch = (text: string, current: Batch): BatchHandle => {
    output.info(text);
    batch = current;
    const end = (): void => {
      if (batch === current) batch = undefined;
    };
    return {
      succeed: () => {
        end();
        output.info(current.totalLine(now()));
      },
      fail: end,
    };
  };
  return {
    step(text) {
      output.info(text);
      return { succeed: (done) => done !== undefined && output.info(done), fail: noop };
    },
    uploads: (text, files, bytes) =>
      startBatch(text, new Batch({ direction: 'upload', bytes }, files, now())),
    downloads: (text, files, of) => startBatch(text, new Batch({ direction: 'download', of }, files, now())),
    note: (text) => output.info(text),
    transfer(filename, total) {
      const started = now();
      const owner = batch;
      let size = total;
      let received = 0;
      // A download is named as it starts (a stalled one is then in the log); the batch's total line ends it.
      if (owner?.kind.direction === 'download') output.info(`Downloading ${filename} of ${owner.kind.of}`);
      return {
        update: (transferred, known) => {
          received = transferred;
          size = known ?? size;
        },
        done: () => {
          const bytes = size ?? received;
          owner?.finished(bytes);
          if (owner?.kind.direction === 'download') return;
          output.info(`Uploaded ${filename} (${formatBytes(bytes)}, ${rate(bytes, now() - started)})`);
        },
        fail: noop,
      };
    },
    stop: noop,
  };
}

/** A transfer on screen. */
interface Live {
  filename: string;
  /** undefined until a download's response tells its size (and for good when it does not). */
  total: number | undefined;
  transferred: number;
  started: number;
  /** The uploads step it belongs to, if any. */
  batch: Batch | undefined;
}

/**
 * What a batch moves: uploads, whose files' sizes are all known before the first starts; or downloads of one
 * subject, whose sizes are known only as each response starts (its Content-Length, if it sends one). The
 * downloads' overall line counts only what is known, the bytes received: a total summed from the responses
 * started so far would grow as the batch goes, and its percent and time left would mislead.
 */
type BatchKind = { direction: 'upload'; bytes: number } | { direction: 'download'; of: string };

/** The files of one `uploads` or `downloads` step: what is planned, and what has moved completely so far. */
class Batch {
  private doneFiles = 0;
  private doneBytes = 0;

  constructor(
    readonly kind: BatchKind,
    readonly files: number,
    readonly started: number,
  ) {}

  /** A transfer of this batch completed. */
  finished(bytes: number): void {
    this.doneFiles++;
    this.doneBytes += bytes;
  }

  /** The overall line under the per-file lines: every byte sent so far, including the files in flight. */
  overallLine(inFlight: number, at: number): string {
    const elapsed = at - this.started;
    if (this.kind.direction === 'download') {
      const received = this.doneBytes + inFlight;
      return `  all ${this.files} files  ${this.doneFiles}/${this.files} done  ${formatBytes(received)}  ${rate(received, elapsed)}`;
    }
    const { bytes } = this.kind;
    const sent = Math.min(this.doneBytes + inFlight, bytes);
    const percent = bytes === 0 ? 100 : Math.floor((sent / bytes) * 100);
    // The rate so far over the whole batch, not the last instant's: time left stays steady between frames.
    const perMs = elapsed > 0 ? sent / elapsed : 0;
    const left = perMs > 0 ? `  ${duration((bytes - sent) / perMs)} left` : '';
    return `  all ${this.files} files  ${String(percent).padStart(3)}%  ${formatBytes(sent)}/${formatBytes(bytes)}  ${rate(sent, elapsed)}${left}`;
  }

  /** The line that stays when the batch ends: what was sent, how long it took, the rate. */
  totalLine(at: number): string {
    const ms = at - this.started;
    const files = `${this.doneFiles} file${this.doneFiles === 1 ? '' : 's'}`;
    const what =
      this.kind.direction === 'upload' ? `Uploaded ${files}` : `Downloaded ${files} of ${this.kind.of}`;
    return `${what}: ${formatBytes(this.doneBytes)} in ${elapsedText(ms)} (${rate(this.doneBytes, ms)})`;
  }
}

/** One ora spinner for the current step; the step's text lists the uploads in flight, then the overall line. */
class InteractiveProgress implements Progress {
  private readonly spinner: Ora;
  private readonly live = new Map<number, Live>();
  private readonly stream: TextStream;
  private stepText = '';
  private batch: Batch | undefined;
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
      succeed: (done) => (done === undefined ? this.spinner.stop() : this.persistStep('success', done)),
      fail: (why) => this.persistStep('failure', why ?? this.stepText),
    };
  }

  uploads(text: string, files: number, bytes: number): BatchHandle {
    return this.startBatch(text, new Batch({ direction: 'upload', bytes }, files, this.now()));
  }

  downloads(text: string, files: number, of: string): BatchHandle {
    return this.startBatch(text, new Batch({ direction: 'download', of }, files, this.now()));
  }

  private startBatch(text: string, batch: Batch): BatchHandle {
    this.batch = batch;
    const step = this.step(text);
    const end = (): void => {
      if (this.batch === batch) this.batch = undefined;
    };
    return {
      succeed: () => {
        end();
        step.succeed(batch.totalLine(this.now()));
      },
      fail: () => {
        end();
        step.fail();
      },
    };
  }

  note(text: string): void {
    this.persist(`  ${text}`);
  }

  transfer(filename: string, total: number | undefined): TransferHandle {
    const id = this.nextId++;
    const live: Live = { filename, total, transferred: 0, started: this.now(), batch: this.batch };
    this.live.set(id, live);
    this.spinner.text = this.text();
    return {
      update: (transferred, known) => {
        live.transferred = transferred;
        live.total = known ?? live.total;
        this.spinner.text = this.text();
      },
      done: () => {
        this.live.delete(id);
        const bytes = live.total ?? live.transferred;
        live.batch?.finished(bytes);
        // The text first: persisting redraws the spinner under the line, and without this transfer.
        this.spinner.text = this.text();
        const mark = successMark(this.output.color);
        this.persist(
          `${mark} ${filename} (${formatBytes(bytes)}, ${rate(bytes, this.now() - live.started)})`,
        );
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

  /** Ends the spinner with our mark (ora's own succeed/fail would draw its ✔/✖). */
  private persistStep(kind: 'success' | 'failure', text: string): void {
    const mark = kind === 'success' ? successMark(this.output.color) : failureMark(this.output.color);
    this.spinner.stopAndPersist({ symbol: mark, text });
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
      const speed = rate(t.transferred, this.now() - t.started);
      if (t.total === undefined) return `  ${t.filename}  ${formatBytes(t.transferred)}  ${speed}`;
      const percent = t.total === 0 ? 100 : Math.floor((t.transferred / t.total) * 100);
      return `  ${t.filename}  ${String(percent).padStart(3)}%  ${formatBytes(t.transferred)}/${formatBytes(t.total)}  ${speed}`;
    });
    const batch = this.batch;
    // One file has no "overall" beyond its own line; a finished batch shows its total instead.
    if (batch !== undefined && batch.files > 1 && this.live.size > 0) {
      let inFlight = 0;
      for (const t of this.live.values()) if (t.batch === batch) inFlight += t.transferred;
      lines.push(batch.overallLine(inFlight, this.now()));
    }
    return [this.stepText, ...lines].join('\n');
  }
}

/** A bytes-per-second figure: `1.2 MiB/s`. */
function rate(bytes: number, ms: number): string {
  return `${formatBytes(Math.round((bytes * 1000) / Math.max(ms, 1)))}/s`;
}

/** `850ms`, `1.3s`. */
function elapsedText(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

/** Time left, rounded up to the second: `4s`, `2m 05s`. */
function duration(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
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
