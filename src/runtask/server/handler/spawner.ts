/**
 * Handlers are started by a small helper process, not by the integrator itself. Starting a process from
 * Node forks the whole parent, and the parent's event loop waits until the child has exec'd: with an
 * integrator of 100+ MB that blocks it for 5–20 ms per handler (measured on 2 cores, bench/), during which no
 * request is acknowledged. The helper is a bare Node process of a few tens of MB: it forks quickly, and its
 * waits block only itself. It runs each command through the shell in its own process group, collects stdout
 * (up to a limit) and the tail of stderr, and reports the pid at start and the outcome at exit. Killing
 * (timeouts, shutdown) stays with the integrator, which signals the process group by that pid. The helper's
 * program is spawnHelper.ts (run as `node -e` with its source); what the two send each other, spawnProtocol.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Pacer } from './pace.js';
import { helperArgs } from './spawnHelper.js';
import type { HelperMessage, SpawnOutcome, SpawnRequest } from './spawnProtocol.js';

export type { SpawnOutcome, SpawnRequest } from './spawnProtocol.js';

/** Called as the handler starts (with its pid, which is also its process group) and when it is over. */
export interface SpawnCallbacks {
  started(pid: number): void;
  ended(outcome: SpawnOutcome): void;
}

/** The helper process of this integrator, started on first use and restarted if it dies. */
export class Spawner {
  private helper: ChildProcess | undefined;
  private nextId = 0;
  private readonly running = new Map<number, SpawnCallbacks>();
  /** Handlers that end together are reported one per turn of the event loop (pace.ts). */
  private readonly pacer = new Pacer();

  /** Starts a handler; `callbacks` hear about its start and its end (always exactly one `ended`). */
  run(request: SpawnRequest, callbacks: SpawnCallbacks): void {
    const helper = this.ensureHelper();
    const id = this.nextId++;
    this.running.set(id, callbacks);
    helper.channel?.ref();
    helper.send({ id, request }, (error) => {
      if (error) this.end(id, lost(`could not reach the handler runner: ${error.message}`));
    });
  }

  /** Starts the helper now rather than at the first handler (forking it from a busy integrator costs more). */
  warm(): void {
    this.ensureHelper();
  }

  /** Stops the helper (handlers already started keep running, as they would after the integrator exits). */
  close(): void {
    this.helper?.disconnect();
    this.helper = undefined;
  }

  private ensureHelper(): ChildProcess {
    if (this.helper !== undefined && this.helper.connected) return this.helper;
    const helper = spawn(process.execPath, helperArgs(), {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: {},
    });
    helper.on('message', (message: HelperMessage) => {
      if (message.type === 'started') {
        this.running.get(message.id)?.started(message.pid);
        return;
      }
      const { type: _type, id, ...outcome } = message;
      this.pacer.run(() => this.end(id, outcome));
    });
    helper.on('exit', (code, signal) => {
      if (this.helper === helper) this.helper = undefined;
      // Whatever it was running can no longer be followed: those checks fail (their processes may live on).
      for (const id of [...this.running.keys()]) {
        this.end(id, lost(`the handler runner stopped (${signal ?? `exit code ${code}`})`));
      }
    });
    helper.on('error', () => undefined);
    // The helper must not keep the integrator alive: only a running handler does.
    helper.unref();
    helper.channel?.unref();
    this.helper = helper;
    return helper;
  }

  private end(id: number, outcome: SpawnOutcome): void {
    const callbacks = this.running.get(id);
    if (callbacks === undefined) return;
    this.running.delete(id);
    if (this.running.size === 0) this.helper?.channel?.unref();
    callbacks.ended(outcome);
  }
}

function lost(reason: string): SpawnOutcome {
  return {
    exitCode: null,
    signal: null,
    stdout: '',
    stdoutTruncated: false,
    stderrTail: '',
    spawnError: reason,
  };
}
