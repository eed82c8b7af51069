/** `--max-jobs`: a first-come, first-served bound on the handlers running at once; the rest wait in line. */

interface Waiter {
  grant: (release: () => void) => void;
  fail: (reason: Error) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/** A counting semaphore whose waits can be aborted. */
export class Slots {
  private free: number;
  private readonly line: Waiter[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** How many are waiting for a slot. */
  get waiting(): number {
    return this.line.length;
  }

  /** True when a slot is free right now. */
  get available(): boolean {
    return this.free > 0;
  }

  /** Resolves with the release function once a slot is free; rejects when the signal fires first. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(abortedWait(signal));
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(this.releaser());
    }
    return new Promise((grant, fail) => {
      const waiter: Waiter = {
        grant,
        fail,
        signal,
        onAbort: () => {
          this.line.splice(this.line.indexOf(waiter), 1);
          fail(abortedWait(signal));
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.line.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.line.shift();
      if (next === undefined) {
        this.free++;
        return;
      }
      next.signal.removeEventListener('abort', next.onAbort);
      next.grant(this.releaser());
    };
  }
}

/** The rejection of a wait that `signal` cut short: an Error, as Node's own APIs reject, with the abort reason as its cause. */
function abortedWait(signal: AbortSignal): Error {
  return new Error('the wait for a slot was aborted', { cause: signal.reason });
}
