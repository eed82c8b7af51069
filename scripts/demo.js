#!/usr/bin/env node
// `npm run demo`: the main job on the embedded emulator, offline. Builds if needed, starts `provider emulate`
// in-process, runs the real `provider publish fixtures/release` against it, shows what the registry now
// holds (`provider versions show`), what `terraform init` would see and the lock file block for every platform
// (`provider lock --registry --dry-run`), then stops the emulator.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const step = (/** @type {string} */ text) => console.log(`\n\u001b[1m== ${text}\u001b[0m`);

if (
  !existsSync(join(root, 'dist/bundle/provider.js')) ||
  !existsSync(join(root, 'dist/emulator/server.js'))
) {
  step('building (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}

/**
 * A module of the built program (typed by the caller, from its source in src/).
 * @param {string} file
 * @returns {Promise<unknown>}
 */
const dist = (file) => import(join(root, 'dist', file));
const { startEmulator } = /** @type {typeof import('../src/emulator/server.js')} */ (
  await dist('emulator/server.js')
);
const emulator = await startEmulator({});
const { url, organization: org, ownerToken } = emulator;
/** @type {NodeJS.ProcessEnv} */
const env = { ...process.env, TFE_TOKEN: ownerToken };
delete env.TFE_HOSTNAME;
delete env.TFE_ADDRESS;
delete env.TFE_ORGANIZATION;

/**
 * Runs the real CLI, its output shown. Asynchronously on purpose: the emulator lives in this process and must
 * keep answering.
 * @param {string[]} args
 * @returns {Promise<{ code: number | null }>}
 */
function provider(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin/provider.cjs'), ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code }));
  });
}

/**
 * The provider registry protocol's list of versions (`GET …/versions`), the part shown here.
 * @typedef {{ versions: { version: string, protocols: string[], platforms: { os: string, arch: string }[] }[] }} VersionsAnswer
 */

/**
 * The provider registry protocol's download answer (`GET …/download/:os/:arch`), the part shown here.
 * @typedef {{ filename: string, shasum: string, signing_keys: { gpg_public_keys: { key_id: string }[] } }} DownloadAnswer
 */

const target = ['--hostname', url, '--organization', org];
let exitCode = 0;
try {
  step(`provider emulate is listening on ${url} (organization ${org}); the owner token is in TFE_TOKEN`);

  step('provider publish fixtures/release --key fixtures/keys/signer.pub.asc');
  const started = Date.now();
  const published = await provider([
    'publish',
    'fixtures/release',
    '--key',
    'fixtures/keys/signer.pub.asc',
    ...target,
  ]);
  if (published.code !== 0) throw new Error(`provider publish exited with ${published.code}`);
  console.log(`(the whole command, including start-up and verification, took ${Date.now() - started} ms)`);

  step('what the registry holds now');
  const shown = await provider(['versions', 'show', '1.2.3', '--name', 'example', ...target]);
  if (shown.code !== 0) throw new Error(`provider versions show exited with ${shown.code}`);

  step('what terraform init sees (provider registry protocol)');
  /**
   * GET of the provider registry protocol, as terraform init sends it.
   * @template T the answer's shape, as the protocol documents it
   * @param {string} path
   * @returns {Promise<T>}
   */
  const consumer = async (path) => {
    const response = await fetch(url + path, { headers: { authorization: `Bearer ${ownerToken}` } });
    if (!response.ok) throw new Error(`GET ${path} → ${response.status}`);
    return /** @type {Promise<T>} */ (response.json());
  };
  /** @type {VersionsAnswer} */
  const versions = await consumer(`/api/registry/v1/providers/${org}/example/versions`);
  for (const v of versions.versions) {
    console.log(
      `${v.version} (protocols ${v.protocols.join(', ')}): ${v.platforms.map((p) => `${p.os}_${p.arch}`).join(' ')}`,
    );
  }
  /** @type {DownloadAnswer} */
  const download = await consumer(`/api/registry/v1/providers/${org}/example/1.2.3/download/linux/amd64`);
  console.log(
    `linux_amd64 → ${download.filename} (sha256 ${download.shasum.slice(0, 12)}…, signed by ${download.signing_keys.gpg_public_keys.map((k) => k.key_id).join(', ')})`,
  );

  step("provider lock --registry --version 1.2.3 --dry-run: the lock block with every platform's h1:");
  const locked = await provider([
    'lock',
    '--registry',
    '--version',
    '1.2.3',
    '--dry-run',
    '--name',
    'example',
    ...target,
  ]);
  if (locked.code !== 0) throw new Error(`provider lock exited with ${locked.code}`);

  step('running the same command again writes nothing');
  const again = await provider([
    'publish',
    'fixtures/release',
    '--key',
    'fixtures/keys/signer.pub.asc',
    '--quiet',
    ...target,
  ]);
  if (again.code !== 0) throw new Error(`the second provider publish exited with ${again.code}`);
  const writes = emulator.requestLog.records.filter((r) => r.method !== 'GET').length;
  console.log(`(${writes} write requests in total, all from the first run)`);
  console.log('\nDone. The emulator stops now; run `node bin/provider.cjs emulate` to keep one running.');
} catch (error) {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  exitCode = 1;
} finally {
  await emulator.close();
}
process.exitCode = exitCode;
