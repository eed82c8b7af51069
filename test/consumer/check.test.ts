/** `checkConsumerView`, the core publish calls last: what terraform init checks, against the emulator. */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { VerificationError } from '../../src/errors.js';
import { checkConsumerView } from '../../src/consumer/check.js';
import { addGpgKey, clients, emulatorPerTest, keyIdOf } from '../helpers/emulator/index.js';
import { normalise } from '../helpers/normalise.js';
import {
  ALL_PLATFORMS,
  coreWorld,
  fixture,
  publishAll,
  storedPlatform,
  storedVersion,
  eventually,
} from '../commands/helpers.js';

const start = emulatorPerTest();

/** Runs the check and returns the VerificationError it must throw. */
async function failure(emulator: Emulator, now?: Date): Promise<VerificationError> {
  const { client, output, address } = coreWorld(emulator);
  const error = await checkConsumerView({
    client,
    address,
    version: '1.2.3',
    output,
    ...(now ? { now: () => now } : {}),
  }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(VerificationError);
  return error as VerificationError;
}

function replaceSignature(emulator: Emulator, file: string): void {
  fs.copyFileSync(
    fixture('signatures', file),
    emulator.store.objectPath(storedVersion(emulator).shasumsSig.key),
  );
}

describe('checkConsumerView', () => {
  it('passes on the published fixture release, prints nothing and returns plain data without links', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const { client, output, address, stdout, stderr } = coreWorld(emulator);
    const report = await checkConsumerView({ client, address, version: '1.2.3', output });
    expect(report).toMatchObject({
      version: '1.2.3',
      protocols: ['6.0'],
      keyId: keyIdOf('signer'),
      signature: { keyId: keyIdOf('signer'), signingKeyId: keyIdOf('signer'), gpgKeyId: '1' },
      downloaded: false,
      provider: { organization: emulator.organization, namespace: emulator.organization, name: 'example' },
    });
    expect(report.shasums.lines).toBe(6);
    expect(report.platforms.map((p) => `${p.os}_${p.arch}`)).toEqual(ALL_PLATFORMS);
    expect(report.platforms.every((p) => p.archive === 'listed' && p.bytes === null)).toBe(true);
    expect(JSON.stringify(report)).not.toContain('/_archivist/');
    expect(stdout.text + stderr.text).toBe('');
    await eventually(() => {
      const downloads = emulator.requestLog.records.filter((r) => r.path.includes('/_archivist/'));
      expect(downloads).toHaveLength(2);
      expect(downloads.every((r) => !r.authorization && r.method === 'GET')).toBe(true);
    });
  });

  it('reports progress per archive with download and hashes every zip', async () => {
    const emulator = await start();
    await publishAll(emulator);
    const { client, output, address } = coreWorld(emulator);
    const seen: string[] = [];
    const report = await checkConsumerView({
      client,
      address,
      version: '1.2.3',
      output,
      download: true,
      concurrency: 2,
      onArchive: (p) => seen.push(`${p.os}_${p.arch}`),
    });
    expect(seen.sort()).toEqual(ALL_PLATFORMS);
    expect(report.platforms.every((p) => p.archive === 'verified' && (p.bytes ?? 0) > 0)).toBe(true);
  });

  it('collects every problem at once', async () => {
    const emulator = await start();
    await publishAll(emulator);
    storedPlatform(emulator, 'linux_amd64').filename = 'renamed.zip';
    storedPlatform(emulator, 'darwin_arm64').shasum = 'ab'.repeat(32);
    replaceSignature(emulator, 'by-other.sig');
    const error = await failure(emulator);
    expect(normalise(error.message)).toMatchInlineSnapshot(`
      "terraform init would refuse example-org/example 1.2.3 as 127.0.0.1:<port> serves it (3 problems):
        SHA256SUMS.sig: the signature was made by key 18A9577F1923A8A4, not by the registered key 47D8C49E6154CCB3 the version names
          terraform init says: authentication signature from unknown issuer
        darwin_arm64: SHA256SUMS lists f76b591723b07b6d33ca40d0ea8bda14e9f61465177cff8960afa7036b11e70c for "terraform-provider-example_1.2.3_darwin_arm64.zip", but the registry's shasum for the platform is abababababababababababababababababababababababababababababababab
          terraform init says: checksum list has unexpected SHA-256 hash f76b591723b07b6d33ca40d0ea8bda14e9f61465177cff8960afa7036b11e70c (expected abababababababababababababababababababababababababababababababab)
        linux_amd64: SHA256SUMS has no line for "renamed.zip", the filename the registry serves for this platform
          terraform init says: checksum list has no SHA-256 hash for "renamed.zip""
    `);
    expect(error.details?.problems).toHaveLength(3);
  });

  it('accepts a signature by a signing subkey of the registered key', async () => {
    const emulator = await start();
    await publishAll(emulator);
    await addGpgKey(clients(emulator).owner, emulator.organization, 'subkey');
    storedVersion(emulator).keyId = keyIdOf('subkey');
    replaceSignature(emulator, 'by-subkey.sig');
    const { client, output, address } = coreWorld(emulator);
    const report = await checkConsumerView({ client, address, version: '1.2.3', output });
    expect(report.signature.keyId).toBe(keyIdOf('subkey'));
    expect(report.signature.signingKeyId).toBe(
      fs.readFileSync(fixture('keys', 'subkey.signing-subkey.keyid'), 'utf8').trim(),
    );
  });

  it('gives Terraform no key when none is registered under the key-id: unknown issuer', async () => {
    const emulator = await start();
    await publishAll(emulator);
    storedVersion(emulator).keyId = keyIdOf('other');
    const error = await failure(emulator);
    expect(error.message).toContain("no key is registered under the version's key-id");
    expect(error.message).toContain('terraform init says: authentication signature from unknown issuer');
    expect(error.hint).toContain('provider gpg-keys add');
  });

  it('refuses a signature by an expired key, as terraform init does', async () => {
    const emulator = await start();
    await publishAll(emulator);
    await addGpgKey(clients(emulator).owner, emulator.organization, 'expired');
    storedVersion(emulator).keyId = keyIdOf('expired');
    replaceSignature(emulator, 'by-expired.sig');
    const error = await failure(emulator);
    expect(error.message).toContain('terraform init says: error checking signature: openpgp: key expired');
  });

  it('refuses an ASCII-armored signature with the error Terraform prints', async () => {
    const emulator = await start();
    await publishAll(emulator);
    replaceSignature(emulator, 'armored.sig.asc');
    const error = await failure(emulator);
    expect(error.message).toContain('(it is ASCII-armored)');
    expect(error.message).toContain(
      'terraform init says: error checking signature: openpgp: invalid data: tag byte does not have MSB set',
    );
  });

  it('refuses a signature over other bytes', async () => {
    const emulator = await start();
    await publishAll(emulator);
    replaceSignature(emulator, 'over-other-bytes.sig');
    const error = await failure(emulator);
    expect(error.message).toContain('does not hold over the SHA256SUMS the registry serves');
  });

  it('fails when the version has no platform at all', async () => {
    const emulator = await start();
    await publishAll(emulator, { platforms: [], uploads: ['sums', 'sig'] });
    const error = await failure(emulator);
    expect(error.message).toContain('missing any platform (files 2/2 + 0/0)');
  });
});
