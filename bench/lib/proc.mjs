// Running commands and measuring them: wall time, exit code, output, and (optionally) peak resident memory.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BIN, cleanEnv } from './env.mjs';

const GNU_TIME = '/usr/bin/time';

/**
 * JSON.parse, typed as what it is until the caller says more.
 * @param {string} text
 * @returns {unknown}
 */
const parseJson = (text) => JSON.parse(text);

/**
 * How `run` starts a command.
 * @typedef {object} RunOptions
 * @property {NodeJS.ProcessEnv} [env] the command's whole environment (default: `cleanEnv()`)
 * @property {string} [cwd]
 * @property {boolean} [peakRss] also measure the peak resident set size
 * @property {boolean} [cpu] also measure the CPU time (user + system) of the command and the children it waited for
 * @property {'ignore' | 'pipe' | 'inherit'} [stdin]
 * @property {{ ms: number, line: string }[]} [timeline] receives every stderr line with its ms since the start
 */

/**
 * How a command ended, and what it took.
 * @typedef {object} RunResult
 * @property {number} ms wall time, spawn to exit
 * @property {number | null} code exit code (null when killed by a signal)
 * @property {string} stdout
 * @property {string} stderr
 * @property {number | undefined} peakKiB with `peakRss`: peak resident set size in KiB
 * @property {number | undefined} cpuMs with `cpu`: user + system CPU time in ms (GNU time's, to 10 ms)
 */

/**
 * How `startServer` starts a server.
 * @typedef {object} ServerOptions
 * @property {NodeJS.ProcessEnv} [env] the server's whole environment (default: `cleanEnv()`)
 * @property {string} [cwd]
 * @property {'ignore' | 'pipe'} [stderr]
 * @property {(line: string) => unknown} [onLine] hears every line other than the start-up document
 */

/**
 * A started server.
 * @template [Doc=unknown]
 * @typedef {object} StartedServer
 * @property {Doc} doc the start-up document (the first JSON line on stdout)
 * @property {import('node:child_process').ChildProcess} child
 * @property {(signal?: NodeJS.Signals) => Promise<void>} stop signals the server (SIGTERM) and waits for its exit
 */

/**
 * The median of a (non-empty) list of numbers.
 * @param {number[]} values
 * @returns {number}
 */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const at = (/** @type {number} */ i) => /** @type {number} */ (sorted[i]);
  return sorted.length % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}

/**
 * The p-th percentile (0–100) of a (non-empty) list of numbers, nearest rank.
 * @param {number[]} values
 * @param {number} p
 * @returns {number}
 */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return /** @type {number} */ (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
  );
}

/**
 * Runs a command to its end. Resolves with the wall time in ms (spawn to exit), the exit code and output;
 * with `peakRss`, also the peak resident set size in KiB, as the kernel accounts it (GNU time, or else the
 * process's VmHWM polled from /proc); with `cpu`, the CPU time user + system as GNU time reports it (the
 * rusage of the command and of its children it waited for: every thread of a node process is counted).
 * @param {string} command
 * @param {string[]} args
 * @param {RunOptions} [options]
 * @returns {Promise<RunResult>}
 */
export function run(
  command,
  args,
  { env = cleanEnv(), cwd, peakRss = false, cpu = false, stdin = 'ignore', timeline } = {},
) {
  if (cpu && !fs.existsSync(GNU_TIME)) throw new Error(`measuring CPU time needs GNU time (${GNU_TIME})`);
  const timeFile =
    (peakRss || cpu) && fs.existsSync(GNU_TIME)
      ? path.join(os.tmpdir(), `bench-rss-${process.pid}-${Date.now()}`)
      : undefined;
  const [cmd, argv] = timeFile
    ? [GNU_TIME, ['-o', timeFile, '-f', '%M %U %S', command, ...args]]
    : [command, args];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(cmd, argv, { env, cwd, stdio: [stdin, 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let polledKiB = 0;
    const poll =
      peakRss && !timeFile
        ? setInterval(() => {
            try {
              const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
              polledKiB = Math.max(polledKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
            } catch {
              // gone already
            }
          }, 10)
        : undefined;
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => {
      stderr += d;
      if (timeline) {
        const ms = Math.round(Number(process.hrtime.bigint() - started) / 1e6);
        for (const line of String(d).split('\n')) if (line) timeline.push({ ms, line });
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (poll) clearInterval(poll);
      let peakKiB;
      let cpuMs;
      if (timeFile) {
        // The last line: GNU time writes "Command exited with non-zero status" before it when it did.
        const [kib, user, system] = (fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop() ?? '')
          .split(' ')
          .map(Number);
        fs.rmSync(timeFile, { force: true });
        if (peakRss) peakKiB = kib;
        if (cpu) cpuMs = ((user ?? NaN) + (system ?? NaN)) * 1000;
      } else if (peakRss) peakKiB = polledKiB;
      resolve({ ms, code, stdout, stderr, peakKiB, cpuMs });
    });
  });
}

/**
 * Runs `provider <args>` (node bin/provider.cjs) like `run`.
 * @param {string[]} args
 * @param {RunOptions} [options]
 */
export function provider(args, options) {
  return run(process.execPath, [BIN, ...args], options);
}

/**
 * Throws with the command's output when it failed.
 * @param {RunResult} result
 * @param {string} what
 */
export function expectOk(result, what) {
  if (result.code !== 0) {
    throw new Error(
      `${what} failed (exit ${result.code}):\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`,
    );
  }
  return result;
}

/**
 * Reads every file once, so that every run finds them in the page cache (measuring the program, not the disk).
 * @param {string[]} files
 */
export function warm(files) {
  const buffer = Buffer.alloc(4 << 20);
  for (const file of files) {
    const fd = fs.openSync(file, 'r');
    while (fs.readSync(fd, buffer) > 0);
    fs.closeSync(fd);
  }
}

/**
 * Starts a long-running process that prints one JSON line when it is ready (a server's start-up line).
 * Resolves with that document, the child, and `stop()` (SIGTERM, then wait for the exit). `onLine`, when
 * given, hears every other line of stdout and, with `stderr: 'pipe'`, of stderr (diagnostics such as --trace-gc).
 * @template [Doc=any] the start-up document's shape, as the caller knows it
 * @param {string} command
 * @param {string[]} args
 * @param {ServerOptions} [options]
 * @returns {Promise<StartedServer<Doc>>}
 */
export function startServer(command, args, { env = cleanEnv(), cwd, stderr = 'ignore', onLine } = {}) {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', stderr] });
  let errors = '';
  let partial = '';
  child.stderr?.on('data', (d) => {
    errors = (errors + d).slice(-4000);
    if (!onLine) return;
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    lines.forEach(onLine);
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return new Promise((resolve, reject) => {
    let stdout = '';
    const early = (/** @type {number | null} */ code) =>
      reject(new Error(`${path.basename(args[0] ?? command)} exited (${code}) before starting: ${errors}`));
    child.on('exit', early);
    let found = false;
    child.stdout?.on('data', (d) => {
      stdout += d;
      const lines = stdout.split('\n');
      stdout = lines.pop() ?? '';
      for (const line of lines) {
        // Lines before the start-up document (node's --trace-gc, say) go to the diagnostics, as later ones do.
        if (found || !line.startsWith('{')) {
          onLine?.(line);
          continue;
        }
        found = true;
        child.off('exit', early);
        resolveStarted(/** @type {Doc} */ (parseJson(line)));
      }
    });
    const resolveStarted = (/** @type {Doc} */ doc) =>
      resolve({
        doc,
        child,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
  });
}
