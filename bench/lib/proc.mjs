// Running commands and measuring them: wall time, exit code, output, and (optionally) peak resident memory.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BIN, cleanEnv } from './env.mjs';

const GNU_TIME = '/usr/bin/time';

/** The median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The p-th percentile (0–100) of a list of numbers, nearest rank. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Runs a command to its end. Resolves with the wall time in ms (spawn to exit), the exit code and output;
 * with `peakRss`, also the peak resident set size in KiB, as the kernel accounts it (GNU time, or else the
 * process's VmHWM polled from /proc).
 */
export function run(
  command,
  args,
  { env = cleanEnv(), cwd, peakRss = false, stdin = 'ignore', timeline } = {},
) {
  const timeFile =
    peakRss && fs.existsSync(GNU_TIME)
      ? path.join(os.tmpdir(), `bench-rss-${process.pid}-${Date.now()}`)
      : undefined;
  const [cmd, argv] = timeFile ? [GNU_TIME, ['-o', timeFile, '-f', '%M', command, ...args]] : [command, args];
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
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
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
      if (timeFile) {
        peakKiB = Number(fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop());
        fs.rmSync(timeFile, { force: true });
      } else if (peakRss) peakKiB = polledKiB;
      resolve({ ms, code, stdout, stderr, peakKiB });
    });
  });
}

/** Runs `provider <args>` (node bin/provider.js) like `run`. */
export function provider(args, options) {
  return run(process.execPath, [BIN, ...args], options);
}

/** Throws with the command's output when it failed. */
export function expectOk(result, what) {
  if (result.code !== 0) {
    throw new Error(
      `${what} failed (exit ${result.code}):\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`,
    );
  }
  return result;
}

/** Reads every file once, so that every run finds them in the page cache (measuring the program, not the disk). */
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
 */
export function startServer(command, args, { env = cleanEnv(), cwd, stderr = 'ignore', onLine } = {}) {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', stderr] });
  let errors = '';
  let partial = '';
  child.stderr?.on('data', (d) => {
    errors = (errors + d).slice(-4000);
    if (!onLine) return;
    const lines = (partial + d).split('\n');
    partial = lines.pop();
    lines.forEach(onLine);
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return new Promise((resolve, reject) => {
    let stdout = '';
    const early = (code) =>
      reject(new Error(`${path.basename(args[0] ?? command)} exited (${code}) before starting: ${errors}`));
    child.on('exit', early);
    let found = false;
    child.stdout.on('data', (d) => {
      stdout += d;
      const lines = stdout.split('\n');
      stdout = lines.pop();
      for (const line of lines) {
        // Lines before the start-up document (node's --trace-gc, say) go to the diagnostics, as later ones do.
        if (found || !line.startsWith('{')) {
          onLine?.(line);
          continue;
        }
        found = true;
        child.off('exit', early);
        resolveStarted(JSON.parse(line));
      }
    });
    const resolveStarted = (doc) =>
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
