/** The local platform for verify tests: an in-process emulator with the `signer` test key registered. */
import * as fs from 'node:fs';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator/server.js';
import { publicKeyPath } from '../../release/helpers.js';

/** Starts an emulator and registers the given fixture keys for its organization with the owner token. */
export async function emulatorWithKeys(
  keys: string[] = ['signer'],
  options: EmulatorOptions = {},
): Promise<Emulator> {
  const emulator = await startEmulator(options);
  for (const key of keys) {
    const response = await fetch(`${emulator.url}/api/registry/private/v2/gpg-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emulator.ownerToken}`, 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({
        data: {
          type: 'gpg-keys',
          attributes: {
            namespace: emulator.organization,
            'ascii-armor': fs.readFileSync(publicKeyPath(key), 'utf8'),
          },
        },
      }),
    });
    if (response.status !== 201)
      throw new Error(`registering ${key} failed: ${response.status} ${await response.text()}`);
  }
  emulator.requestLog.clear();
  return emulator;
}

/** The global flags and environment that point the CLI at an emulator. */
export function emulatorArgs(emulator: Emulator): { args: string[]; env: Record<string, string> } {
  return {
    args: ['--hostname', emulator.url, '--organization', emulator.organization],
    env: { TFE_TOKEN: emulator.ownerToken },
  };
}

/** Requests the emulator saw other than key lookups (GET on the gpg-keys list). */
export function requestsOtherThanKeyLookups(emulator: Emulator): string[] {
  return emulator.requestLog.records
    .filter((r) => !(r.method === 'GET' && r.path === '/api/registry/private/v2/gpg-keys'))
    .map((r) => `${r.method} ${r.path}`);
}
