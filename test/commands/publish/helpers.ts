/**
 * Helpers for the publish suites: the CLI pointed at an in-process emulator with fast retry/poll timing,
 * the writes an emulator recorded (named by what they wrote), and checks that no secret reached any output.
 */
import * as path from 'node:path';
import { expect } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { runCli } from '../../helpers/cli.js';
import type { CliResult } from '../../helpers/result.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { PLATFORMS } from '../../helpers/platforms.js';
import { call, download, onRequestStart } from '../../helpers/emulator/index.js';
import { tempRoot } from '../../helpers/tmp.js';

/** The fixture release, read in place (publish never writes into it). */
export const RELEASE = path.join(REPO_ROOT, 'fixtures', 'release');
/** The fixture signer's armored public key. */
export const SIGNER_KEY = path.join(REPO_ROOT, 'fixtures', 'keys', 'signer.pub.asc');
/** The fixture release's platforms, sorted. */
export { PLATFORMS };

/** An ANSI escape sequence (colours, cursor movement). */
export const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);

/** Timing for tests: millisecond backoff and polls, a short request timeout. */
export const FAST: Record<string, string> = {
  PROVIDER_RETRY_DELAY: '2ms',
  PROVIDER_POLL_INTERVAL: '5ms',
  PROVIDER_HTTP_TIMEOUT: '2s',
  NO_COLOR: '1',
};

/** `publish <release> --key <signer> --hostname <emulator> --organization <org>` plus `extra`. */
export function publishArgs(emulator: Emulator, extra: string[] = [], release = RELEASE): string[] {
  return [
    'publish',
    release,
    '--key',
    SIGNER_KEY,
    '--hostname',
    emulator.url,
    '--organization',
    emulator.organization,
    ...extra,
  ];
}

