/**
 * Helpers for the reads, deletes, check and gpg-keys suites: an emulator with the fixture release published
 * through its HTTP API, the CLI pointed at it, ways to alter the emulator's stored data, and a core-level
 * client.
 */
import * as path from 'node:path';
import { vi } from 'vitest';
import { parseHostname } from '../../src/config/index.js';
import type { Emulator } from '../../src/emulator/server.js';
import type { StoredPlatform, StoredVersion } from '../../src/emulator/state.js';
import { createRegistryClient, type RegistryClient } from '../../src/registry/http.js';
import type { ProviderAddress } from '../../src/registry/paths.js';
import { Output } from '../../src/ui/output.js';
import { Capture, runCli } from '../helpers/cli.js';
import type { CliResult } from '../helpers/result.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { publishFixture } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { PLATFORMS } from '../helpers/platforms.js';

/** The fixture release's platforms. */
/** The fixture release's platforms (test/helpers/platforms.ts), under the name these suites use. */
export const ALL_PLATFORMS: string[] = PLATFORMS;

/** `terraform-provider-example_1.2.3_<platform>.zip`. */
export function zipName(platform: string, version = '1.2.3'): string {
  return `terraform-provider-example_${version}_${platform}.zip`;
}

/** Publishes the whole fixture release (every file uploaded), or the parts named. */
export async function publishAll(
  emulator: Emulator,
  options: Parameters<typeof publishFixture>[1] = {},
): Promise<void> {
  await publishFixture(emulator, {
    platforms: ALL_PLATFORMS,
    uploads: ['sums', 'sig', ...ALL_PLATFORMS],
    ...options,
  });
  emulator.requestLog.clear();
}

/** Runs `provider <argv> --hostname … --organization … --name example` with a token in TFE_TOKEN. */
export function cli(
  emulator: Emulator,
  argv: string[],
  options: { token?: string; tty?: boolean; cwd?: string; env?: Record<string, string>; name?: string } = {},
): Promise<CliResult> {
  return runCli(
    [
      ...argv,
      '--hostname',
      emulator.url,
      '--organization',
      emulator.organization,
      '--name',
      options.name ?? 'example',
    ],
    {
      env: { TFE_TOKEN: options.token ?? emulator.ownerToken, ...options.env },
      cwd: options.cwd ?? tempRoot(),
      tty: options.tty === true,
    },
  );
}

/** The stored version record (to alter what the emulator serves). */
export function storedVersion(emulator: Emulator, version = '1.2.3'): StoredVersion {
  const found = emulator.store.data.versions.find((v) => v.version === version);
  if (!found) throw new Error(`the emulator holds no version ${version}`);
  return found;
}

/** The stored platform record of a version (to alter what the emulator serves). */
export function storedPlatform(emulator: Emulator, platform: string, version = '1.2.3'): StoredPlatform {
  const v = storedVersion(emulator, version);
  const [os_, arch] = platform.split('_');
  const found = emulator.store.data.platforms.find(
    (p) => p.versionId === v.id && p.os === os_ && p.arch === arch,
  );
  if (!found) throw new Error(`the emulator holds no platform ${platform} of ${version}`);
  return found;
}

/** A fixture file's path. */
export function fixture(...parts: string[]): string {
  return path.join(REPO_ROOT, 'fixtures', ...parts);
}

/** Method and path of every request the emulator recorded (archivist secrets already redacted). */
export function requests(emulator: Emulator): string[] {
  return emulator.requestLog.records.map((r) => `${r.method} ${r.path}`);
}

/** A core-level client and sink against an emulator; `stdout`/`stderr` capture what the sink writes. */
export function coreWorld(
  emulator: Emulator,
  token = emulator.ownerToken,
): { client: RegistryClient; output: Output; address: ProviderAddress; stdout: Capture; stderr: Capture } {
  const stdout = new Capture();
  const stderr = new Capture();
  const output = new Output({ stdout, stderr, env: {} });
  const client = createRegistryClient({
    apiHost: parseHostname(emulator.url, 'test'),
    token,
    output,
    retry: { limit: 0 },
  });
  const org = emulator.organization;
  return { client, output, address: { organization: org, namespace: org, name: 'example' }, stdout, stderr };
}

/**
 * Waits for an assertion on the request log: the emulator records a request when the response closes, which
 * can come a moment after the client has read the answer (both run in this process).
 */
export function eventually(assertion: () => void): Promise<void> {
  return vi.waitFor(assertion, { timeout: 2_000, interval: 5 });
}
