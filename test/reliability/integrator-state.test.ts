/**
 * `provider runtask serve` (spawned: `node bin/provider.cjs`) while its state dir fails under it, against the test
 * platform of test/runtask/:
 *
 * - removed under load: requests keep coming in waves while handlers run, and a cleaner removes the whole
 *   folder again and again at seeded moments;
 * - unwritable: a file stands where the folder was (chmod would not stop root), while checks run and finish;
 * - full: a small tmpfs mounted as the folder and filled up (as root, where mount is allowed), or else an
 *   injected ENOSPC on every write under the folder (`enospc-hook.mjs`); the test's name says which one ran.
 *
 * What must hold in each: the process never dies; every request is either refused before its 200 (503 with
 * Retry-After, and then never called back) or accepted and given exactly one final callback; /healthz always
 * answers and says what happened; the folder, its lock and the records of the jobs in flight come back once the
 * folder can be written; at the end the journal is empty, and no token or HMAC key is in the log or the folder.
 */
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PRE_PLAN_REQUEST } from '../runtask/documented-payloads.js';
import { bytesOf, journaledIds, requestFor } from '../runtask/helpers.js';
import { TestPlatform, statusOf } from '../runtask/platform.js';
import {
  ensureBuilt,
  replaceWithFile,
  spawnServe,
  type HealthBody,
  type ServeProcess,
} from '../runtask/serveProcess.js';
import { removeTempDirs, tempDir } from '../helpers/tmp.js';
import { SOAK, expectNoSecretIn, expectNoSecretInFiles, report, seeded, type Random } from './helpers.js';

const HANDLER = fileURLToPath(new URL('./state-handler.sh', import.meta.url));
const HOOK = fileURLToPath(new URL('./enospc-hook.mjs', import.meta.url));
const KEY = `state-hmac-${randomBytes(16).toString('hex')}`;
const SEED = 910_001;

/**
 * How the full disk is made: a real tmpfs where this process may mount one (root, mount allowed), else an
 * injected ENOSPC. PROVIDER_FULL_DISK=injected forces the fallback (to test it where tmpfs works).
 */
const FULL_DISK: 'tmpfs' | 'injected ENOSPC' = (() => {
  if (process.env.PROVIDER_FULL_DISK === 'injected') return 'injected ENOSPC';
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'injected ENOSPC';
  const probe = tempDir('tmpfs-probe');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return 'tmpfs';
  } catch {
    return 'injected ENOSPC'; // EPERM in a container, no mount(8), …
  } finally {
    removeTempDirs(probe);
  }
})();

let platform: TestPlatform;
let root: string;
let serving: ServeProcess | undefined;
const mounts: string[] = [];