/** Runs `provider publish` in-process (owner token in TFE_TOKEN, fast timing); every output is scanned for secrets. */
export async function publish(
  emulator: Emulator,
  extra: string[] = [],
  options: { env?: Record<string, string>; signal?: AbortSignal; release?: string; tty?: boolean } = {},
): Promise<CliResult> {
  const result = await runCli(publishArgs(emulator, extra, options.release), {
    env: { TFE_TOKEN: emulator.ownerToken, ...FAST, ...options.env },
    cwd: tempRoot(),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.tty ? { tty: true } : {}),
  });
  expectNoSecrets(result.stdout + result.stderr, emulator, `the output of publish ${extra.join(' ')}`);
  return result;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The id of the platform `os_arch` as soon as it exists (looked up at every request's start): a failed run may
 * remove it, and its uploads are still told apart by it in the request log.
 */
export function watchPlatformId(emulator: Emulator, os: string, arch: string): () => string | undefined {
  let id: string | undefined;
  onRequestStart(emulator, () => {
    id ??= emulator.store.data.platforms.find((p) => p.os === os && p.arch === arch)?.id;
  });
  return () => id ?? emulator.store.data.platforms.find((p) => p.os === os && p.arch === arch)?.id;
}

/**
 * A run that failed on bytes that do not verify removed what it created: no version, platform or provider is
 * left, by DELETEs of the version and then the provider in the request log (the signing key stays).
 */
export function expectRunUndone(emulator: Emulator): void {
  const { versions, platforms, providers } = emulator.store.data;
  expect({ versions, platforms, providers }).toEqual({ versions: [], platforms: [], providers: [] });
  const deletes = emulator.requestLog.records.filter((r) => r.method === 'DELETE' && r.status < 300);
  expect(deletes.map((r) => r.path)).toEqual([
    expect.stringMatching(/\/registry-providers\/private\/[^/]+\/example\/versions\/1\.2\.3$/),
    expect.stringMatching(/\/registry-providers\/private\/[^/]+\/example$/),
  ]);
}

/** Every write request the emulator logged (any status), as `METHOD path`. */
export function writeRequests(emulator: Emulator): string[] {
  return emulator.requestLog.records
    .filter((r) => WRITE_METHODS.has(r.method))
    .map((r) => `${r.method} ${r.path}`);
}

/**
 * The successful writes, named by what they wrote and sorted: `create provider`, `register key`,
 * `create version`, `create platform`, `upload shasums`, `upload signature`, `upload linux_amd64`.
 */
export function writes(emulator: Emulator): string[] {
  const { platforms } = emulator.store.data;
  return emulator.requestLog.records
    .filter((r) => WRITE_METHODS.has(r.method) && r.status >= 200 && r.status < 300)
    .map((r) => {
      if (r.method === 'PUT' && r.path.startsWith('/_archivist/')) {
        if (r.object === 'shasums') return 'upload shasums';
        if (r.object === 'shasums-sig') return 'upload signature';
        const p = platforms.find((x) => x.id === r.owner);
        return `upload ${p ? `${p.os}_${p.arch}` : r.owner}`;
      }
      if (r.method === 'POST' && r.path.endsWith('/registry-providers')) return 'create provider';
      if (r.method === 'POST' && r.path.endsWith('/gpg-keys')) return 'register key';
      if (r.method === 'POST' && r.path.endsWith('/versions')) return 'create version';
      if (r.method === 'POST' && r.path.endsWith('/platforms')) return 'create platform';
      return `${r.method} ${r.path}`;
    })
    .sort();
}

/** The writes of a complete first publish of the fixture release. */
export const FULL_PUBLISH = [
  'create platform',
  'create platform',
  'create platform',
  'create platform',
  'create platform',
  'create provider',
  'create version',
  'register key',
  ...PLATFORMS.map((p) => `upload ${p}`),
  'upload shasums',
  'upload signature',
].sort();

/** The registry's state of the fixture version: every platform with its stored filename/shasum/upload state. */
export function storedPlatforms(
  emulator: Emulator,
): { name: string; filename: string; shasum: string; uploaded: boolean }[] {
  return emulator.store.data.platforms
    .map((p) => ({
      name: `${p.os}_${p.arch}`,
      filename: p.filename,
      shasum: p.shasum,
      uploaded: p.binary.uploadedAt !== null,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** True when the version and every fixture platform are stored and uploaded. */
export function expectComplete(emulator: Emulator): void {
  const [version] = emulator.store.data.versions;
  expect(emulator.store.data.versions).toHaveLength(1);
  expect(version?.shasums.uploadedAt).not.toBeNull();
  expect(version?.shasumsSig.uploadedAt).not.toBeNull();
  expect(storedPlatforms(emulator).map((p) => [p.name, p.uploaded])).toEqual(PLATFORMS.map((p) => [p, true]));
}

/** Fails when a token or any archivist link (upload or download) appears in a text. */
export function expectNoSecrets(text: string, emulator: Emulator, where: string): void {
  for (const token of [emulator.ownerToken, emulator.memberToken, emulator.outsiderToken]) {
    expect(text.includes(token), `${where} contains a token`).toBe(false);
  }
  // Every upload and download link lives under this path; the request log writes `[secret]` instead.
  const leaked = [...text.matchAll(/_archivist\/v1\/object\/([^\s"'\\]+)/g)].map((m) => m[1]);
  expect(
    leaked.filter((secret) => secret !== '[secret]'),
    `${where} contains an archivist link`,
  ).toEqual([]);
}

/** The one JSON document of a `--json` run. */
export function jsonOf(result: CliResult): Record<string, unknown> {
  const lines = result.stdout.trim().split('\n');
  expect(lines, `exactly one JSON document on stdout:\n${result.stdout}`).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

/**
 * What `terraform init` would be served for `example` 1.2.3, as it asks for it (the registry protocol with the
 * token, each zip from its download link without one): the zip bytes by `os_arch`. Empty when the version is
 * not available to consumers at all.
 */
export async function servedToConsumers(emulator: Emulator): Promise<Map<string, Buffer>> {
  const base = `/api/registry/v1/providers/${emulator.organization}/example`;
  const token = emulator.ownerToken;
  const served = new Map<string, Buffer>();
  const versions = await call(emulator.url, 'GET', `${base}/versions`, { token });
  // No provider (a failed run removed what it created): nothing is served.
  if (versions.status === 404) return served;
  expect(versions.status, versions.text).toBe(200);
  const listed = (
    versions.json as { versions: { version: string; platforms: { os: string; arch: string }[] }[] }
  ).versions;
  for (const platform of listed.find((v) => v.version === '1.2.3')?.platforms ?? []) {
    const where = `${base}/1.2.3/download/${platform.os}/${platform.arch}`;
    const document = await call(emulator.url, 'GET', where, { token });
    expect(document.status, document.text).toBe(200);
    const zip = await download((document.json as { download_url: string }).download_url);
    expect(zip.status).toBe(200);
    served.set(`${platform.os}_${platform.arch}`, zip.bytes);
  }
  return served;
}
