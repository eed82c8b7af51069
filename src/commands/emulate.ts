/**
 * The `provider emulate` core: turns flags into emulator options, starts it, prints where it listens and
 * with which tokens, serves until the signal fires, then closes cleanly.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDuration } from '../config/duration.js';
import type { GlobalFlags } from '../config/index.js';
import { UsageError } from '../errors.js';
import { parseFaultFile } from '../emulator/faults.js';
import { startEmulator, type EmulatorOptions } from '../emulator/server.js';
import { StoreWriteError } from '../emulator/state.js';
import { parseRate } from '../emulator/shaping.js';
import type { RunContext } from './context.js';

/** Flags of `provider emulate`, as commander hands them over. */
export interface EmulateFlags {
  host: string;
  port: string;
  dataDir?: string;
  flagDelay?: string;
  rateLimit?: string;
  faults?: string;
  requestLog?: string;
  strict?: boolean;
  packageHashes?: boolean;
  ranges?: boolean;
  linkTtl?: string;
  latency?: string;
  bandwidth?: string;
  totalBandwidth?: string;
}

/** What `provider emulate` is asked to do: its flags and the global `--organization` (the emulated one). */
export type EmulateOptions = EmulateFlags & Pick<GlobalFlags, 'organization'>;

/** Parses an integer flag within bounds, naming the flag on error. */
function integerFlag(value: string, flag: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`${flag} must be a whole number between ${min} and ${max}, got "${value}"`);
  }
  return Number(value);
}

/** Builds the emulator options from the command's flags (paths relative to `cwd`). */
export function emulatorOptionsFromFlags(
  flags: EmulateOptions,
  cwd: string,
  env: Record<string, string | undefined>,
): EmulatorOptions {
  const options: EmulatorOptions = {
    host: flags.host,
    port: integerFlag(flags.port, '--port', 0, 65535),
    organization: flags.organization ?? env.TFE_ORGANIZATION ?? 'example-org',
    strict: flags.strict === true,
    packageHashes: flags.packageHashes === true,
    ranges: flags.ranges === true,
    linkTtlMs: parseDuration(flags.linkTtl ?? '25h', '--link-ttl'),
  };
  if (flags.dataDir) options.dataDir = resolve(cwd, flags.dataDir);
  if (flags.flagDelay) options.flagDelayMs = parseDuration(flags.flagDelay, '--flag-delay');
  if (flags.rateLimit) options.rateLimit = integerFlag(flags.rateLimit, '--rate-limit', 1, 1_000_000);
  if (flags.requestLog) options.requestLogPath = resolve(cwd, flags.requestLog);
  if (flags.latency) options.latencyMs = parseDuration(flags.latency, '--latency');
  if (flags.bandwidth) options.bandwidth = parseRate(flags.bandwidth, '--bandwidth');
  if (flags.totalBandwidth) options.totalBandwidth = parseRate(flags.totalBandwidth, '--total-bandwidth');
  if (flags.faults) {
    const path = resolve(cwd, flags.faults);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new UsageError(
        `cannot read the faults file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        {
          hint: 'Check the path given to --faults.',
        },
      );
    }
    const parsed = parseFaultFile(text, path);
    options.faults = parsed.rules;
    options.faultSeed = parsed.seed;
  }
  if (!/^[a-z0-9][a-z0-9_-]*$/i.test(options.organization ?? '')) {
    throw new UsageError(`--organization "${options.organization}" is not a valid organization name`, {
      hint: 'Use letters, digits, dashes and underscores.',
    });
  }
  return options;
}

/** Runs the emulator until `context.signal` fires (SIGINT, SIGTERM). */
export async function runEmulator(context: RunContext, flags: EmulateOptions): Promise<number> {
  const { output, signal } = context;
  const options = emulatorOptionsFromFlags(flags, context.cwd, context.env);
  // A full or read-only data folder is the machine's state, not a bug: its message says all, without a stack.
  options.onError = (error) =>
    output.warn(
      error instanceof StoreWriteError
        ? `emulator: ${error.message}`
        : `emulator: unexpected error: ${(error as Error).stack ?? String(error)}`,
    );
  const emulator = await startEmulator(options);
  // The GPG key routes load openpgp on their first request (some 40 ms on a small machine): a running emulator
  // loads it now, in the background, so that a client timing its first key registration (bench/) times the
  // registry's work and not the loading of a module, which a real registry has done long before.
  void import('openpgp').catch(() => undefined);
  const started = {
    url: emulator.url,
    organization: emulator.organization,
    ownerToken: emulator.ownerToken,
    memberToken: emulator.memberToken,
    outsiderToken: emulator.outsiderToken,
    dataDir: emulator.dataDir,
  };
  if (output.json) {
    output.resultJson(started);
  } else {
    output.result(`provider emulate listening on ${emulator.url}`);
    output.result(`  organization:   ${emulator.organization}`);
    output.result(`  owners token:   ${emulator.ownerToken}`);
    output.result(`  member token:   ${emulator.memberToken}`);
    output.result(`  outsider token: ${emulator.outsiderToken}`);
    output.result(`  data dir:       ${emulator.dataDir}`);
    if (options.packageHashes === true) {
      output.result('  package hashes: served (packages in the download response, as OpenTofu serves them)');
    }
    if (
      options.latencyMs !== undefined ||
      options.bandwidth !== undefined ||
      options.totalBandwidth !== undefined
    ) {
      output.result(`  network:        ${describeShaping(options)}`);
    }
    output.info(
      `Try: TFE_TOKEN=<owners token> provider publish --hostname ${emulator.url} --organization ${emulator.organization}`,
    );
    output.info('Press Ctrl-C to stop.');
  }
  await new Promise<void>((resolveWait) => {
    if (signal.aborted) resolveWait();
    signal.addEventListener('abort', () => resolveWait(), { once: true });
  });
  await emulator.close();
  output.info('provider emulate stopped');
  return 0;
}

/** `40 ms per request, 25 MB/s per connection, 50 MB/s in total`: the shaping in words, for the start-up lines. */
function describeShaping(options: EmulatorOptions): string {
  const parts: string[] = [];
  const mbps = (rate: number): number => Number((rate / 1e6).toPrecision(3));
  if (options.latencyMs !== undefined) parts.push(`${options.latencyMs} ms per request`);
  if (options.bandwidth !== undefined) parts.push(`${mbps(options.bandwidth)} MB/s per connection`);
  if (options.totalBandwidth !== undefined) {
    parts.push(`${mbps(options.totalBandwidth)} MB/s in total each way`);
  }
  return parts.join(', ');
}
