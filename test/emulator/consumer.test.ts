/**
 * The consumer view (PRODUCT.md §6, registry-api.md §9): service discovery, Terraform's provider registry
 * protocol for complete versions only (both checksum files and at least one binary uploaded, only uploaded
 * platforms listed), and a download document whose links serve the right bytes and whose signing key verifies
 * the checksums exactly as `terraform init` would check them.
 */
import { createHash } from 'node:crypto';
import * as openpgp from 'openpgp';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import {
  call,
  clients,
  download,
  emulatorPerTest,
  expectErrorDocument,
  expectStatus,
  loadRelease,
  manualClock,
  publicKey,
  publishFixture,
  type Reply,
} from '../helpers/emulator/index.js';
import { arr, isObject, str } from '../helpers/json.js';

const start = emulatorPerTest();
const release = loadRelease();

async function discover(emulator: Emulator): Promise<string> {
  const reply = await call(emulator.url, 'GET', '/.well-known/terraform.json');
  expectStatus(reply, 200);
  expect(reply.headers.get('content-type')).toContain('application/json');
  const value = providersV1(reply.json);
  if (typeof value !== 'string') throw new Error(`providers.v1 is not a string in ${reply.text}`);
  return value;
}

/** The `providers.v1` member (a key with a dot, out of reach of the dotted-path accessors). */
function providersV1(document: unknown): unknown {
  return isObject(document) ? document['providers.v1'] : undefined;
}

/** `GET <providers.v1>:namespace/:name/<rest>` with the owner token, as Terraform sends the host's credentials. */
async function registry(emulator: Emulator, rest: string, token = emulator.ownerToken): Promise<Reply> {
  const base = await discover(emulator);
  const url = new URL(`${base}${emulator.organization}/${release.name}/${rest}`, emulator.url).toString();
  return call(emulator.url, 'GET', url, { token, headers: { accept: 'application/json' } });
}

describe('service discovery', () => {
  it('/.well-known/terraform.json announces providers.v1 (no token needed)', async () => {
    const emulator = await start();
    const reply = await call(emulator.url, 'GET', '/.well-known/terraform.json');
    expectStatus(reply, 200);
    const value = providersV1(reply.json);
    expect(typeof value).toBe('string');
    // A path ending in a slash, resolved against the host (Terraform's remote service discovery).
    expect(String(value)).toMatch(/^\/.*\/$/);
  });
});

