#!/usr/bin/env node
// `npm run demo`: the main job on the embedded emulator, offline. Builds if needed, starts `provider emulate`
// in-process, runs the real `provider publish fixtures/release` against it, shows what the registry now
// holds (`provider versions show`) and what `terraform init` would see, then stops the emulator.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const step = (text) => console.log(`\n\u001b[1m== ${text}\u001b[0m`);

if (!existsSync(join(root, 'dist/cli/main.js')) || !existsSync(join(root, 'dist/commands/publish.js'))) {
  step('building (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}

const { startEmulator } = await import(join(root, 'dist/emulator/server.js'));
const emulator = await startEmulator({});
const { url, organization: org, ownerToken } = emulator;
const env = { ...process.env, TFE_TOKEN: ownerToken };
delete env.TFE_HOSTNAME;
delete env.TFE_ADDRESS;
delete env.TFE_ORGANIZATION;

/** Runs the real CLI. Asynchronously on purpose: the emulator lives in this process and must keep answering. */
function provider(args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin/provider.js'), ...args], {
      cwd: root,
      env,
      stdio: ['ignore', options.capture ? 'pipe' : 'inherit', 'inherit'],
    });
    let stdout = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

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
  const help = await provider(['--help'], { capture: true });
  if (/^\s+versions\b/m.test(help.stdout)) {
    const shown = await provider(['versions', 'show', '1.2.3', '--name', 'example', ...target]);
    if (shown.code !== 0) throw new Error(`provider versions show exited with ${shown.code}`);
  } else {
    await showThroughResourceModules();
  }

  step('what terraform init sees (provider registry protocol)');
  const consumer = async (path) => {
    const response = await fetch(url + path, { headers: { authorization: `Bearer ${ownerToken}` } });
    if (!response.ok) throw new Error(`GET ${path} → ${response.status}`);
    return response.json();
  };
  const versions = await consumer(`/api/registry/v1/providers/${org}/example/versions`);
  for (const v of versions.versions) {
    console.log(
      `${v.version} (protocols ${v.protocols.join(', ')}): ${v.platforms.map((p) => `${p.os}_${p.arch}`).join(' ')}`,
    );
  }
  const download = await consumer(`/api/registry/v1/providers/${org}/example/1.2.3/download/linux/amd64`);
  console.log(
    `linux_amd64 → ${download.filename} (sha256 ${download.shasum.slice(0, 12)}…, signed by ${download.signing_keys.gpg_public_keys.map((k) => k.key_id).join(', ')})`,
  );

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
  console.log('\nDone. The emulator stops now; run `node bin/provider.js emulate` to keep one running.');
} catch (error) {
  console.error(`demo failed: ${error.message}`);
  exitCode = 1;
} finally {
  await emulator.close();
}
process.exitCode = exitCode;

/** Before `provider versions show` existed: the version and its platforms through the registry resource modules. */
async function showThroughResourceModules() {
  const { createRegistryClient } = await import(join(root, 'dist/registry/http.js'));
  const { getVersion } = await import(join(root, 'dist/registry/versions.js'));
  const { listPlatforms } = await import(join(root, 'dist/registry/providerPlatforms.js'));
  const { parseHostname } = await import(join(root, 'dist/config/index.js'));
  const { Output } = await import(join(root, 'dist/ui/output.js'));
  const output = new Output({ stdout: process.stdout, stderr: process.stderr, env: process.env });
  const client = createRegistryClient({ apiHost: parseHostname(url, 'demo'), token: ownerToken, output });
  const address = { organization: org, namespace: org, name: 'example' };
  const version = (await getVersion(client, address, '1.2.3')).attributes;
  console.log(
    `version ${version.version}  protocols ${version.protocols.join(',')}  key-id ${version['key-id']}`,
  );
  console.log(
    `SHA256SUMS uploaded: ${version['shasums-uploaded']}  signature uploaded: ${version['shasums-sig-uploaded']}`,
  );
  for (const p of await listPlatforms(client, address, '1.2.3')) {
    const a = p.attributes;
    console.log(
      `  ${`${a.os}_${a.arch}`.padEnd(15)} ${a.filename.padEnd(52)} ${a.shasum.slice(0, 12)}…  uploaded: ${a['provider-binary-uploaded']}`,
    );
  }
}
