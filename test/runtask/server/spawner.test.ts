/**
 * The handler runner (spawner.ts) and the pacing of bursts (pace.ts): handlers are started by a helper process,
 * report their pid and their outcome exactly once, and a helper that dies ends every handler it was following;
 * paced tasks run in order, one per turn of the event loop.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Pacer } from '../../../src/runtask/server/handler/pace.js';
import {
  Spawner,
  type SpawnOutcome,
  type SpawnRequest,
} from '../../../src/runtask/server/handler/spawner.js';
import { tempDir } from '../../helpers/tmp.js';

const spawners: Spawner[] = [];
afterEach(() => {
  for (const s of spawners.splice(0)) s.close();
});

function request(command: string): SpawnRequest {
  return {
    command,
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GREETING: 'hello' },
    stdoutLimit: 16,
    stderrTail: 8,
    closeWaitMs: 200,
  };
}

function run(spawner: Spawner, command: string): Promise<{ pid?: number; outcome: SpawnOutcome }> {
  return new Promise((resolve) => {
    let pid: number | undefined;
    spawner.run(request(command), {
      started: (p) => (pid = p),
      ended: (outcome) => resolve({ ...(pid === undefined ? {} : { pid }), outcome }),
    });
  });
}

describe('Spawner', () => {
  it('runs the command through the shell with the given environment, and reports pid and outcome', async () => {
    const spawner = new Spawner();
    spawners.push(spawner);
    const { pid, outcome } = await run(spawner, 'printf "$GREETING"; echo "0123456789abcdef" >&2; exit 3');
    expect(pid).toBeGreaterThan(0);
    expect(outcome).toMatchObject({ exitCode: 3, signal: null, stdout: 'hello', stdoutTruncated: false });
    expect(outcome.stderrTail).toBe('9abcdef\n');
  });

  it('cuts stdout at its limit and says so', async () => {
    const spawner = new Spawner();
    spawners.push(spawner);
    const { outcome } = await run(spawner, 'printf "%040d" 0');
    expect(outcome.stdout).toHaveLength(16);
    expect(outcome.stdoutTruncated).toBe(true);
  });

  it('runs handlers side by side (the helper does not wait for one before starting the next)', async () => {
    const spawner = new Spawner();
    spawners.push(spawner);
    const dir = tempDir();
    // Each handler checks in, then waits for all four: run one after another, the first would give up (exit 1).
    const command = (n: number): string =>
      `touch "${dir}/${n}"; i=0; while [ "$(ls "${dir}" | wc -l)" -lt 4 ]; do ` +
      `sleep 0.05; i=$((i+1)); [ $i -gt 200 ] && exit 1; done; exit 0`;
    const outcomes = await Promise.all([1, 2, 3, 4].map((n) => run(spawner, command(n))));
    expect(outcomes.map((o) => o.outcome.exitCode)).toEqual([0, 0, 0, 0]);
  });

  it('ends the handlers it follows when the helper dies, and starts a new helper for the next one', async () => {
    const spawner = new Spawner();
    spawners.push(spawner);
    const pending = run(spawner, 'sleep 5');
    const helper = (spawner as unknown as { helper: { pid: number } }).helper;
    await new Promise((r) => setTimeout(r, 200));
    process.kill(helper.pid, 'SIGKILL');
    const { pid, outcome } = await pending;
    expect(outcome.exitCode).toBeNull();
    expect(outcome.spawnError).toMatch(/the handler runner stopped \(SIGKILL\)/);
    if (pid !== undefined) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    const next = await run(spawner, 'exit 0');
    expect(next.outcome.exitCode).toBe(0);
  });
});

describe('Pacer', () => {
  it('runs tasks in order, one per turn of the event loop', async () => {
    const pacer = new Pacer();
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      // `mark` is queued while `a` runs, so it runs in the next turn: after `b` when each task gets a turn of
      // its own, after `c` when they all run at once.
      pacer.run(() => {
        seen.push('a');
        setImmediate(() => seen.push('mark'));
      });
      pacer.run(() => seen.push('b'));
      pacer.run(() => seen.push('c'));
      pacer.run(() => resolve());
    });
    expect(seen).toEqual(['a', 'b', 'mark', 'c']);
  });
});