beforeAll(async () => {
  ensureBuilt();
  root = tempDir();
  platform = await TestPlatform.start();
}, 120_000);
afterEach(async () => {
  if (serving && serving.child.exitCode === null && serving.child.signalCode === null) {
    serving.child.kill('SIGKILL');
    await serving.exit;
  }
  serving = undefined;
  for (const mount of mounts.splice(0)) {
    try {
      execFileSync('umount', ['-l', mount], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  }
});
afterAll(async () => {
  await platform.close();
});

/** One scenario's integrator, its requests and what became of them. */
class Scenario {
  /** HTTP status of every job request, by task result id. */
  readonly answers = new Map<string, number>();
  readonly tokens = new Set<string>();
  /** Every /healthz answer seen. */
  readonly health: { status: number; body: HealthBody }[] = [];
  refusedWithoutRetryAfter = 0;
  readonly gate: string;

  private constructor(
    readonly name: string,
    readonly p: ServeProcess,
    gate: string,
  ) {
    this.gate = gate;
  }

  static async start(
    name: string,
    stateDir: string,
    extra: { nodeArgs?: string[]; env?: Record<string, string> } = {},
  ): Promise<Scenario> {
    const gate = path.join(root, `${name}-gate`);
    const p = await spawnServe({
      platform,
      stateDir,
      exec: `sh '${HANDLER}'`,
      key: KEY,
      cwd: root,
      args: ['--max-jobs', '16', '--grace', '5s', '--callback-timeout', '30s', '--timeout', '60s'],
      env: { STATE_TEST_GATE: gate, ...extra.env },
      nodeArgs: extra.nodeArgs ?? [],
    });
    serving = p;
    return new Scenario(name, p, gate);
  }

  /** Sends one signed job request whose handler does `behaviour`; resolves with the HTTP status. */
  async send(behaviour: string): Promise<number> {
    const token = `state-token-${randomBytes(12).toString('hex')}`;
    this.tokens.add(token);
    const base = requestFor(PRE_PLAN_REQUEST, platform, { access_token: token });
    const request = { ...base, run_id: `run-${behaviour}-${base.run_id}` };
    const body = bytesOf(request);
    const response = await this.p.orExit(
      fetch(this.p.url, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'x-tfc-task-signature': sign(body),
          'user-agent': 'TFC/1.0 (+https://app.terraform.io; TFC)',
        },
      }),
    );
    await response.arrayBuffer();
    this.answers.set(request.task_result_id, response.status);
    if (response.status === 503 && !(Number(response.headers.get('retry-after')) > 0))
      this.refusedWithoutRetryAfter++;
    return response.status;
  }

  /** Sends `n` requests at once. */
  async burst(n: number, behaviour: (i: number) => string): Promise<number[]> {
    return Promise.all(Array.from({ length: n }, (_, i) => this.send(behaviour(i))));
  }

  async healthz(): Promise<{ status: number; body: HealthBody }> {
    const answer = await this.p.health();
    this.health.push(answer);
    return answer;
  }

  ids(status: number): string[] {
    return [...this.answers].filter(([, s]) => s === status).map(([id]) => id);
  }

  finals(id: string): number {
    return platform.callbacks(id).filter((r) => ['passed', 'failed'].includes(statusOf(r) ?? '')).length;
  }

  /** Resolves once every accepted request has its final callback (or the process ends: a failure). */
  async allFinished(): Promise<void> {
    for (const id of this.ids(200)) {
      await this.p.orExit(platform.waitForCallbacks(id, 'passed'));
    }
  }

  /** The records in the folder's journal, by job id. */
  records(stateDir: string): string[] {
    return journaledIds(stateDir);
  }

  /**
   * Nothing lost: every accepted request has exactly one final callback, refusals are only 503 with Retry-After
   * and never called back, and /healthz always answered.
   */
  async expectNothingLost(): Promise<void> {
    await this.allFinished();
    const other = [...this.answers.values()].filter((s) => s !== 200 && s !== 503);
    expect(other, `${this.name}: answers other than 200 and 503`).toEqual([]);
    expect(this.refusedWithoutRetryAfter, `${this.name}: 503 without Retry-After`).toBe(0);
    const accepted = this.ids(200);
    const refused = this.ids(503);
    expect(
      accepted.filter((id) => this.finals(id) !== 1),
      `${this.name}: accepted jobs without exactly one final callback`,
    ).toEqual([]);
    expect(
      refused.filter((id) => platform.callbacks(id).length > 0),
      `${this.name}: refused requests that were called back`,
    ).toEqual([]);
    expect(this.health.filter((h) => h.status !== 200 && h.status !== 503).map((h) => h.status)).toEqual([]);
  }

  /** Then a clean stop (exit 0), an empty journal, no secret in the log or the folder; returns the figures. */
  async expectCleanStop(stateDir: string): Promise<string> {
    const accepted = this.ids(200);
    const refused = this.ids(503);
    expect(await this.p.stop(), `${this.name}: the exit on SIGTERM`).toEqual({ code: 0, signal: null });
    expect(this.records(stateDir), `${this.name}: records left in the journal`).toEqual([]);
    const secrets = [KEY, ...this.tokens];
    expectNoSecretIn(this.p.stderr(), secrets, `${this.name}: the integrator's log`);
    const scanned = expectNoSecretInFiles(stateDir, secrets, `${this.name}: the state dir`);
    const events = this.p.events();
    const count = (name: string): number => events.filter((e) => e.event === name).length;
    return (
      `${accepted.length} accepted (each with one final callback), ${refused.length} refused with 503, ` +
      `${count('journal.failed')} journal.failed / ${count('journal.restored')} journal.restored, ` +
      `${this.health.length} /healthz answers, ${scanned} files left in the state dir scanned`
    );
  }
}

