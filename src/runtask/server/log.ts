/**
 * The integrator's event log, written through the output sink: one JSON object per line on stderr when not on
 * a TTY (for log shippers), a readable line on a TTY. Callers pass only fields they chose, never a request:
 * tokens, the HMAC key and callback query strings have no way in. Listeners let tests await events.
 */
import type { Output } from '../../ui/output.js';

/** Severity of an event. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The fields of an event; undefined values are left out. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** One event as written. */
export interface LogEvent {
  time: string;
  level: LogLevel;
  event: string;
  msg: string;
  fields: LogFields;
}

/** Structured event log over the output sink. */
export class EventLog {
  private readonly listeners = new Set<(event: LogEvent) => void>();
  /** Set on a child log (see `child`): where its events go, and the fields it adds to each. */
  private parent: { log: EventLog; fields: LogFields } | undefined;

  constructor(
    private readonly output: Output,
    private readonly options: { json: boolean; now?: () => Date },
  ) {}

  /** Creates the log: JSON lines unless stderr is an interactive terminal. */
  static for(output: Output, now?: () => Date): EventLog {
    return new EventLog(output, { json: !output.interactive, ...(now ? { now } : {}) });
  }

  /** Calls `listener` for every event (returns the unsubscribe function). */
  subscribe(listener: (event: LogEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A log that adds `fields` to every event (e.g. the route of a job) and writes through this one: this one's
   * listeners see its events too, its own listeners only its events.
   */
  child(fields: LogFields): EventLog {
    const child = new EventLog(this.output, this.options);
    child.parent = { log: this, fields };
    return child;
  }

  debug(event: string, msg: string, fields: LogFields = {}): void {
    this.write('debug', event, msg, fields);
  }

  info(event: string, msg: string, fields: LogFields = {}): void {
    this.write('info', event, msg, fields);
  }

  warn(event: string, msg: string, fields: LogFields = {}): void {
    this.write('warn', event, msg, fields);
  }

  error(event: string, msg: string, fields: LogFields = {}): void {
    this.write('error', event, msg, fields);
  }

  private write(
    level: LogLevel,
    event: string,
    msg: string,
    fields: LogFields,
    childListeners: ReadonlySet<(event: LogEvent) => void> = new Set(),
  ): void {
    if (this.parent !== undefined) {
      const listeners = new Set([...this.listeners, ...childListeners]);
      return this.parent.log.write(level, event, msg, { ...this.parent.fields, ...fields }, listeners);
    }
    const clean: LogFields = {};
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) clean[key] = value;
    const entry: LogEvent = {
      time: (this.options.now?.() ?? new Date()).toISOString(),
      level,
      event,
      msg,
      fields: clean,
    };
    for (const listener of childListeners) listener(entry);
    for (const listener of this.listeners) listener(entry);
    if (level === 'debug' && !this.output.verbose) return;
    if (this.options.json) {
      this.output.infoJson({ time: entry.time, level, event, msg, ...clean });
      return;
    }
    const extra = Object.entries(clean)
      .map(
        ([key, value]) =>
          `${key}=${typeof value === 'string' && /\s/.test(value) ? JSON.stringify(value) : String(value)}`,
      )
      .join(' ');
    const line = `${entry.time.slice(11, 19)} ${msg}${extra ? `  ${this.output.color.dim(extra)}` : ''}`;
    if (level === 'warn' || level === 'error') this.output.warn(line);
    else if (level === 'debug') this.output.debug(line);
    else this.output.info(line);
  }
}
