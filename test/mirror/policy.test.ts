/**
 * `provider mirror --policy`: the policy decides before anything of a version is fetched (a cooldown counted from
 * the origin's `published_at`, `approval: required`, `versions`), and again once its signature is verified (a
 * pinned key, an approval bound to the SHA256SUMS and key), before anything of it is written. A held version is
 * listed with its reason and the date it becomes eligible, and the run exits 7 when nothing failed; a refused one
 * is exit 3. Into a private registry, the emulator's request log proves nothing of a held or refused version was
 * sent.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { emulatorPerTest } from '../helpers/emulator/index.js';
import { tempRoot } from '../helpers/tmp.js';
import {
  buildRelease,
  hostDir,
  mirrorInto,
  resign,
  sha,
  SIGNER_KEY_ID,
  startOrigin,
  type OriginRelease,
} from './origin.js';

const DAY = 86_400_000;
const emulator = emulatorPerTest();

/** `release` as published `days` ago by its origin. */
function published(release: OriginRelease, days: number): OriginRelease {
  return { ...release, publishedAt: new Date(Date.now() - days * DAY).toISOString() };
}

function writePolicy(cwd: string, ...lines: string[]): void {
  fs.writeFileSync(path.join(cwd, 'policy.yaml'), ['providers:', ...lines, ''].join('\n'));
}

async function mirror(url: string, cwd: string, ...args: string[]) {
  return runCli(
    ['mirror', 'acme/example', '--from', url, '--to-dir', 'out', '--policy', 'policy.yaml', ...args],
    { cwd, homeDir: cwd, env: { NO_COLOR: '1' } },
  );
}

interface Report {
  providers: {
    versions: {
      version: string;
      status: string;
      policy: { outcome: string; rule: string | null; reason: string; eligibleAt: string | null } | null;
    }[];
  }[];
  summary: Record<string, number>;
}

/** The run's report: the document of a run that succeeded, else its error's. */
function reportOf(stdout: string): Report {
  const doc = JSON.parse(stdout.trim()) as Report & { error?: { details: { report: Report } } };
  return doc.error === undefined ? doc : doc.error.details.report;
}

const versionsIn = (cwd: string, url: string): string[] => {
  const dir = path.join(cwd, 'out', hostDir(url), 'acme', 'example');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
};

