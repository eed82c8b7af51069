/**
 * `provider approve`: the version verified as `check --download` verifies it, then its record written to the
 * policy file bound to what was verified (the SHA-256 of its SHA256SUMS, the registered key), the file's comments
 * and order kept; idempotent; a file that approves other bytes for the version is refused (exit 3), and bad input
 * is exit 2 before any request. The record then admits the version where approval is required.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { decide } from '../../src/lockfile/admission.js';
import { parsePolicy } from '../../src/lockfile/policy.js';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest, keyIdOf, publishFixture } from '../helpers/emulator/index.js';
import { PLATFORMS } from '../helpers/platforms.js';
import { tempRoot } from '../helpers/tmp.js';
import { REPO_ROOT } from '../helpers/paths.js';

const start = emulatorPerTest();
const SUMS = createHash('sha256')
  .update(
    fs.readFileSync(path.join(REPO_ROOT, 'fixtures/release/terraform-provider-example_1.2.3_SHA256SUMS')),
  )
  .digest('hex');

/** A published fixture (example 1.2.3, every file uploaded) and a folder with a policy file of `text`. */
async function world(text?: string): Promise<{ e: Emulator; dir: string; address: string }> {
  const e = await start();
  await publishFixture(e, { platforms: PLATFORMS, uploads: ['sums', 'sig', ...PLATFORMS] });
  const dir = tempRoot('approve');
  if (text !== undefined) fs.writeFileSync(path.join(dir, 'policy.yaml'), text);
  return { e, dir, address: `${new URL(e.url).host}/${e.organization}/example` };
}

function approve(e: Emulator, dir: string, ...args: string[]) {
  return runCli(
    [
      'approve',
      `${e.organization}/example`,
      '1.2.3',
      '--policy',
      'policy.yaml',
      '--hostname',
      e.url,
      ...args,
    ],
    {
      cwd: dir,
      homeDir: dir,
      env: { TFE_TOKEN: e.ownerToken, TFE_ORGANIZATION: e.organization, NO_COLOR: '1' },
    },
  );
}

describe('provider approve', () => {
  it('writes the record under the entry requiring approval, comments kept; the version is then admitted; twice is once', async () => {
    const { e, dir, address } = await world('');
    const pattern = `${new URL(e.url).host}/${e.organization}/*`;
    const text = [
      '# who may enter',
      'providers:',
      `  "${pattern}":  # ours`,
      '    approval: required',
      '',
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'policy.yaml'), text);
    const seeded = e.requestLog.records.length;
    const first = await approve(e, dir, '--reason', 'reviewed the changelog', '--by', 'alice');
    expect(first.exitCode, first.stderr).toBe(0);
    const written = fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8');
    expect(written.startsWith('# who may enter\nproviders:\n')).toBe(true);
    expect(written).toContain('# ours');
    const policy = parsePolicy(written, 'policy.yaml');
    expect(policy.providers[0]!.approvals).toEqual([
      expect.objectContaining({
        provider: address,
        version: '1.2.3',
        sha256sums: SUMS,
        key: keyIdOf('signer'),
        by: 'alice',
        reason: 'reviewed the changelog',
      }),
    ]);
    expect(first.stdout).toContain(
      `Approved ${address} 1.2.3 (SHA256SUMS ${SUMS.slice(0, 16)}…, signed by ${keyIdOf('signer')})`,
    );
    // It verified every zip (downloads), and wrote nothing to the registry.
    const records = e.requestLog.records.slice(seeded);
    expect(records.filter((r) => r.object === 'provider-binary' && r.range === undefined)).toHaveLength(
      PLATFORMS.length,
    );
    expect(records.filter((r) => r.method !== 'GET')).toEqual([]);
    // Approval required: admitted for these bytes and key, not for others.
    const facts = { address, version: '1.2.3', published: undefined, keyIds: [keyIdOf('signer')] };
    expect(decide(policy.providers, { ...facts, sha256sums: SUMS }, new Date()).outcome).toBe('admitted');
    expect(decide(policy.providers, { ...facts, sha256sums: 'f'.repeat(64) }, new Date()).outcome).toBe(
      'refused',
    );

    const again = await approve(e, dir, '--reason', 'again', '--by', 'bob');
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain('already approves');
    expect(fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8')).toBe(written);
  });

  it('a policy file that approves other bytes for the version: exit 3 naming its line, nothing written', async () => {
    const { e, dir } = await world();
    const host = new URL(e.url).host;
    const text = [
      'providers:',
      `  "${host}/${e.organization}/example":`,
      '    approvals:',
      '      - version: "1.2.3"',
      `        sha256sums: "${'f'.repeat(64)}"`,
      `        key: "${keyIdOf('signer')}"`,
      '        by: mallory',
      '        at: "2026-11-01T00:00:00Z"',
      '        reason: earlier bytes',
      '',
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'policy.yaml'), text);
    const result = await approve(e, dir, '--reason', 'reviewed', '--by', 'alice');
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      `policy.yaml:4 approves ${host}/${e.organization}/example 1.2.3 for other bytes than the registry serves now`,
    );
    expect(fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8')).toBe(text);
  });

  it('a policy that refuses the version even approved (another pinned key): exit 3, nothing written', async () => {
    const { e, dir } = await world();
    const text = [
      'providers:',
      `  "${new URL(e.url).host}/${e.organization}/*":`,
      `    keys: [${keyIdOf('other')}]`,
      '',
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'policy.yaml'), text);
    const result = await approve(e, dir, '--reason', 'reviewed', '--by', 'alice');
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('is refused by policy.yaml even approved (key-not-allowed)');
    expect(fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8')).toBe(text);
  });

  it('--dry-run shows the diff of a new policy file and writes nothing; --json gives the document', async () => {
    const { e, dir, address } = await world();
    const result = await approve(e, dir, '--reason', 'reviewed', '--by', 'alice', '--dry-run', '--json');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      dryRun: true,
      outcome: 'added',
      entry: address,
      record: { provider: address, version: '1.2.3', sha256sums: SUMS },
    });
    expect(fs.existsSync(path.join(dir, 'policy.yaml'))).toBe(false);
    const text = await approve(e, dir, '--reason', 'reviewed', '--by', 'alice', '--dry-run');
    expect(text.stdout).toContain(`+         sha256sums: "${SUMS}"`);
  });

  it.each([
    [['--by', 'a'], '--reason needs one line of text'],
    [['--reason', 'two\nlines'], '--reason needs one line of text'],
    [
      ['--reason', 'ok', '--by', 'a', '--policy', 'bad.yaml'],
      'Invalid policy file bad.yaml: line 1: the document: unknown field cooldown',
    ],
  ])('bad input %j: exit 2 before any request', async (args, message) => {
    const { e, dir } = await world();
    fs.writeFileSync(path.join(dir, 'bad.yaml'), 'cooldown: 7d\n');
    const seeded = e.requestLog.records.length;
    const result = await approve(e, dir, ...args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(message);
    expect(e.requestLog.records.length).toBe(seeded);
  });
});
