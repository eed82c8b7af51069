#!/usr/bin/env node
// A bare publisher: what a popular TypeScript GitHub Action for private providers does, and nothing more. It
// creates the provider (an existing one is fine), the version and each platform with the registry API, and PUTs
// each file to its upload link, one after another, with Node's `fetch`, each file streamed from disk.
// The shasum of each platform is taken from SHA256SUMS as it stands: no hashing, no signature check, no check of
// the zips, no wait for the uploaded flags, no check of what `terraform init` gets. It is the baseline
// `provider publish` (every check on) is measured against on loopback (bench/figures/bare.mjs), and nothing else.
//
// Usage: node bare-publish.mjs <release-dir>
// Env:   BASE_URL (e.g. http://127.0.0.1:8080), TOKEN, ORG, NAME, VERSION, KEY_ID, PROTOCOLS (JSON array)
import { createReadStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

const dir = process.argv[2];
/** @param {string} name */
const need = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
if (!dir) throw new Error('usage: bare-publish.mjs <release-dir>');
const [base, token, org, name, version, keyId] = [
  'BASE_URL',
  'TOKEN',
  'ORG',
  'NAME',
  'VERSION',
  'KEY_ID',
].map(need);
/** @type {unknown} */
const declared = JSON.parse(process.env.PROTOCOLS ?? '["6.0"]');
const protocols = /** @type {string[]} */ (declared);
const api = `${base}/api/v2/organizations/${org}/registry-providers`;
const provider = `${api}/private/${org}/${name}`;

/**
 * POSTs one JSON:API document; resolves with its `data`, or with undefined when its status is one of
 * `alsoFine` (422 for the provider: it exists already).
 * @param {string} url
 * @param {object} data
 * @param {number[]} [alsoFine]
 * @returns {Promise<{ links: Record<string, string> } | undefined>}
 */
async function post(url, data, alsoFine = []) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' },
    body: JSON.stringify({ data }),
  });
  if (alsoFine.includes(response.status)) {
    await response.arrayBuffer();
    return undefined;
  }
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return /** @type {{ data: { links: Record<string, string> } }} */ (await response.json()).data;
}

/**
 * PUTs a file, streamed from disk, to an upload link.
 * @param {string} file
 * @param {string | undefined} link
 */
async function put(file, link) {
  if (!link) throw new Error(`no upload link for ${path.basename(file)}`);
  const { size } = await fs.stat(file);
  const response = await fetch(link, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
    // undici takes a Node stream as an async iterable; a streamed request body must say `duplex: 'half'`.
    body: /** @type {RequestInit['body']} */ (/** @type {unknown} */ (createReadStream(file))),
    duplex: 'half',
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`PUT ${path.basename(file)}: ${response.status}`);
}

const prefix = `terraform-provider-${name}_${version}`;
const shasums = path.join(dir, `${prefix}_SHA256SUMS`);
await post(
  api,
  { type: 'registry-providers', attributes: { name, namespace: org, 'registry-name': 'private' } },
  [422],
);
const created = await post(`${provider}/versions`, {
  type: 'registry-provider-versions',
  attributes: { version, 'key-id': keyId, protocols },
});
await put(shasums, created?.links['shasums-upload']);
await put(`${shasums}.sig`, created?.links['shasums-sig-upload']);
const sums = new Map(
  (await fs.readFile(shasums, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => [line.slice(66), line.slice(0, 64)]),
);
for (const filename of (await fs.readdir(dir)).filter((f) => f.startsWith(prefix) && f.endsWith('.zip'))) {
  const [os, arch] = filename.slice(prefix.length + 1, -'.zip'.length).split('_');
  const platform = await post(`${provider}/versions/${version}/platforms`, {
    type: 'registry-provider-version-platforms',
    attributes: { os, arch, shasum: sums.get(filename), filename },
  });
  await put(path.join(dir, filename), platform?.links['provider-binary-upload']);
  console.log(`uploaded ${filename}`);
}
