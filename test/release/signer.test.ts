import * as fs from 'node:fs';
import * as path from 'node:path';
import * as openpgp from 'openpgp';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError, VerificationError } from '../../src/errors.js';
import type { CandidateKey, KeySource } from '../../src/release/keySource.js';
import { readSignatureFile } from '../../src/release/signature.js';
import { checkSigner } from '../../src/release/signer.js';
import { FIXTURES, SIG, SUMS, keyId, signDetached } from './helpers.js';

const DAY = 24 * 3600 * 1000;
const sums = new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'release', SUMS)));
const armoredKey = (name: string, kind = 'pub'): string =>
  fs.readFileSync(path.join(FIXTURES, 'keys', `${name}.${kind}.asc`), 'utf8');

function source(keys: (string | CandidateKey)[], origin: CandidateKey['origin'] = 'flag'): KeySource {
  return {
    origin,
    label: 'the test keys',
    missingKeyHint: 'use the right key',
    load: () =>
      Promise.resolve(
        keys.map((k) => (typeof k === 'string' ? { armored: k, origin, label: 'test key' } : k)),
      ),
  };
}

async function check(sig: Uint8Array, keys: KeySource, now = new Date()) {
  const warnings: string[] = [];
  const signature = await readSignatureFile(sig, SIG, { dearmor: false, shasumsFile: SUMS });
  const signer = await checkSigner({
    signature,
    signatureFile: SIG,
    shasumsBytes: sums,
    shasumsFile: SUMS,
    keySource: keys,
    now,
    warn: (w) => warnings.push(w),
  });
  return { signer, warnings };
}

const fixtureSig = (name: string): Uint8Array =>
  new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'signatures', `${name}.sig`)));
const goodSig = new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'release', SIG)));

