/**
 * `provider approve … --from <origin>`: a version approved before it is mirrored, verified at its origin as
 * `provider mirror` verifies it (signature, every zip against its signed line and its contents). The record is for
 * the address the version will have in the organization's registry, bound to the origin's SHA256SUMS and key,
 * which the mirror copies byte for byte: `mirror --policy` then admits it where approval is required. A version
 * that does not verify at the origin is exit 3 and the file is not written.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/lockfile/policy.js';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import { buildRelease, mirrorInto, sha, SIGNER_KEY_ID, startOrigin } from '../mirror/origin.js';

const emulator = emulatorPerTest();

function approveFrom(url: string, dir: string, env: Record<string, string>, ...args: string[]) {
  return runCli(
    [
      'approve',
      'acme/example',
      '1.0.0',
      '--from',
      url,
      '--policy',
      'policy.yaml',
      '--reason',
      'reviewed',
      ...args,
    ],
    { cwd: dir, homeDir: dir, env: { NO_COLOR: '1', ...env } },
  );
}

describe('provider approve --from', () => {
  it('verifies at the origin and records the bytes for the registry address; mirror --policy then admits them', async () => {
    const origin = await startOrigin([
      await buildRelease('1.0.0', ['linux_amd64', 'darwin_arm64']),
      await buildRelease('1.1.0', ['linux_amd64']),
    ]);
    const e = await emulator();
    const dir = tempRoot('approve-from');
    const address = `${new URL(e.url).host}/${e.organization}/example`;
    fs.writeFileSync(
      path.join(dir, 'policy.yaml'),
      ['# what enters', 'providers:', `  "${address}":`, '    approval: required  # reviewed', ''].join('\n'),
    );
    const env = { TFE_HOSTNAME: e.url, TFE_ORGANIZATION: e.organization, GITHUB_ACTOR: 'alice' };
    const result = await approveFrom(origin.url, dir, env);
    expect(result.exitCode, result.stderr).toBe(0);
    // Every zip of the version was downloaded and checked, nothing was asked of the registry.
    expect(origin.requests.filter((p) => p.endsWith('.zip')).sort()).toEqual([
      '/registry/v1/providers/acme/example/1.0.0/files/terraform-provider-example_1.0.0_darwin_arm64.zip',
      '/registry/v1/providers/acme/example/1.0.0/files/terraform-provider-example_1.0.0_linux_amd64.zip',
    ]);
    expect(e.requestLog.records).toEqual([]);
    const written = fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8');
    expect(written).toContain('# reviewed');
    expect(parsePolicy(written, 'policy.yaml').providers[0]!.approvals).toEqual([
      expect.objectContaining({
        provider: address,
        version: '1.0.0',
        sha256sums: sha(origin.releases[0]!.sums),
        key: SIGNER_KEY_ID,
        by: 'alice',
      }),
    ]);
    // The same record for the origin's address, which every mirror of it (--to-dir too) decides for.
    const origin_ = `${new URL(origin.url).host}/acme/example`;
    expect(parsePolicy(written, 'policy.yaml').providers[1]).toMatchObject({
      pattern: origin_,
      approvals: [expect.objectContaining({ version: '1.0.0', sha256sums: sha(origin.releases[0]!.sums) })],
    });
    expect(result.stdout).toContain(`recorded for ${origin_} too`);
    // Twice is once.
    expect((await approveFrom(origin.url, dir, env)).exitCode).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8')).toBe(written);

    const mirrored = await mirrorInto(
      origin,
      e,
      dir,
      {},
      '--policy',
      'policy.yaml',
      '--versions',
      '>= 1.0',
      '--json',
    );
    expect(mirrored.exitCode, mirrored.stderr).toBe(7);
    const doc = JSON.parse(mirrored.stdout) as {
      error: { details: { report: { providers: { versions: { version: string; status: string }[] }[] } } };
    };
    expect(doc.error.details.report.providers[0]!.versions.map((v) => [v.version, v.status])).toEqual([
      ['1.0.0', 'mirrored'],
      ['1.1.0', 'held'],
    ]);
  });

  it('a --to-dir mirror counts the record, under approval: required for any address', async () => {
    const origin = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const dir = tempRoot('approve-from');
    fs.writeFileSync(
      path.join(dir, 'policy.yaml'),
      'providers:\n  "*/acme/example": { approval: required }\n',
    );
    const env = { TFE_ORGANIZATION: 'my-org' };
    expect((await approveFrom(origin.url, dir, env)).exitCode).toBe(0);
    const mirrored = await runCli(
      ['mirror', 'acme/example', '--from', origin.url, '--to-dir', 'out', '--policy', 'policy.yaml'],
      { cwd: dir, homeDir: dir, env },
    );
    expect(mirrored.exitCode, mirrored.stderr).toBe(0);
  });

  it('refuses a record the policy refuses anyway, the registry spelled localterraform.com', async () => {
    const origin = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const dir = tempRoot('approve-from');
    const text = 'providers:\n  "localterraform.com/my-org/*": { keys: [B7F05A4C6E0A8E0C] }\n';
    fs.writeFileSync(path.join(dir, 'policy.yaml'), text);
    const result = await approveFrom(origin.url, dir, { TFE_ORGANIZATION: 'my-org' });
    expect(result.exitCode, result.stderr).toBe(3);
    expect(result.stderr).toContain('key-not-allowed');
    expect(fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8')).toBe(text);
  });

  it("without an organization, records the origin's address", async () => {
    const origin = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const dir = tempRoot('approve-from');
    const result = await approveFrom(origin.url, dir, {});
    expect(result.exitCode, result.stderr).toBe(0);
    const policy = parsePolicy(fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8'), 'policy.yaml');
    expect(policy.providers[0]!.approvals[0]!.provider).toBe(`${new URL(origin.url).host}/acme/example`);
  });

  it('an origin that lists no platforms: exit 2 naming --platforms, then the platforms named are verified', async () => {
    const origin = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])], {
      noPlatformsListed: true,
    });
    const dir = tempRoot('approve-from');
    const bare = await approveFrom(origin.url, dir, {});
    expect(bare.exitCode).toBe(2);
    expect(bare.stderr).toContain('--platforms');
    expect(fs.existsSync(path.join(dir, 'policy.yaml'))).toBe(false);
    const named = await approveFrom(origin.url, dir, {}, '--platforms', 'linux_amd64');
    expect(named.exitCode, named.stderr).toBe(0);
    expect(origin.requests.filter((p) => p.endsWith('.zip'))).toHaveLength(1);
  });

  it('a version that does not verify at the origin: exit 3, the file not written', async () => {
    const origin = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])], {
      tamperedZip: '1.0.0 linux_amd64',
    });
    const dir = tempRoot('approve-from');
    fs.writeFileSync(path.join(dir, 'policy.yaml'), 'providers: {}\n');
    const result = await approveFrom(origin.url, dir, {});
    expect(result.exitCode, result.stderr).toBe(3);
    expect(fs.readFileSync(path.join(dir, 'policy.yaml'), 'utf8')).toBe('providers: {}\n');
    expect(result.stderr).toContain('nothing of the version was written');
  });
});
