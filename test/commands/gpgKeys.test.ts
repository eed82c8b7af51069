/** `provider gpg-keys list` and `gpg-keys add` against the emulator. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addGpgKey, clients, emulatorPerTest, keyIdOf, secretKey } from '../helpers/emulator/index.js';
import { cli, fixture, requests, eventually } from './helpers.js';
import { tempRoot } from '../helpers/tmp.js';

const start = emulatorPerTest();
const KEYS = '/api/registry/private/v2/gpg-keys';

describe('provider gpg-keys add', () => {
  it('registers an RSA key and prints its key id', async () => {
    const emulator = await start();
    const result = await cli(emulator, ['gpg-keys', 'add', fixture('keys', 'signer.pub.asc')]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^Registered key ${keyIdOf('signer')} \\(RSA 3072, Provider Test Signer \\(TEST ONLY\\) <signer@example\\.invalid>\\) for example-org on .* \\(id 1\\)\\n$`,
      ),
    );
    await eventually(() => expect(requests(emulator)).toEqual([`GET ${KEYS}`, `POST ${KEYS}`]));
    expect(emulator.store.data.gpgKeys.map((k) => k.keyId)).toEqual([keyIdOf('signer')]);
  });

  it('takes the path relative to the working folder, and says when the key is already there (no POST)', async () => {
    const emulator = await start();
    await addGpgKey(clients(emulator).owner, emulator.organization, 'signer');
    emulator.requestLog.clear();
    const cwd = tempRoot();
    fs.copyFileSync(fixture('keys', 'signer.pub.asc'), path.join(cwd, 'key.asc'));
    const result = await cli(emulator, ['gpg-keys', 'add', 'key.asc', '--json'], { cwd });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      alreadyRegistered: true,
      key: { keyId: keyIdOf('signer'), id: '1' },
    });
    expect(requests(emulator)).toEqual([`GET ${KEYS}`]);
  });

  it("refuses an ECC key with the registry's reason (exit 4)", async () => {
    const emulator = await start();
    const result = await cli(emulator, ['gpg-keys', 'add', fixture('keys', 'ecc.pub.asc')]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(`error: The registry refused key ${keyIdOf('ecc')} from `);
    expect(result.stderr).toContain('Only RSA and DSA keys are supported');
    expect(result.stderr).toContain(
      'the registry accepts only RSA and DSA keys. Create one with: gpg --quick-gen-key',
    );
    await eventually(() => expect(requests(emulator)).toEqual([`GET ${KEYS}`, `POST ${KEYS}`]));
    expect(emulator.requestLog.records.at(-1)?.status).toBe(422);
    expect(emulator.store.data.gpgKeys).toEqual([]);
  });

  it('refuses a secret key file locally (exit 2) and never sends it', async () => {
    const emulator = await start();
    const cwd = tempRoot();
    fs.writeFileSync(path.join(cwd, 'secret.asc'), secretKey('signer'));
    const result = await cli(emulator, ['gpg-keys', 'add', 'secret.asc'], { cwd });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: secret.asc holds a SECRET key; it was not sent anywhere');
    expect(result.stderr).toContain('gpg --armor --export <key id> > public-key.asc');
    expect(requests(emulator)).toEqual([]);
  });

  it('refuses a missing or unreadable key file (exit 2) without a request', async () => {
    const emulator = await start();
    const cwd = tempRoot();
    fs.writeFileSync(path.join(cwd, 'garbage.asc'), 'not a key\n');
    const missing = await cli(emulator, ['gpg-keys', 'add', 'nope.asc'], { cwd });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('error: nope.asc: the key file does not exist');
    const garbage = await cli(emulator, ['gpg-keys', 'add', 'garbage.asc'], { cwd });
    expect(garbage.exitCode).toBe(2);
    expect(garbage.stderr).toContain('error: garbage.asc is not an ASCII-armored OpenPGP public key');
    expect(requests(emulator)).toEqual([]);
  });

  it('a member token gets exit 4 with the permission hint', async () => {
    const emulator = await start();
    const result = await cli(emulator, ['gpg-keys', 'add', fixture('keys', 'other.pub.asc')], {
      token: emulator.memberToken,
    });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(
      'owners team, or of a team with the "Manage Private Registry" permission',
    );
  });
});

describe('provider gpg-keys list', () => {
  it("shows the namespace's keys as a table, rows or JSON", async () => {
    const emulator = await start();
    const { owner } = clients(emulator);
    await addGpgKey(owner, emulator.organization, 'signer');
    await addGpgKey(owner, emulator.organization, 'other');
    const tty = await cli(emulator, ['gpg-keys', 'list', '--no-color'], { tty: true });
    expect(tty.exitCode).toBe(0);
    const stamp = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g;
    expect(tty.stdout.replace(stamp, 'YYYY-MM-DDTHH:MM:SSZ')).toBe(
      [
        'KEY ID            CREATED               ID',
        `${keyIdOf('signer')}  YYYY-MM-DDTHH:MM:SSZ   1`,
        `${keyIdOf('other')}  YYYY-MM-DDTHH:MM:SSZ   2`,
        '',
      ].join('\n'),
    );
    const plain = await cli(emulator, ['gpg-keys', 'list']);
    expect(plain.stdout.replace(stamp, 'TIME')).toBe(
      `${keyIdOf('signer')}\tTIME\t1\n${keyIdOf('other')}\tTIME\t2\n`,
    );
    const json = await cli(emulator, ['gpg-keys', 'list', '--json']);
    const doc = JSON.parse(json.stdout) as { namespace: string; keys: { keyId: string; id: string }[] };
    expect(doc.namespace).toBe(emulator.organization);
    expect(doc.keys.map((k) => k.keyId)).toEqual([keyIdOf('signer'), keyIdOf('other')]);
    expect(json.stdout).not.toContain('BEGIN PGP');
  });

  it('says so when there is none', async () => {
    const emulator = await start();
    const result = await cli(emulator, ['gpg-keys', 'list']);
    expect(result).toMatchObject({ exitCode: 0, stdout: '' });
    expect(result.stderr).toContain('No keys are registered for example-org on');
  });
});
