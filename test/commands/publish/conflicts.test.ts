/**
 * Conflicts and refusals: the registry holds different content for the version (exit 5), or the provider or
 * key is absent and may not be created (exit 4). Each stops the run before any write.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { tempRoot } from '../../helpers/tmp.js';
import {
  addGpgKey,
  clients,
  createPlatform,
  createProvider,
  createVersion,
  emulatorPerTest,
  expectSuccess,
  keyIdOf,
  linkOf,
  loadRelease,
  secretKey,
  upload,
} from '../../helpers/emulator/index.js';
import { signDetached } from '../../release/helpers.js';
import { jsonOf, publish, writeRequests, writes } from './helpers.js';
import { aStringContaining } from '../../helpers/matchers.js';

const emulator = emulatorPerTest();
const fixture = loadRelease();
const signatures = path.join(REPO_ROOT, 'fixtures', 'signatures');

/** Provider, signer key and a version with the given attributes; returns the version document. */
async function seedVersion(e: Emulator, attributes: Record<string, unknown> = {}): Promise<unknown> {
  const { owner } = clients(e);
  await createProvider(owner, e.organization, 'example');
  await addGpgKey(owner, e.organization, 'signer');
  return createVersion(owner, e.organization, 'example', {
    version: '1.2.3',
    'key-id': fixture.keyId,
    protocols: ['6.0'],
    ...attributes,
  });
}

/** Runs publish after seeding and expects exit 5 with no write at all. */
async function expectConflict(
  e: Emulator,
  message: RegExp | string,
  deleteCommand = 'provider delete 1.2.3',
): Promise<string> {
  e.requestLog.clear();
  const result = await publish(e);
  expect(result.exitCode, result.stderr).toBe(5);
  expect(writeRequests(e)).toEqual([]);
  expect(result.stderr).toContain('holds different content than the release (nothing was written)');
  expect(result.stderr).toMatch(message);
  expect(result.stderr).toContain(`\`${deleteCommand}\``);
  return result.stderr;
}

describe('provider publish conflicts (exit 5, nothing written)', () => {
  it('a version with another key id', async () => {
    const e = await emulator();
    await seedVersion(e, { 'key-id': keyIdOf('other') });
    await expectConflict(
      e,
      `version 1.2.3: the registry's version has key-id ${keyIdOf('other')}; the release is signed by key ${fixture.keyId}`,
    );
  });

  it('a version with other protocols', async () => {
    const e = await emulator();
    await seedVersion(e, { protocols: ['5.0'] });
    await expectConflict(
      e,
      "version 1.2.3: the registry's version declares protocols 5.0; the release declares 6.0",
    );
  });

  it('a platform with another shasum (deleting that platform is enough)', async () => {
    const e = await emulator();
    await seedVersion(e);
    const zip = fixture.zip('linux', 'amd64');
    await createPlatform(clients(e).owner, e.organization, 'example', '1.2.3', {
      ...zip,
      shasum: 'e'.repeat(64),
    });
    await expectConflict(
      e,
      /linux_amd64: the registry's platform has shasum e{64}/,
      'provider delete 1.2.3 --platform linux_amd64',
    );
  });

  it('a platform with another filename', async () => {
    const e = await emulator();
    await seedVersion(e);
    const zip = fixture.zip('darwin', 'arm64');
    await createPlatform(clients(e).owner, e.organization, 'example', '1.2.3', {
      ...zip,
      filename: 'provider_darwin_arm64.zip',
    });
    await expectConflict(
      e,
      "darwin_arm64: the registry's platform has filename provider_darwin_arm64.zip",
      'provider delete 1.2.3 --platform darwin_arm64',
    );
  });

  it('an uploaded SHA256SUMS with other bytes', async () => {
    const e = await emulator();
    const version = await seedVersion(e);
    const other = fs.readFileSync(path.join(signatures, 'over-other-bytes.SHA256SUMS'));
    expectSuccess(await upload(linkOf(version, 'shasums-upload'), other));
    await expectConflict(
      e,
      `terraform-provider-example_1.2.3_SHA256SUMS: the registry holds another SHA256SUMS (${other.length} bytes)`,
    );
  });

  it('an uploaded signature that does not verify over the local SHA256SUMS', async () => {
    const e = await emulator();
    const version = await seedVersion(e);
    expectSuccess(
      await upload(
        linkOf(version, 'shasums-sig-upload'),
        fs.readFileSync(path.join(signatures, 'by-other.sig')),
      ),
    );
    await expectConflict(
      e,
      /SHA256SUMS\.sig: the registry's signature does not verify over the release's SHA256SUMS/,
    );
  });

  it('gives the conflicts in the JSON error document', async () => {
    const e = await emulator();
    await seedVersion(e, { protocols: ['5.0', '6.0'] });
    e.requestLog.clear();
    const result = await publish(e, ['--json']);
    expect(result.exitCode).toBe(5);
    const doc = jsonOf(result) as {
      ok: boolean;
      error: { code: string; hint: string; details: { conflicts: unknown[] } };
    };
    expect(doc.ok).toBe(false);
    expect(doc.error.code).toBe('conflict');
    expect(doc.error.hint).toContain('provider delete 1.2.3');
    expect(doc.error.details.conflicts).toEqual([
      { subject: 'version 1.2.3', message: aStringContaining('declares protocols 5.0, 6.0') },
    ]);
    expect(writeRequests(e)).toEqual([]);
  });

  it('shows the conflict in a dry run and fails it too', async () => {
    const e = await emulator();
    await seedVersion(e, { protocols: ['5.0'] });
    e.requestLog.clear();
    const result = await publish(e, ['--dry-run']);
    expect(result.exitCode).toBe(5);
    expect(result.stdout).toContain('version    1.2.3 (key');
    expect(result.stdout).toContain('CONFLICT');
    expect(result.stdout).toContain('Conflicts (the registry holds different content):');
    expect(writeRequests(e)).toEqual([]);
  });
});