describe('checkSigner', () => {
  let expiring: { publicKey: string; privateKey: string };
  let revoked: { publicKey: string; sig: Uint8Array };

  beforeAll(async () => {
    expiring = await openpgp.generateKey({
      type: 'rsa',
      rsaBits: 2048,
      userIDs: [{ name: 'Soon Expiring', email: 'soon@example.invalid' }],
      keyExpirationTime: 10 * 24 * 3600,
    });
    const fresh = await openpgp.generateKey({
      type: 'rsa',
      rsaBits: 2048,
      userIDs: [{ name: 'Revoked' }],
      format: 'object',
    });
    const sig = await signDetached(sums, fresh.privateKey.armor());
    const done = await openpgp.revokeKey({ key: fresh.privateKey, format: 'armored' });
    revoked = { publicKey: done.publicKey, sig };
  }, 60_000);

  it('names the primary key, its user id and algorithm', async () => {
    const { signer, warnings } = await check(goodSig, source([armoredKey('signer')]));
    expect(signer).toMatchObject({
      keyId: keyId('signer'),
      signingKeyId: keyId('signer'),
      fingerprint: fs.readFileSync(path.join(FIXTURES, 'keys', 'signer.fpr'), 'utf8').trim(),
      userId: 'Provider Test Signer (TEST ONLY) <signer@example.invalid>',
      algorithm: 'RSA 3072',
      expires: null,
      origin: 'flag',
    });
    expect(signer.armoredKey).toContain('BEGIN PGP PUBLIC KEY BLOCK');
    expect(warnings).toEqual([]);
  });

  it("maps a subkey's signature to the primary key id", async () => {
    const { signer } = await check(fixtureSig('by-subkey'), source([armoredKey('subkey')]));
    expect(signer.keyId).toBe(keyId('subkey'));
    expect(signer.signingKeyId).toBe(keyId('subkey.signing-subkey'));
    expect(signer.signingFingerprint).toBe(
      fs.readFileSync(path.join(FIXTURES, 'keys', 'subkey.signing-subkey.fpr'), 'utf8').trim(),
    );
    expect(signer.fingerprint).not.toBe(signer.signingFingerprint);
  });

  it('finds the signer in a key ring holding several keys', async () => {
    const { signer } = await check(goodSig, source([armoredKey('other') + armoredKey('signer')]));
    expect(signer.keyId).toBe(keyId('signer'));
  });

  it('uses the public half of a secret key, with a warning', async () => {
    const { signer, warnings } = await check(goodSig, source([armoredKey('signer', 'sec')]));
    expect(signer.keyId).toBe(keyId('signer'));
    expect(signer.armoredKey).toContain('PUBLIC KEY');
    expect(warnings[0]).toContain('SECRET key');
  });

  it('refuses a revoked key', async () => {
    const error = await check(revoked.sig, source([revoked.publicKey])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VerificationError);
    expect((error as Error).message).toMatch(/has been revoked/);
  });

  it('warns about a key that expires within 30 days, and refuses it once expired', async () => {
    const sig = await signDetached(sums, expiring.privateKey);
    const { warnings, signer } = await check(sig, source([expiring.publicKey]));
    expect(warnings).toEqual([expect.stringMatching(/expires in (9|10) days/)]);
    expect(signer.expires).not.toBeNull();
    const later = new Date(Date.now() + 11 * DAY);
    await expect(check(sig, source([expiring.publicKey]), later)).rejects.toThrow(/expired on/);
  });

  it('names an expired signing subkey', async () => {
    const pair = await openpgp.generateKey({
      type: 'rsa',
      rsaBits: 2048,
      userIDs: [{ name: 'Subkey Expiring' }],
      subkeys: [{ sign: true, keyExpirationTime: 5 * 24 * 3600 }],
    });
    const sig = await signDetached(sums, pair.privateKey);
    const { signer, warnings } = await check(sig, source([pair.publicKey]));
    expect(signer.signingKeyId).not.toBe(signer.keyId);
    expect(warnings[0]).toMatch(/expires in [45] days/);
    await expect(check(sig, source([pair.publicKey]), new Date(Date.now() + 6 * DAY))).rejects.toThrow(
      `the signing subkey ${signer.signingKeyId} of key ${signer.keyId} expired on`,
    );
  });

  it('refuses the expired fixture key although openpgp.js would accept its signature', async () => {
    await expect(check(fixtureSig('by-expired'), source([armoredKey('expired')]))).rejects.toThrow(
      new RegExp(`key ${keyId('expired')} expired on 2020-01-02`),
    );
  });

  it('skips an unreadable registry key with a warning, but refuses an unreadable --key', async () => {
    const keys = source(
      [{ armored: 'garbage', origin: 'registry', label: 'registry key 1' }, armoredKey('signer')],
      'registry',
    );
    const { warnings } = await check(goodSig, keys);
    expect(warnings[0]).toContain('skipping registry key 1');
    await expect(check(goodSig, source(['garbage']))).rejects.toBeInstanceOf(UsageError);
  });

  it('says when there is no key at all', async () => {
    await expect(check(goodSig, source([], 'registry'))).rejects.toThrow(
      /Found no public key to check .* \(looked in the test keys\)/,
    );
  });

  it('lists the issuer and the keys it tried', async () => {
    const error = (await check(fixtureSig('by-other'), source([armoredKey('signer')])).catch(
      (e: unknown) => e,
    )) as VerificationError;
    expect(error.message).toContain(`made by key ${keyId('other')}`);
    expect(error.message).toContain(`(${keyId('signer')})`);
    expect(error.hint).toBe('use the right key');
  });
});

describe('readSignatureFile', () => {
  it('converts armor in memory to the exact binary packets', async () => {
    const armored = new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'signatures', 'armored.sig.asc')));
    await expect(readSignatureFile(armored, SIG, { dearmor: false, shasumsFile: SUMS })).rejects.toThrow(
      /tag byte does not have MSB set/,
    );
    const read = await readSignatureFile(armored, SIG, { dearmor: true, shasumsFile: SUMS });
    expect(read.dearmored).toBe(true);
    expect(read.binary[0]! & 0x80).toBe(0x80);
    expect(read.issuerKeyIds).toEqual([keyId('signer')]);
  });

  it('refuses bytes that are no OpenPGP packets', async () => {
    await expect(
      readSignatureFile(new TextEncoder().encode('hello'), SIG, { dearmor: false, shasumsFile: SUMS }),
    ).rejects.toThrow(/not an OpenPGP signature/);
    await expect(
      readSignatureFile(new Uint8Array([0x89, 1, 2]), SIG, { dearmor: false, shasumsFile: SUMS }),
    ).rejects.toThrow(/not a readable OpenPGP signature/);
  });
});
