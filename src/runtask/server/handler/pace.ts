/**
 * Work that may come in bursts, done one piece per turn of the event loop. When `--max-jobs` handlers end
 * together (they started together), finishing them all in one turn (results, callbacks, journal, the next
 * handlers) holds up every request that arrives meanwhile by tens of milliseconds (bench/, figure 6). Paced,
 * each piece runs after the turn's network events, so a request waits for at most one piece.
 */
export class Pacer {
  private readonly queue: (() => void)[] = [];
  private scheduled = false;

  /** Runs `task` in a later turn, after the tasks queued before it. `task` must not throw. */
  run(task: () => void): void {
    this.queue.push(task);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.next);
    }
  }

  private readonly next = (): void => {
    const task = this.queue.shift();
    if (this.queue.length > 0) setImmediate(this.next);
    else this.scheduled = false;
    task?.();
  };
}