describe('provider publish: the step summary of a conflict', () => {
  it("puts the registry's words in a code block, never as Markdown", async () => {
    const e = await emulator();
    await seedVersion(e);
    // A registry answering a key id no client could register: a link, HTML and a line that starts a table row.
    const hostile = '[click](https://evil.example) <img src=x>\n| forged | row |';
    e.store.data.versions.find((v) => v.version === '1.2.3')!.keyId = hostile;
    const summary = path.join(tempRoot(), 'summary.md');
    const env = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary };
    e.requestLog.clear();
    const result = await publish(e, ['--dry-run'], { env });
    expect(result.exitCode, result.stderr).toBe(5);
    expect(writeRequests(e)).toEqual([]);
    const text = fs.readFileSync(summary, 'utf8');
    expect(text).toContain(
      [
        '**Conflicts:**',
        '',
        "    version 1.2.3: the registry's version has key-id [click](https://evil.example) <img src=x>",
        `    | forged | row |; the release is signed by key ${fixture.keyId}`,
        '',
      ].join('\n'),
    );
    for (const line of text.split('\n').filter((l) => l.includes('evil.example') || l.includes('forged'))) {
      expect(line.startsWith('    '), line).toBe(true);
    }
  });
});

describe('provider publish accepts what is equivalent', () => {
  it('an uploaded signature with other bytes that still verifies (re-signed by the same key)', async () => {
    const e = await emulator();
    const version = await seedVersion(e);
    const resigned = await signDetached(fixture.sums, secretKey('signer'));
    expect(Buffer.from(resigned).equals(fixture.sig)).toBe(false);
    expectSuccess(await upload(linkOf(version, 'shasums-sig-upload'), resigned));
    e.requestLog.clear();
    const result = await publish(e);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(writes(e)).not.toContain('upload signature');
    expect(result.stdout).toContain(
      'signature  terraform-provider-example_1.2.3_SHA256SUMS.sig: already there',
    );
  });
});

describe('provider publish refusals (exit 4, nothing written)', () => {
  it('an absent provider with --no-create-provider', async () => {
    const e = await emulator();
    const result = await publish(e, ['--no-create-provider']);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('Provider example-org/example does not exist on');
    expect(result.stderr).toContain('Run without --no-create-provider');
    expect(writeRequests(e)).toEqual([]);
  });

  it('an unregistered key with --no-register-key names the command that registers it', async () => {
    const e = await emulator();
    await createProvider(clients(e).owner, e.organization, 'example');
    e.requestLog.clear();
    const result = await publish(e, ['--no-register-key']);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(
      `Signing key ${fixture.keyId} is not registered for namespace example-org`,
    );
    expect(result.stderr).toMatch(/provider gpg-keys add \S*fixtures\/keys\/signer\.pub\.asc/);
    expect(writeRequests(e)).toEqual([]);
  });

  it('a token that may read but not write (the platform answers 404)', async () => {
    const e = await emulator();
    const result = await publish(e, [], { env: { TFE_TOKEN: e.memberToken } });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(
      'POST /api/v2/organizations/example-org/registry-providers was refused: 404',
    );
    expect(result.stderr).toContain('Manage Private Registry');
    expect(e.store.data.providers).toEqual([]);
  });
});
