/**
 * `publish` registers the signing key with the armored text the user gave, trimmed of the line end after it:
 * publishers that match registered keys by their text (a popular GitHub Action compares it with its trimmed
 * input by `===`) otherwise fail to recognise it, try to add it again and fail with "Key has already been
 * taken". Only the signing key's own block is sent when the file holds several; a block that holds several
 * keys, or a secret key, is armored anew from the signing key's public part. The Action and PROVIDER_GPG_KEY
 * register the same text: test/install/action-hardening.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as openpgp from 'openpgp';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { runCli } from '../../helpers/cli.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { JSONAPI, emulatorPerTest, keyIdOf } from '../../helpers/emulator/index.js';
import { FAST, RELEASE } from './helpers.js';
import { tempRoot } from '../../helpers/tmp.js';

const emulator = emulatorPerTest();
const keyFile = (name: string): string => path.join(REPO_ROOT, 'fixtures', 'keys', `${name}.pub.asc`);
const armorOf = (name: string): string => fs.readFileSync(keyFile(name), 'utf8');

/** `provider publish <fixture release> --key <file>`, in-process, against the emulator. */
async function publishWithKey(e: Emulator, key: string): Promise<void> {
  const result = await runCli(
    ['publish', RELEASE, '--key', key, '--hostname', e.url, '--organization', e.organization],
    { env: { TFE_TOKEN: e.ownerToken, ...FAST }, cwd: tempRoot() },
  );
  expect(result.stderr).not.toContain('error');
  expect(result.exitCode).toBe(0);
}

/** The `ascii-armor` the registry holds for a key, read through the API as any client would. */
async function registeredArmor(e: Emulator, keyId: string): Promise<string> {
  const response = await fetch(`${e.url}/api/registry/private/v2/gpg-keys/${e.organization}/${keyId}`, {
    headers: { authorization: `Bearer ${e.ownerToken}`, accept: JSONAPI },
  });
  expect(response.status).toBe(200);
  const doc = (await response.json()) as { data: { attributes: { 'ascii-armor': string } } };
  return doc.data.attributes['ascii-armor'];
}

/** A file in a fresh folder. */
function write(name: string, text: string): string {
  const file = path.join(tempRoot(), name);
  fs.writeFileSync(file, text);
  return file;
}

describe('the key publish registers', () => {
  it('is the armored file as given, without the line end that closes it (as a GitHub input is trimmed)', async () => {
    const e = await emulator();
    expect(armorOf('signer').endsWith('-----END PGP PUBLIC KEY BLOCK-----\n')).toBe(true);
    await publishWithKey(e, keyFile('signer'));
    expect(await registeredArmor(e, keyIdOf('signer'))).toBe(armorOf('signer').trimEnd());
  });

  it('is the signing key’s own block when the file holds several (cat other.asc signer.asc)', async () => {
    const e = await emulator();
    await publishWithKey(e, write('keys.asc', armorOf('other') + armorOf('signer')));
    expect(await registeredArmor(e, keyIdOf('signer'))).toBe(armorOf('signer').trimEnd());
  });

  it('keeps the block’s own line ends within it and leaves out text around it', async () => {
    const e = await emulator();
    const crlf = armorOf('signer').replaceAll('\n', '\r\n');
    await publishWithKey(e, write('keys.asc', `Release signing key:\r\n${crlf}\r\nthanks\r\n`));
    expect(await registeredArmor(e, keyIdOf('signer'))).toBe(crlf.trimEnd());
  });

  it('is the signing key alone, armored anew, when one block holds several keys', async () => {
    const e = await emulator();
    const both = await Promise.all(
      ['other', 'signer'].map(async (k) => (await openpgp.readKey({ armoredKey: armorOf(k) })).write()),
    );
    const joined = new Uint8Array([...both[0]!, ...both[1]!]);
    await publishWithKey(e, write('ring.asc', openpgp.armor(openpgp.enums.armor.publicKey, joined)));
    const keys = await openpgp.readKeys({ armoredKeys: await registeredArmor(e, keyIdOf('signer')) });
    expect(keys.map((k) => k.getKeyID().toHex().toUpperCase())).toEqual([keyIdOf('signer')]);
  });
});
