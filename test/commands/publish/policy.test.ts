/**
 * `provider publish --policy`: a provider of your own is held to the policy's `versions` and pinned `keys`, and an
 * approval recorded for the version binds its bytes. Checked once the signature is verified, before any write:
 * a refused release is exit 3 naming the rule, and the emulator's request log shows nothing written. A cooldown
 * or `approval: required` does not stop a publish (they apply where versions are taken in and used).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { emulatorPerTest, keyIdOf } from '../../helpers/emulator/index.js';
import { tempRoot } from '../../helpers/tmp.js';
import { FULL_PUBLISH, publish, writeRequests, writes } from './helpers.js';

const emulator = emulatorPerTest();

/** A policy file whose one entry, for the emulator organization's providers, holds `rule`. */
function policyFile(e: Emulator, ...rule: string[]): string {
  const file = path.join(tempRoot('publish-policy'), 'policy.yaml');
  const pattern = `${new URL(e.url).host}/${e.organization}/*`;
  fs.writeFileSync(file, ['providers:', `  "${pattern}":`, ...rule.map((l) => `    ${l}`), ''].join('\n'));
  return file;
}

describe('provider publish --policy', () => {
  it.each([
    ['keys: [B7F05A4C6E0A8E0C]', 'key-not-allowed'],
    ['versions: "~> 2.0"', 'version-not-allowed'],
  ])('%s: refused with exit 3 before any write', async (rule, id) => {
    const e = await emulator();
    const result = await publish(e, ['--policy', policyFile(e, rule)]);
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain(`(${id})`);
    expect(result.stderr).toContain('Nothing was written');
    expect(writeRequests(e)).toEqual([]);
  });

  it('an approval for other bytes of the version refuses it', async () => {
    const e = await emulator();
    const file = policyFile(
      e,
      'approvals:',
      `  - provider: ${new URL(e.url).host}/${e.organization}/example`,
      '    version: 1.2.3',
      `    sha256sums: "${'0'.repeat(64)}"`,
      `    key: ${keyIdOf('signer')}`,
      '    by: alice',
      '    at: "2026-11-27T09:00:00Z"',
      '    reason: reviewed',
    );
    const result = await publish(e, ['--policy', file]);
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain('(approval-does-not-match)');
    expect(writeRequests(e)).toEqual([]);
  });

  it('the pinned key and allowed versions publish; a cooldown and approval: required do not hold it', async () => {
    const e = await emulator();
    const file = policyFile(
      e,
      `keys: [${keyIdOf('signer')}]`,
      'versions: "~> 1.2"',
      'min-age: 7d',
      'approval: required',
    );
    const result = await publish(e, ['--policy', file]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(writes(e)).toEqual(FULL_PUBLISH);
  });

  it('an unknown field: exit 2 naming the line, before any request', async () => {
    const e = await emulator();
    const result = await publish(e, ['--policy', policyFile(e, 'cooldown: 7d')]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/Invalid policy file .*policy\.yaml: line 3/);
    expect(e.requestLog.records).toEqual([]);
  });
});