describe('provider mirror --policy', () => {
  it('min-age 7d: holds a version published 2 days ago (exit 7, its date shown), copies one of 10 days', async () => {
    const origin = await startOrigin([
      published(await buildRelease('1.0.0', ['linux_amd64']), 10),
      published(await buildRelease('1.1.0', ['linux_amd64']), 2),
    ]);
    const cwd = tempRoot();
    writePolicy(cwd, '  "*/acme/example": { min-age: 7d }');
    const result = await mirror(origin.url, cwd, '--versions', '>= 1.0.0', '--json');
    expect(result.exitCode, result.stderr).toBe(7);
    expect(versionsIn(cwd, origin.url)).toEqual(['1.0.0']);
    const eligible = new Date(Date.parse(origin.releases[1]!.publishedAt!) + 7 * DAY).toISOString();
    const report = reportOf(result.stdout);
    expect(report.providers[0]!.versions).toEqual([
      expect.objectContaining({
        version: '1.0.0',
        status: 'mirrored',
        policy: expect.objectContaining({ outcome: 'admitted', rule: null }) as unknown,
      }),
      expect.objectContaining({
        version: '1.1.0',
        status: 'held',
        policy: expect.objectContaining({ rule: 'version-in-cooldown', eligibleAt: eligible }) as unknown,
      }),
    ]);
    expect(report.summary).toMatchObject({ mirrored: 1, held: 1, failed: 0 });
    // Nothing of the held version was fetched: not its downloads, not its files.
    expect(origin.requests.filter((p) => p.includes('1.1.0'))).toEqual([
      '/registry/v1/providers/acme/example/1.1.0',
    ]);

    const text = await mirror(origin.url, cwd, '--versions', '>= 1.0.0');
    expect(text.exitCode).toBe(7);
    expect(text.stdout).toContain(
      `1.1.0  HELD by the policy (nothing written)  linux_amd64  version-in-cooldown (eligible ${eligible})`,
    );
    expect(text.stdout).toContain('1 held, 0 refused by the policy');
    expect(text.stderr).toContain(`The policy holds one version, and nothing of it was written`);
  });

  it('holds a version whose origin gives no date to count from (fail closed)', async () => {
    const origin = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const cwd = tempRoot();
    writePolicy(cwd, '  "*/acme/example": { min-age: 1d }');
    const result = await mirror(origin.url, cwd, '--json');
    expect(result.exitCode, result.stderr).toBe(7);
    expect(reportOf(result.stdout).providers[0]!.versions[0]!.policy?.reason).toContain(
      'no valid publication date',
    );
    expect(versionsIn(cwd, origin.url)).toEqual([]);
  });

  it('a pinned key refuses a version validly signed by another key: exit 3, nothing sent to the registry', async () => {
    const origin = await startOrigin([
      published(await buildRelease('1.0.0', ['linux_amd64'], ['6.0'], 'other'), 30),
    ]);
    const e = await emulator();
    const cwd = tempRoot();
    writePolicy(cwd, `  "*/acme/example": { keys: [${SIGNER_KEY_ID}] }`);
    const result = await mirrorInto(origin, e, cwd, {}, '--policy', 'policy.yaml', '--json');
    expect(result.exitCode, result.stderr).toBe(3);
    const version = reportOf(result.stdout).providers[0]!.versions[0]!;
    expect(version).toMatchObject({
      status: 'refused',
      policy: { outcome: 'refused', rule: 'key-not-allowed' },
    });
    expect(e.requestLog.records.filter((r) => r.method !== 'GET')).toEqual([]);
    // A key made of a primary and a signing subkey is pinned by the subkey's fingerprint as well as by its primary's.
    const bySubkey = await startOrigin([
      published(await buildRelease('1.0.0', ['linux_amd64'], ['6.0'], 'subkey'), 30),
    ]);
    const subkey = fs.readFileSync(path.join('fixtures', 'keys', 'subkey.signing-subkey.fpr'), 'utf8').trim();
    writePolicy(cwd, `  "*/acme/example": { keys: [${subkey}] }`);
    const pinned = await mirror(bySubkey.url, cwd);
    expect(pinned.exitCode, pinned.stderr).toBe(0);
    // The same key pinned admits it.
    const other = fs.readFileSync(path.join('fixtures', 'keys', 'other.keyid'), 'utf8').trim();
    writePolicy(cwd, `  "*/acme/example": { keys: [${other}] }`);
    const admitted = await mirrorInto(origin, e, cwd, {}, '--policy', 'policy.yaml');
    expect(admitted.exitCode, admitted.stderr).toBe(0);
  });

  it('approval: required admits exactly the approved bytes, under the address it gets in the registry', async () => {
    const origin = await startOrigin([
      published(await buildRelease('1.0.0', ['linux_amd64']), 30),
      published(await buildRelease('1.1.0', ['linux_amd64']), 30),
    ]);
    const e = await emulator();
    const cwd = tempRoot();
    const address = `${new URL(e.url).host}/${e.organization}/example`;
    const record = (sums: string) => [
      '    approvals:',
      '      - version: 1.0.0',
      `        sha256sums: "${sums}"`,
      `        key: ${SIGNER_KEY_ID}`,
      '        by: alice',
      '        at: "2026-11-27T09:00:00Z"',
      '        reason: reviewed',
    ];
    writePolicy(cwd, `  "${address}":`, '    approval: required', ...record(sha(origin.releases[0]!.sums)));
    const result = await mirrorInto(
      origin,
      e,
      cwd,
      {},
      '--policy',
      'policy.yaml',
      '--versions',
      '>= 1.0',
      '--json',
    );
    expect(result.exitCode, result.stderr).toBe(7);
    const versions = reportOf(result.stdout).providers[0]!.versions;
    expect(versions.map((v) => [v.version, v.status, v.policy?.rule ?? null])).toEqual([
      ['1.0.0', 'mirrored', null],
      ['1.1.0', 'held', 'version-not-approved'],
    ]);
    expect(versions[0]!.policy?.reason).toContain('approved by alice on 2026-11-27: reviewed');

    // A record for other bytes refuses the version: exit 3, and the registry is not written to.
    const f = await emulator();
    writePolicy(
      cwd,
      `  "${new URL(f.url).host}/${f.organization}/example":`,
      '    approval: required',
      ...record('0'.repeat(64)),
    );
    const refused = await mirrorInto(
      origin,
      f,
      cwd,
      {},
      '--policy',
      'policy.yaml',
      '--versions',
      '1.0.0',
      '--json',
    );
    expect(refused.exitCode, refused.stderr).toBe(3);
    expect(reportOf(refused.stdout).providers[0]!.versions[0]).toMatchObject({
      status: 'refused',
      policy: { rule: 'approval-does-not-match' },
    });
    expect(f.requestLog.records.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it("refuses a version outside the policy's versions before anything of it is fetched", async () => {
    const origin = await startOrigin([await buildRelease('2.0.0', ['linux_amd64'])]);
    const cwd = tempRoot();
    writePolicy(cwd, '  "*/acme/example": { versions: "~> 1.0" }');
    const result = await mirror(origin.url, cwd, '--json');
    expect(result.exitCode, result.stderr).toBe(3);
    expect(reportOf(result.stdout).providers[0]!.versions[0]).toMatchObject({
      status: 'refused',
      policy: { rule: 'version-not-allowed' },
    });
    expect(origin.requests.filter((p) => p.includes('2.0.0'))).toEqual([]);
  });

  it('an unknown rule is exit 2 naming the file and line, before any request', async () => {
    const origin = await startOrigin([await buildRelease('1.0.0', ['linux_amd64'])]);
    const cwd = tempRoot();
    writePolicy(cwd, '  "*/acme/example":', '    cooldown: 7d');
    const result = await mirror(origin.url, cwd);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Invalid policy file policy.yaml: line 3');
    expect(result.stderr).toContain('unknown field cooldown');
    expect(origin.requests).toEqual([]);
    expect(versionsIn(cwd, origin.url)).toEqual([]);
  });
});

describe('provider mirror --policy, at every door of a version', () => {
  it('a version already there, and a dry run, are held to the signed facts too', async () => {
    const origin = await startOrigin([
      published(await buildRelease('1.0.0', ['linux_amd64'], ['6.0'], 'other'), 30),
    ]);
    const cwd = tempRoot();
    const first = await runCli(['mirror', 'acme/example', '--from', origin.url, '--to-dir', 'out'], {
      cwd,
      homeDir: cwd,
    });
    expect(first.exitCode, first.stderr).toBe(0);
    writePolicy(cwd, `  "*/acme/example": { keys: [${SIGNER_KEY_ID}] }`);
    for (const args of [['--json'], ['--dry-run', '--json']]) {
      const result = await mirror(origin.url, cwd, ...args);
      expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(3);
      expect(reportOf(result.stdout).providers[0]!.versions[0]).toMatchObject({
        status: 'refused',
        policy: { outcome: 'refused', rule: 'key-not-allowed' },
      });
    }
    // A dry run of a version not there yet reads its signed list (no zip) and decides with it.
    const fresh = tempRoot();
    writePolicy(fresh, `  "*/acme/example": { keys: [${SIGNER_KEY_ID}] }`);
    const planned = await mirror(origin.url, fresh, '--dry-run', '--json');
    expect(planned.exitCode, planned.stderr).toBe(3);
    expect(reportOf(planned.stdout).providers[0]!.versions[0]!.status).toBe('refused');
    expect(versionsIn(fresh, origin.url)).toEqual([]);
    const text = await mirror(origin.url, cwd);
    expect(text.stderr).toContain('One failed and nothing of it was written: ');
    expect(text.stderr).toContain('/acme/example 1.0.0 (refused by the policy)');
    expect(text.stderr).not.toContain('the same command again mirrors');
    expect(text.stderr).not.toContain('mirrored or already there');
  });

  it('a copy there whose origin now signs with another key is refused by the pin, not a conflict', async () => {
    const release = published(await buildRelease('1.0.0', ['linux_amd64']), 30);
    const origin = await startOrigin([release]);
    const cwd = tempRoot();
    writePolicy(cwd, `  "*/acme/example": { keys: [${SIGNER_KEY_ID}] }`);
    expect((await mirror(origin.url, cwd)).exitCode).toBe(0);
    origin.releases[0] = { ...(await resign(release, 'other')), publishedAt: release.publishedAt };
    const again = await mirror(origin.url, cwd, '--json');
    expect(again.exitCode, again.stderr).toBe(3);
    expect(reportOf(again.stdout).providers[0]!.versions[0]).toMatchObject({
      status: 'refused',
      policy: { rule: 'key-not-allowed' },
    });
  });

  it("into a registry, the configuration's policy is not applied a second time by the publish", async () => {
    const origin = await startOrigin([published(await buildRelease('1.0.0', ['linux_amd64']), 30)]);
    const e = await emulator();
    const cwd = tempRoot();
    // The configuration names a policy that would refuse the key; --policy names one that admits it.
    fs.writeFileSync(path.join(cwd, 'refuse.yaml'), 'providers:\n  "*/*/*": { keys: [B7F05A4C6E0A8E0C] }\n');
    fs.writeFileSync(path.join(cwd, '.providerrc.json'), JSON.stringify({ policy: 'refuse.yaml' }));
    writePolicy(cwd, `  "*/acme/example": { keys: [${SIGNER_KEY_ID}] }`);
    const result = await mirrorInto(origin, e, cwd, {}, '--policy', 'policy.yaml');
    expect(result.exitCode, result.stderr).toBe(0);
    // Without --policy, the configuration's applies, at the mirror's door.
    const f = await emulator();
    const refused = await mirrorInto(origin, f, cwd, {}, '--json');
    expect(refused.exitCode, refused.stderr).toBe(3);
    expect(reportOf(refused.stdout).providers[0]!.versions[0]!.status).toBe('refused');
  });
});