describe('a complete version', () => {
  async function setup() {
    const emulator = await start({ now: manualClock().now });
    await publishFixture(emulator, {
      platforms: ['linux_amd64', 'darwin_arm64', 'windows_amd64'],
      uploads: ['sums', 'sig', 'linux_amd64', 'darwin_arm64'],
    });
    return emulator;
  }

  it('is listed with its protocols and only its uploaded platforms', async () => {
    const emulator = await setup();
    for (const token of [emulator.ownerToken, emulator.memberToken]) {
      const reply = await registry(emulator, 'versions', token);
      expectStatus(reply, 200);
      const versions = arr(reply.json, 'versions');
      expect(versions).toHaveLength(1);
      expect(versions[0]).toMatchObject({ version: release.version, protocols: release.protocols });
      const platforms = arr(versions[0], 'platforms');
      expect(platforms).toEqual(
        expect.arrayContaining([
          { os: 'linux', arch: 'amd64' },
          { os: 'darwin', arch: 'arm64' },
        ]),
      );
      expect(platforms).toHaveLength(2);
    }
  });

  it('download/linux/amd64: filename, shasum, links serving the right bytes, and the registered key', async () => {
    const emulator = await setup();
    const reply = await registry(emulator, `${release.version}/download/linux/amd64`);
    expectStatus(reply, 200);
    const zip = release.zip('linux', 'amd64');
    expect(reply.json).toMatchObject({
      protocols: release.protocols,
      os: 'linux',
      arch: 'amd64',
      filename: zip.filename,
      shasum: zip.shasum,
    });

    // Terraform sends no token to these URLs (registry-api.md §9).
    const binary = await download(str(reply.json, 'download_url'));
    const sums = await download(str(reply.json, 'shasums_url'));
    const sig = await download(str(reply.json, 'shasums_signature_url'));
    for (const r of [binary, sums, sig]) expectStatus(r, 200);
    expect(binary.bytes.equals(zip.bytes)).toBe(true);
    expect(sums.bytes.equals(release.sums)).toBe(true);
    expect(sig.bytes.equals(release.sig)).toBe(true);

    const keys = arr(reply.json, 'signing_keys.gpg_public_keys');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ key_id: release.keyId, ascii_armor: publicKey('signer') });

    // terraform init's three checks, on what was served.
    expect(createHash('sha256').update(binary.bytes).digest('hex')).toBe(str(reply.json, 'shasum'));
    expect(sums.text.split('\n')).toContain(`${str(reply.json, 'shasum')}  ${str(reply.json, 'filename')}`);
    const verification = await openpgp.verify({
      message: await openpgp.createMessage({ binary: new Uint8Array(sums.bytes) }),
      signature: await openpgp.readSignature({ binarySignature: new Uint8Array(sig.bytes) }),
      verificationKeys: await openpgp.readKey({ armoredKey: str(keys[0], 'ascii_armor') }),
      format: 'binary',
    });
    const [signature] = verification.signatures;
    await expect(signature?.verified).resolves.toBe(true);
  });

  it('download/darwin/arm64 serves its own zip', async () => {
    const emulator = await setup();
    const reply = await registry(emulator, `${release.version}/download/darwin/arm64`);
    expectStatus(reply, 200);
    const zip = release.zip('darwin', 'arm64');
    expect(str(reply.json, 'filename')).toBe(zip.filename);
    expect((await download(str(reply.json, 'download_url'))).bytes.equals(zip.bytes)).toBe(true);
  });

  it('a platform that exists but was not uploaded has no download (404)', async () => {
    const emulator = await setup();
    expectErrorDocument(await registry(emulator, `${release.version}/download/windows/amd64`), 404);
  });

  it('an outsider token sees neither the versions nor the downloads (404)', async () => {
    const emulator = await setup();
    expectErrorDocument(await registry(emulator, 'versions', emulator.outsiderToken), 404);
    const download = await registry(
      emulator,
      `${release.version}/download/linux/amd64`,
      emulator.outsiderToken,
    );
    expectErrorDocument(download, 404);
  });

  it('a platform that does not exist has no download (404)', async () => {
    const emulator = await setup();
    expectErrorDocument(await registry(emulator, `${release.version}/download/linux/arm64`), 404);
  });

  it("lists only the registered key of the version's key-id, not every key of the namespace", async () => {
    const emulator = await setup();
    const { owner } = clients(emulator);
    expectStatus(
      await owner.post('/api/registry/private/v2/gpg-keys', {
        data: {
          type: 'gpg-keys',
          attributes: { namespace: emulator.organization, 'ascii-armor': publicKey('other') },
        },
      }),
      201,
    );
    const reply = await registry(emulator, `${release.version}/download/linux/amd64`);
    const keys = arr(reply.json, 'signing_keys.gpg_public_keys');
    expect(keys.map((k) => str(k, 'key_id'))).toEqual([release.keyId]);
  });
});

describe('an incomplete version is not available', () => {
  it.each([
    ['the signature is not uploaded', ['sums', 'linux_amd64']],
    ['SHA256SUMS is not uploaded', ['sig', 'linux_amd64']],
    ['no binary is uploaded', ['sums', 'sig']],
  ])('when %s: absent from the versions list, download 404', async (_name, uploads) => {
    const emulator = await start();
    await publishFixture(emulator, { platforms: ['linux_amd64'], uploads });
    const list = await registry(emulator, 'versions');
    expectStatus(list, 200);
    expect(arr(list.json, 'versions')).toEqual([]);
    expectErrorDocument(await registry(emulator, `${release.version}/download/linux/amd64`), 404);
  });

  it('while its flags have not flipped yet (flagDelayMs), then it appears', async () => {
    const clock = manualClock();
    const emulator = await start({ now: clock.now, flagDelayMs: 1_000 });
    await publishFixture(emulator, { platforms: ['linux_amd64'], uploads: ['sums', 'sig', 'linux_amd64'] });
    expect(arr((await registry(emulator, 'versions')).json, 'versions')).toEqual([]);
    clock.advance(1_000);
    expect(arr((await registry(emulator, 'versions')).json, 'versions')).toHaveLength(1);
  });

  it('next to a complete one, only the complete one is listed', async () => {
    const emulator = await start();
    await publishFixture(emulator, { platforms: ['linux_amd64'], uploads: ['sums', 'sig', 'linux_amd64'] });
    await publishFixture(emulator, {
      version: '1.3.0',
      platforms: ['linux_amd64'],
      uploads: ['sums', 'linux_amd64'],
      createProvider: false,
      addKey: false,
    });
    const list = await registry(emulator, 'versions');
    expect(arr(list.json, 'versions').map((v) => str(v, 'version'))).toEqual([release.version]);
  });

  it('an unknown provider: 404', async () => {
    const emulator = await start();
    const base = await discover(emulator);
    const reply = await call(emulator.url, 'GET', `${base}${emulator.organization}/nope/versions`, {
      token: emulator.ownerToken,
    });
    expectErrorDocument(reply, 404);
  });
});
