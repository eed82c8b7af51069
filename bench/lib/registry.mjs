// Just enough of the registry API (fetch, loopback) to prepare uploads for the curl-based limit of figure 2:
// the provider, the version and every platform, with their upload links. Payloads as in the documented flow.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SIGNER_KEY_ID } from './env.mjs';

/** @typedef {Record<'shasums-upload' | 'shasums-sig-upload' | 'provider-binary-upload', string>} Links upload links */

/**
 * POSTs one JSON:API document as the owner; resolves with its `data` (links included).
 * @param {import('./emulator.mjs').EmulatorDoc} emulator
 * @param {string} url
 * @param {object} body
 * @returns {Promise<{ links: Links }>}
 */
async function post(emulator, url, body) {
  const response = await fetch(`${emulator.url}${url}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.ownerToken}`, 'content-type': 'application/vnd.api+json' },
    body: JSON.stringify({ data: body }),
  });
  const json = /** @type {{ data: { links: Links } }} */ (await response.json());
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${JSON.stringify(json)}`);
  return json.data;
}

/**
 * Creates the provider, the version and every platform of `release`; returns [file, upload link] pairs.
 * @param {import('./emulator.mjs').EmulatorDoc} emulator
 * @param {import('./release.mjs').Release} release
 * @returns {Promise<[string, string][]>}
 */
export async function prepareUploads(emulator, release) {
  const org = emulator.organization;
  const base = `/api/v2/organizations/${org}/registry-providers`;
  await post(emulator, base, {
    type: 'registry-providers',
    attributes: { name: release.name, namespace: org, 'registry-name': 'private' },
  });
  const provider = `${base}/private/${org}/${release.name}`;
  const version = await post(emulator, `${provider}/versions`, {
    type: 'registry-provider-versions',
    attributes: { version: release.version, 'key-id': SIGNER_KEY_ID, protocols: ['6.0'] },
  });
  /** @type {[string, string][]} */
  const uploads = [
    [release.shasums, version.links['shasums-upload']],
    [`${release.shasums}.sig`, version.links['shasums-sig-upload']],
  ];
  const sums = new Map(
    fs
      .readFileSync(release.shasums, 'utf8')
      .trim()
      .split('\n')
      .map((line) => [line.slice(66), line.slice(0, 64)]),
  );
  for (const zip of release.zips) {
    const filename = path.basename(zip);
    const [os, arch] = filename.slice(release.prefix.length + 1, -'.zip'.length).split('_');
    const platform = await post(emulator, `${provider}/versions/${release.version}/platforms`, {
      type: 'registry-provider-version-platforms',
      attributes: { os, arch, shasum: sums.get(filename), filename },
    });
    uploads.push([zip, platform.links['provider-binary-upload']]);
  }
  return uploads;
}
