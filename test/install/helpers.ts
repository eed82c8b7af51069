/**
 * Running what users install (the packed package, the Action bundle, the single executable, the GitLab job)
 * as a separate process against an in-process emulator: spawned asynchronously so the emulator keeps serving,
 * with only the environment given (a fresh machine's).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { REPO_ROOT } from '../helpers/paths.js';
import type { CliResult } from '../helpers/result.js';

export const RELEASE = path.join(REPO_ROOT, 'fixtures', 'release');
export const SIGNER_KEY_FILE = path.join(REPO_ROOT, 'fixtures', 'keys', 'signer.pub.asc');
export { PLATFORMS } from '../helpers/platforms.js';
/** The signer's armored public key, as text (the Action's input and PROVIDER_GPG_KEY take the key itself). */
export const SIGNER_KEY = fs.readFileSync(SIGNER_KEY_FILE, 'utf8');
/** Millisecond retries and polls, no colour: what every run here adds to its environment. */
export const FAST = { PROVIDER_RETRY_DELAY: '2ms', PROVIDER_POLL_INTERVAL: '5ms', NO_COLOR: '1' };
/** The package's version (what --version prints). */
export const VERSION = (
  JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

/**
 * PATH without the node_modules/.bin folders that npm and vitest put first: the commands a user's shell finds
 * (their npm, not the one @semantic-release/npm installs into node_modules/.bin).
 */
export function userPath(): string {
  return (
    (process.env.PATH ?? '')
      .split(path.delimiter)
      // Only the .bin folders: a Node.js installed from the npm registry (scripts/with-node.mjs) lives in a
      // node_modules folder too, and stays first on PATH.
      .filter(
        (dir) => !(path.basename(dir) === '.bin' && path.basename(path.dirname(dir)) === 'node_modules'),
      )
      .join(path.delimiter)
  );
}

/** Runs `command args` in `cwd` with exactly `env` (PATH and HOME added when missing); never throws. */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined> },
): Promise<CliResult> {
  const env = { PATH: userPath(), HOME: options.cwd, ...options.env };
  const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.on('error', (error) =>
      resolve({ exitCode: null, signal: null, stdout, stderr: `${stderr}${error.message}` }),
    );
    child.on('close', (exitCode, signal) => resolve({ exitCode, signal, stdout, stderr }));
  });
}

/** The emulator's writes (POST, PUT, PATCH, DELETE), as `METHOD path`. */
export function writeRequests(emulator: Emulator): string[] {
  return emulator.requestLog.records
    .filter((r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method))
    .map((r) => `${r.method} ${r.path}`);
}

/** Asserts that no token of the emulator appears in `text`. */
export function expectNoTokens(text: string, emulator: Emulator, where: string): void {
  for (const token of [emulator.ownerToken, emulator.memberToken, emulator.outsiderToken]) {
    expect(text.includes(token), `a token in ${where}`).toBe(false);
  }
}

/** A copy of the fixture release in `dir` with one zip's bytes changed (SHA256SUMS no longer matches it). */
export function tamperedRelease(dir: string): string {
  const copy = path.join(dir, 'release');
  fs.cpSync(RELEASE, copy, { recursive: true });
  const zip = path.join(copy, 'terraform-provider-example_1.2.3_linux_amd64.zip');
  const bytes = fs.readFileSync(zip);
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
  fs.writeFileSync(zip, bytes);
  return copy;
}

/** A lock file naming the fixture provider at 1.2.0 (the registry serves 1.2.3), and a public provider. */
export function staleLockText(e: Emulator): string {
  return [
    '# This file is maintained automatically by "terraform init".',
    '# Manual edits may be lost in future updates.',
    '',
    `provider "${new URL(e.url).host}/${e.organization}/example" {`,
    '  version     = "1.2.0"',
    '  constraints = "~> 1.2"',
    '  hashes = [',
    `    "h1:${Buffer.alloc(32, 7).toString('base64')}",`,
    '  ]',
    '}',
    '',
    'provider "registry.terraform.io/hashicorp/random" {',
    '  version = "3.6.3"',
    '  hashes = [',
    `    "h1:${Buffer.alloc(32, 9).toString('base64')}",`,
    '  ]',
    '}',
    '',
  ].join('\n');
}

/** A project with that lock file in two configurations under infra/ and one elsewhere (other/). */
export function staleLockFiles(e: Emulator): (dir: string) => void {
  return (dir) => {
    for (const folder of ['infra/app', 'infra/db', 'other']) {
      fs.mkdirSync(path.join(dir, folder), { recursive: true });
      fs.writeFileSync(path.join(dir, folder, '.terraform.lock.hcl'), staleLockText(e));
    }
  };
}