/** Signs as the platform signs (written out here, so that a bug in src/ cannot hide). */
function sign(body: string): string {
  return createHmac('sha512', KEY).update(body).digest('hex');
}

/** Polls /healthz every 50 ms until `done` settles. */
async function pollHealthWhile<T>(scenario: Scenario, done: Promise<T>): Promise<T> {
  let finished = false;
  const poller = (async () => {
    while (!finished) {
      await scenario.healthz();
      await sleep(50);
    }
  })();
  try {
    return await done;
  } finally {
    finished = true;
    await poller;
  }
}

describe.sequential('runtask serve when its state dir fails', () => {
  it('state folder removed under load: every accepted request gets exactly one final callback', async () => {
    const r: Random = seeded(SEED);
    const stateDir = path.join(root, 'removed');
    const s = await Scenario.start('removed under load', stateDir);
    const waves = 4 * Math.min(SOAK, 4);
    let removals = 0;
    let sending = true;
    // The cleaner: removes the whole folder at seeded moments, as long as requests are sent and handlers run.
    const cleaner = (async () => {
      while (sending || s.ids(200).some((id) => s.finals(id) === 0)) {
        await sleep(r.int(30, 250));
        try {
          fs.rmSync(stateDir, { recursive: true, force: true });
          removals++;
        } catch {
          // The integrator wrote into it meanwhile (ENOTEMPTY): removed partly, as a cleaner would.
        }
      }
    })();
    await pollHealthWhile(
      s,
      (async () => {
        for (let w = 0; w < waves; w++) {
          await s.burst(20, () => `sleep${r.int(0, 4)}`);
          await sleep(r.int(0, 200));
        }
        sending = false;
        await s.allFinished();
      })(),
    );
    await cleaner;
    await s.expectNothingLost();
    const health = await s.healthz();
    expect(health.status).toBe(200);
    expect(health.body.store).toMatchObject({ status: 'ok', unsaved: 0 });
    expect(Number(health.body.store!.problems)).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(stateDir, 'integrator.lock'))).toBe(true);
    const figures = await s.expectCleanStop(stateDir);
    expect(s.ids(200).length).toBeGreaterThan(0);
    report(`integrator state dir, removed under load (seed ${SEED}): ${removals} removals; ${figures}`);
  }, 300_000);

  it('state folder unwritable (a file where it was): new requests get 503, accepted checks report, and it heals', async () => {
    const stateDir = path.join(root, 'unwritable');
    const s = await Scenario.start('unwritable', stateDir);
    expect(await s.burst(12, (i) => `gate${i % 2}`)).toEqual(Array(12).fill(200));
    for (const id of s.ids(200)) await s.p.orExit(platform.waitForCallbacks(id, 'running'));
    const first = s.ids(200);

    replaceWithFile(stateDir);
    expect(await s.burst(20, () => 'gate9')).toEqual(Array(20).fill(503));
    const degraded = await s.healthz();
    expect(degraded.status).toBe(503);
    expect(degraded.body).toMatchObject({ status: 'degraded', store: { status: 'failing', unsaved: 12 } });
    expect(
      s.p
        .events()
        .filter((e) => e.event === 'journal.failed')
        .at(-1),
    ).toMatchObject({ code: 'ENOTDIR' });

    // Half the checks finish while nothing can be written: they report all the same.
    fs.writeFileSync(`${s.gate}.0`, '');
    const half = first.filter((_, i) => i % 2 === 0);
    for (const id of half) await s.p.orExit(platform.waitForCallbacks(id, 'passed'));

    // The folder can be written again: re-created with the records of the checks still running, and no others.
    fs.rmSync(stateDir);
    const healed = await s.healthz();
    expect(healed.status).toBe(200);
    expect(healed.body.store).toMatchObject({ status: 'ok', unsaved: 0 });
    expect(s.records(stateDir)).toEqual(first.filter((_, i) => i % 2 === 1).sort());
    expect(await s.p.waitForEvent('journal.restored')).toMatchObject({ recreated: true, records: 6 });

    fs.writeFileSync(`${s.gate}.1`, '');
    expect(await s.burst(10, () => 'sleep1')).toEqual(Array(10).fill(200));
    await s.expectNothingLost();
    const figures = await s.expectCleanStop(stateDir);
    report(`integrator state dir, unwritable: ${figures}`);
  }, 120_000);

  it(`full disk (${FULL_DISK}): new requests get 503 leaving no record, accepted checks report, and it heals once space is freed`, async () => {
    const stateDir = path.join(root, 'full');
    fs.mkdirSync(stateDir, { mode: 0o700 });
    const marker = path.join(root, 'full.marker');
    let fill: () => void;
    let free: () => void;
    let extra = {};
    if (FULL_DISK === 'tmpfs') {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', stateDir]);
      mounts.push(stateDir);
      const filler = path.join(stateDir, 'filler');
      fill = () => {
        const fd = fs.openSync(filler, 'w');
        // Large chunks first, then down to single bytes, so that not a byte is left.
        for (const size of [65536, 4096, 1]) {
          try {
            for (;;) fs.writeSync(fd, Buffer.alloc(size));
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          }
        }
        fs.closeSync(fd);
      };
      free = () => fs.rmSync(filler);
    } else {
      extra = {
        nodeArgs: ['--import', HOOK],
        env: { PROVIDER_TEST_FULL: marker, PROVIDER_TEST_FULL_DIR: stateDir },
      };
      fill = () => fs.writeFileSync(marker, '');
      free = () => fs.rmSync(marker);
    }
    const s = await Scenario.start('full disk', stateDir, extra);
    expect(await s.burst(10, (i) => `gate${i % 2}`)).toEqual(Array(10).fill(200));
    for (const id of s.ids(200)) await s.p.orExit(platform.waitForCallbacks(id, 'running'));
    const first = s.ids(200);

    fill();
    const onFull = await s.burst(20, () => 'gate9');
    // A record that still fits in the journal file's last page (a tmpfs allocates whole pages) is written, and its
    // request accepted; the rest are refused. Injected, every write fails.
    expect(onFull.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(onFull.filter((status) => status === 503).length).toBeGreaterThanOrEqual(
      FULL_DISK === 'tmpfs' ? 16 : 20,
    );
    const fitted = s.ids(200).filter((id) => !first.includes(id));
    // A refused request leaves nothing behind: no record, whole or torn, and no temp file.
    expect(
      fs
        .readdirSync(stateDir)
        .filter((f) => f !== 'filler' && f !== 'integrator.lock')
        .sort(),
    ).toEqual(['journal.jsonl']);
    expect(s.records(stateDir)).toEqual([...first, ...fitted].sort());
    const degraded = await s.healthz();
    expect(degraded.status).toBe(503);
    expect(degraded.body).toMatchObject({
      status: 'degraded',
      store: { status: 'failing', lastProblem: { code: 'ENOSPC' } },
    });

    // Half the checks finish on the full disk: their results cannot be journaled, and are delivered anyway.
    fs.writeFileSync(`${s.gate}.0`, '');
    for (const id of first.filter((_, i) => i % 2 === 0)) {
      await s.p.orExit(platform.waitForCallbacks(id, 'passed'));
    }

    free();
    const healed = await s.healthz();
    expect(healed.status).toBe(200);
    expect(healed.body.store).toMatchObject({ status: 'ok', unsaved: 0 });
    expect(s.records(stateDir)).toEqual([...first.filter((_, i) => i % 2 === 1), ...fitted].sort());
    fs.writeFileSync(`${s.gate}.1`, '');
    fs.writeFileSync(`${s.gate}.9`, '');
    expect(await s.burst(10, () => 'sleep1')).toEqual(Array(10).fill(200));
    await s.expectNothingLost();
    const figures = await s.expectCleanStop(stateDir);
    report(`integrator state dir, full disk (${FULL_DISK}): ${figures}`);
  }, 120_000);
});
