#!/usr/bin/env node
// `npm run demo`: the main job on the embedded emulator, offline. Builds if needed, starts `provider emulate`
// in-process, registers the fixture's signing key, publishes fixtures/release, and shows what the registry
// and `terraform init` would now see. Until `provider publish` lands (issue 4), the publishing step is the
// documented curl flow in bench/baseline/publish-with-curl.sh.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const step = (text) => console.log(`\n\u001b[1m== ${text}\u001b[0m`);

if (!existsSync(join(root, 'dist/cli/main.js'))) {
  step('building (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}

const { startEmulator } = await import(join(root, 'dist/emulator/server.js'));
const emulator = await startEmulator({});
const { url, organization: org, ownerToken } = emulator;
const release = join(root, 'fixtures/release');
const keyFile = join(root, 'fixtures/keys/signer.pub.asc');
const keyId = readFileSync(join(root, 'fixtures/keys/signer.keyid'), 'utf8').trim();
const api = async (method, path, body) => {
  const response = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/vnd.api+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
};

try {
  step(`provider emulate is listening on ${url} (organization ${org})`);

  step('registering the release signing key (fixtures/keys/signer.pub.asc)');
  const key = await api('POST', '/api/registry/private/v2/gpg-keys', {
    data: { type: 'gpg-keys', attributes: { namespace: org, 'ascii-armor': readFileSync(keyFile, 'utf8') } },
  });
  console.log(`key-id ${key.data.attributes['key-id']}`);

  step('publishing fixtures/release (documented curl flow; provider publish replaces it in issue 4)');
  // Asynchronous on purpose: the emulator runs in this process and must keep answering.
  const child = spawn('bash', [join(root, 'bench/baseline/publish-with-curl.sh'), release], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      BASE_URL: url,
      TOKEN: ownerToken,
      ORG: org,
      NAME: 'example',
      VERSION: '1.2.3',
      KEY_ID: keyId,
      PROTOCOLS: '["6.0"]',
    },
  });
  const status = await new Promise((resolve) => child.on('close', resolve));
  if (status !== 0) throw new Error('publishing failed');

  step('what the registry holds (GET .../versions/1.2.3 and its platforms)');
  const base = `/api/v2/organizations/${org}/registry-providers/private/${org}/example/versions/1.2.3`;
  const version = (await api('GET', base)).data.attributes;
  console.log(
    `version ${version.version}  protocols ${version.protocols.join(',')}  key-id ${version['key-id']}`,
  );
  console.log(
    `SHA256SUMS uploaded: ${version['shasums-uploaded']}  signature uploaded: ${version['shasums-sig-uploaded']}`,
  );
  for (const p of (await api('GET', `${base}/platforms`)).data) {
    const a = p.attributes;
    console.log(
      `  ${`${a.os}_${a.arch}`.padEnd(15)} ${a.filename.padEnd(48)} ${a.shasum.slice(0, 12)}…  uploaded: ${a['provider-binary-uploaded']}`,
    );
  }

  step('what terraform init sees (provider registry protocol)');
  const versions = await api('GET', `/api/registry/v1/providers/${org}/example/versions`);
  for (const v of versions.versions) {
    console.log(`${v.version}: ${v.platforms.map((p) => `${p.os}_${p.arch}`).join(' ')}`);
  }
  const download = await api('GET', `/api/registry/v1/providers/${org}/example/1.2.3/download/linux/amd64`);
  console.log(
    `linux_amd64 → ${download.filename} (sha256 ${download.shasum.slice(0, 12)}…, signed by ${download.signing_keys.gpg_public_keys.map((k) => k.key_id).join(', ')})`,
  );
  console.log('\nDone. The emulator stops now; run `node bin/provider.js emulate` to keep one running.');
} finally {
  await emulator.close();
}
