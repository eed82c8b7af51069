/** `provider verify` without `--key`: the signer is looked up among the keys registered for the namespace. */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { copyRelease, keyId, runCliAtHome } from '../../release/helpers.js';
import { emulatorArgs, emulatorWithKeys } from './helpers.js';

describe('verify with the registry keys', () => {
  let emulator: Emulator;
  let empty: Emulator;
  let root: string;
  beforeAll(async () => {
    emulator = await emulatorWithKeys(['other', 'signer']);
    empty = await emulatorWithKeys([]);
    root = path.dirname(copyRelease());
  });
  afterAll(async () => {
    await emulator.close();
    await empty.close();
  });

  it('finds the signer among the keys registered for the namespace (token from TFE_TOKEN)', async () => {
    emulator.requestLog.clear();
    const result = await runCliAtHome(
      ['verify', '--hostname', emulator.url, '--organization', emulator.organization],
      {
        cwd: root,
        env: { TFE_TOKEN: emulator.ownerToken },
      },
    );
    expect(result.stderr).toBe(
      `Verifying example 1.2.3 in ${root}/dist\nChecking the signature against the keys registered for ${emulator.organization} on ${new URL(emulator.url).host}\n`,
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(
      `key id     ${keyId('signer')} (RSA 3072; from registry key ${keyId('signer')}`,
    );
    expect(result.stdout).toContain('signer     Provider Test Signer (TEST ONLY) <signer@example.invalid>');
    expect(emulator.requestLog.records).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/api/registry/private/v2/gpg-keys',
        query: `filter%5Bnamespace%5D=${emulator.organization}&page%5Bnumber%5D=1&page%5Bsize%5D=100`,
        status: 200,
        authorization: true,
      }),
    ]);
  });

  it('uses a member token and TF_TOKEN_<host> too, and prints the namespace in JSON', async () => {
    const host = new URL(emulator.url).hostname.replaceAll('.', '_');
    const result = await runCliAtHome(
      ['verify', '--json', '--hostname', emulator.url, '--organization', emulator.organization],
      {
        cwd: root,
        env: { [`TF_TOKEN_${host}`]: emulator.memberToken },
      },
    );
    expect(result.exitCode).toBe(0);
    const doc = JSON.parse(result.stdout) as { provider: unknown; keyId: string };
    expect(doc.provider).toEqual({ name: 'example', namespace: emulator.organization });
    expect(doc.keyId).toBe(keyId('signer'));
  });

  it('refuses the lookup with --offline, without a single request', async () => {
    emulator.requestLog.clear();
    const { args, env } = emulatorArgs(emulator);
    const result = await runCliAtHome(['verify', '--offline', ...args], { cwd: root, env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: --offline needs a public key to check the signature with');
    expect(result.stderr).toContain('--key <armored-public-key-file> or set PROVIDER_GPG_KEY');
    expect(emulator.requestLog.records).toEqual([]);
  });

  it('needs a namespace to look keys up', async () => {
    const result = await runCliAtHome(['verify', '--hostname', emulator.url], {
      cwd: root,
      env: { TFE_TOKEN: emulator.ownerToken },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('no namespace to look up the keys registered on');
    expect(result.stderr).toContain('--organization');
  });

  it('needs a token to look keys up, and says how to get one', async () => {
    emulator.requestLog.clear();
    const result = await runCliAtHome(
      ['verify', '--hostname', emulator.url, '--organization', emulator.organization],
      { cwd: root },
    );
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('No API token was found');
    expect(result.stderr).toContain('terraform login');
    expect(emulator.requestLog.records).toEqual([]);
  });

  it('reports a refused token as an API error (exit 4) with the way out', async () => {
    const result = await runCliAtHome(
      ['verify', '--hostname', emulator.url, '--organization', emulator.organization],
      {
        cwd: root,
        env: { TFE_TOKEN: 'not-a-token' },
      },
    );
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('GET /api/registry/private/v2/gpg-keys was refused: 401');
    expect(result.stderr).toContain(`terraform login ${new URL(emulator.url).host}`);
    expect(result.stderr).not.toContain('not-a-token');
  });

  it('reports a namespace the token may not read (403)', async () => {
    const { args, env } = emulatorArgs(emulator);
    const result = await runCliAtHome(['verify', ...args, '--namespace', 'someone-else', '--json'], {
      cwd: root,
      env,
    });
    expect(result.exitCode).toBe(4);
    const doc = JSON.parse(result.stdout) as { error: { message: string; details: { status: number } } };
    expect(doc.error.message).toContain('no authorized namespaces specified in request');
    expect(doc.error.details.status).toBe(403);
  });

  it('fails verification when no key is registered', async () => {
    const { args, env } = emulatorArgs(empty);
    const result = await runCliAtHome(['verify', ...args], { cwd: root, env });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      'Found no public key to check terraform-provider-example_1.2.3_SHA256SUMS.sig with',
    );
    expect(result.stderr).toContain('provider gpg-keys add');
  });

  it('traces the lookup with --verbose and never prints the token', async () => {
    const { args, env } = emulatorArgs(emulator);
    const result = await runCliAtHome(['verify', '--verbose', ...args], { cwd: root, env });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(
      /→ GET http:\/\/127\.0\.0\.1:\d+\/api\/registry\/private\/v2\/gpg-keys\?filter/,
    );
    expect(result.stderr).toMatch(/← 200 GET .*gpg-keys.* \d+ms/);
    expect(result.stderr).not.toContain(emulator.ownerToken);
  });

  it('warns that --token is visible, and never prints it', async () => {
    const result = await runCliAtHome(
      [
        'verify',
        '--hostname',
        emulator.url,
        '--organization',
        emulator.organization,
        '--token',
        emulator.ownerToken,
      ],
      { cwd: root },
    );
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('warning: --token is visible');
    expect(result.stderr + result.stdout).not.toContain(emulator.ownerToken);
  });
});
